package services

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tunecon/tunecon/kit/datagen"
)

// TokenValidity is how long a onetime token is valid after it was issued (the
// benchmarker checks it: see CheckOnetime).
const TokenValidity = 16 * time.Second

// ErrOnetime is the error of a onetime token that this Services did not issue
// for the key and req it is checked against (forged, altered, malformed, or
// another user's).
var ErrOnetime = errors.New("onetime token not issued by the security service for this key and req")

// The tags that keep the two uses of the secret apart: no onetime token is ever
// an attacked key, whatever the parameters.
const (
	tagOnetime  = "onetime|"
	tagAttacked = "attacked|"
)

// sign returns the hex HMAC-SHA256 of msg under the Services' secret.
func (s *Services) sign(msg string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// onetime returns the onetime token of (key, req) issued at issuedMs: "<issued
// Unix ms>.<signature>".
func (s *Services) onetime(key, req string, issuedMs int64) string {
	ms := strconv.FormatInt(issuedMs, 10)
	return ms + "." + s.sign(tagOnetime+key+"|"+req+"|"+ms)
}

// CheckOnetime verifies that onetime was issued by this Services for (key, req)
// and returns when it was issued, to the millisecond. It does not judge the
// age: the caller compares the issue time with when its request was sent,
// allowing TokenValidity.
func (s *Services) CheckOnetime(key, req, onetime string) (issued time.Time, err error) {
	ms, _, ok := strings.Cut(onetime, ".")
	issuedMs, perr := strconv.ParseInt(ms, 10, 64)
	if !ok || perr != nil {
		return time.Time{}, ErrOnetime
	}
	// Comparing the whole token, not only the signature, also refuses another
	// spelling of the same time ("+0001764…").
	if !hmac.Equal([]byte(onetime), []byte(s.onetime(key, req, issuedMs))) {
		return time.Time{}, ErrOnetime
	}
	return time.UnixMilli(issuedMs).UTC(), nil
}

// attackedKeyLen is how many hex characters of a signature an attacked key
// keeps.
const attackedKeyLen = 40

// AttackedKeys returns the three keys the attacked service answers for token
// while version seq is current.
func (s *Services) AttackedKeys(token string, seq int) [3]string {
	var keys [3]string
	for i := range keys {
		keys[i] = s.sign(tagAttacked + token + "|" + strconv.Itoa(seq) + "|" + strconv.Itoa(i+1))[:attackedKeyLen]
	}
	return keys
}

// Version is one version of the attacked list: the Seq-th (from 0), current
// from Start (a whole second) until End, the next version's start.
type Version struct {
	Seq        int
	Start, End time.Time
}

// AttackedAt returns the version of the attacked list current at t (version 0
// for a t before the first). It draws the schedule as far as t: 8 bytes of
// memory for every 2 to 8 s after Start.
func (s *Services) AttackedAt(t time.Time) Version { return s.schedule.at(t) }

// AttackedVersion returns the version that began at updatedAt (compared to the
// millisecond), and false when no version began then or it is later than the
// Services' clock says now.
func (s *Services) AttackedVersion(updatedAt time.Time) (Version, bool) {
	if updatedAt.After(s.now()) {
		return Version{}, false // not begun: and no schedule is drawn for a time far ahead
	}
	v := s.schedule.at(updatedAt)
	return v, v.Start.UnixMilli() == updatedAt.UnixMilli()
}

// The attacked list changes every minGap to maxGap whole seconds.
const (
	minGap = 2
	maxGap = 8
)

// kindAttacked is the stream kind of the attacked list's schedule.
const kindAttacked = 0x61747461636b // "attack"

// schedule is the attacked list's versions, drawn from the Config's seed as far
// as they have been asked for.
type schedule struct {
	mu     sync.Mutex
	gen    datagen.Gen
	starts []int64 // the Unix second each version starts at, ascending; always at least two
}

func newSchedule(seed uint64, first time.Time) *schedule {
	sc := &schedule{gen: datagen.Stream(seed, kindAttacked, 0), starts: []int64{first.Unix()}}
	sc.grow()
	return sc
}

// grow draws the next version's start.
func (sc *schedule) grow() {
	last := sc.starts[len(sc.starts)-1]
	sc.starts = append(sc.starts, last+minGap+int64(sc.gen.Intn(maxGap-minGap+1)))
}

func (sc *schedule) at(t time.Time) Version {
	ms := t.UnixMilli()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for sc.starts[len(sc.starts)-1]*1000 <= ms {
		sc.grow()
	}
	// The first start after t, minus one; the loop above makes it never the
	// last.
	i := sort.Search(len(sc.starts), func(i int) bool { return sc.starts[i]*1000 > ms }) - 1
	i = max(i, 0)
	return Version{Seq: i, Start: time.Unix(sc.starts[i], 0).UTC(), End: time.Unix(sc.starts[i+1], 0).UTC()}
}
