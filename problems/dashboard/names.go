package dashboard

import (
	"bytes"
	"slices"
	"sync"

	"github.com/tunecon/tunecon/problems/dashboard/data"
	"github.com/tunecon/tunecon/problems/dashboard/services"
)

// The leak scan's names (MANUAL: "Users, grades and sessions"): a surname or given
// name the services gave for one user's query is that user's data. A name is
// only a word, and short ones are English words too ("note", "rose"), so the
// scan looks for the long ones alone, leaves out those a place name can be
// made of (an address's words), and takes two of another user's in one text
// for a leak: one word that happens to be a name is a coincidence, two are
// not.
const (
	// minLeakName is the length of the shortest name the scan looks for.
	minLeakName = 6
	// leakNames is how many of another user's names one text must carry.
	leakNames = 2
)

// relayedNames holds the long names the benchmarker saw relayed in the run's
// /data, in answers to surname and givenname queries.
type relayedNames struct {
	mu sync.RWMutex
	// seen holds every name relayed: true for one the scan looks for, false
	// for one too short or that a place name can be (services.PlaceLike).
	seen map[string]bool
}

// relayed records the names of the names answer it relayed for a query p.Q.
func (rn *relayedNames) relayed(f *services.Facts, it item, p data.Params) {
	if f == nil || it.Service != data.Surname && it.Service != data.GivenName {
		return
	}
	search := f.SearchSurnames
	if it.Service == data.GivenName {
		search = f.SearchGivenNames
	}
	var add []string
	rn.mu.RLock()
	for _, name := range search(p.Q) {
		if _, ok := rn.seen[name]; !ok {
			add = append(add, name)
		}
	}
	rn.mu.RUnlock()
	if len(add) == 0 {
		return
	}
	rn.mu.Lock()
	if rn.seen == nil {
		rn.seen = map[string]bool{}
	}
	for _, name := range add {
		rn.seen[name] = len(name) >= minLeakName && !services.PlaceLike(name)
	}
	rn.mu.Unlock()
}

// foreignNames returns leakNames distinct names relayed in the run that body
// (in lower case) carries as words and that none of v's queries, now or
// earlier in the run (nil: no one's), finds, or nil when it carries fewer. A word one of v's queries
// finds is let go before it is looked up: most names an answer carries are
// its viewer's own.
func (rn *relayedNames) foreignNames(body []byte, v *user) []string {
	rn.mu.RLock()
	defer rn.mu.RUnlock()
	if len(rn.seen) == 0 {
		return nil
	}
	mine := queries(v)
	var found []string
	for i := 0; i < len(body); {
		if !isLower(body[i]) {
			i++
			continue
		}
		j := i
		for j < len(body) && isLower(body[j]) {
			j++
		}
		if word := body[i:j]; len(word) >= minLeakName && !hasAnyPrefix(word, mine) && rn.seen[string(word)] &&
			!slices.Contains(found, string(word)) {
			if found = append(found, string(word)); len(found) == leakNames {
				return found
			}
		}
		i = j
	}
	return nil
}

// queries returns v's surname and givenname queries, and those it had
// earlier in the run (nil: none).
func queries(v *user) [][]byte {
	if v == nil {
		return nil
	}
	var qs [][]byte
	for _, s := range []string{data.Surname, data.GivenName} {
		if p, ok := v.subs[s]; ok && p.Q != "" {
			qs = append(qs, []byte(p.Q))
		}
	}
	for _, q := range v.oldQueries {
		qs = append(qs, []byte(q))
	}
	return qs
}

func hasAnyPrefix(word []byte, prefixes [][]byte) bool {
	for _, p := range prefixes {
		if bytes.HasPrefix(word, p) {
			return true
		}
	}
	return false
}
