package engine

import (
	"fmt"
	"runtime"
	"sort"
	"sync/atomic"
)

// ledger is a tally of weighted score tags. Each tag's count is split over
// shards so that many goroutines can add without contending on one lock or
// one cache line; a caller passes a shard hint (its user id).
type ledger struct {
	tags    []string
	weights []float64
	index   map[string]int // read-only after construction
	shards  []ledgerShard
	open    atomic.Bool // only the load phase scores
	// cached counts the scored actions whose answer came from the user's
	// own cache, which earn nothing.
	cached atomic.Int64
}

type ledgerShard struct {
	counts []atomic.Int64
	_      [64]byte // keeps neighbouring shards' headers off one cache line
}

func newLedger(weights map[string]float64) *ledger {
	l := &ledger{index: make(map[string]int, len(weights))}
	for tag := range weights {
		l.tags = append(l.tags, tag)
	}
	sort.Strings(l.tags)
	for i, tag := range l.tags {
		l.index[tag] = i
		l.weights = append(l.weights, weights[tag])
	}
	n := 4 * runtime.GOMAXPROCS(0)
	l.shards = make([]ledgerShard, n)
	for i := range l.shards {
		l.shards[i].counts = make([]atomic.Int64, len(l.tags))
	}
	return l
}

// add counts a tag n times, or, for n = 0, one action that earned nothing
// (its answer came from the user's cache), and returns the raw points it
// earned; it fails only for a tag the scenario did not declare.
func (l *ledger) add(hint int, tag string, n int64) (float64, error) {
	i, ok := l.index[tag]
	if !ok {
		return 0, Internalf("score-tag", "score tag %q has no weight in the scenario's rules", tag)
	}
	if !l.open.Load() {
		return 0, nil
	}
	if n == 0 {
		l.cached.Add(1)
		return 0, nil
	}
	if hint < 0 {
		hint = -hint
	}
	l.shards[hint%len(l.shards)].counts[i].Add(n)
	return float64(n) * l.weights[i], nil
}

// counts returns the count of every declared tag.
func (l *ledger) counts() map[string]int64 {
	out := make(map[string]int64, len(l.tags))
	for i, tag := range l.tags {
		var sum int64
		for s := range l.shards {
			sum += l.shards[s].counts[i].Load()
		}
		out[tag] = sum
	}
	return out
}

// raw is Σ count × weight.
func (l *ledger) raw() float64 {
	var total float64
	for i := range l.tags {
		var sum int64
		for s := range l.shards {
			sum += l.shards[s].counts[i].Load()
		}
		total += float64(sum) * l.weights[i]
	}
	return total
}

func (l *ledger) String() string { return fmt.Sprintf("ledger(%d tags)", len(l.tags)) }
