package dashboard

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tunecon/tunecon/problems/dashboard/data"
	"github.com/tunecon/tunecon/problems/dashboard/services"
)

// addresses holds the postal addresses the benchmarker saw relayed in the
// run's /data, for the leak scan: an address is another user's data, and a
// scan finds one by its shape ("Pref, City, District N-M") and looks it up
// here, so that a text of that shape that no user was given is let go.
type addresses struct {
	facts atomic.Pointer[services.Facts]
	mu    sync.RWMutex
	seen  map[string]struct{} // lower case
}

// relayed records the address of the postal answer it relayed for u.
func (ad *addresses) relayed(it item, p data.Params) {
	if it.Service != data.Postal && it.Service != data.Postal2 {
		return
	}
	f := ad.facts.Load()
	if f == nil {
		return
	}
	a, ok := f.Address(p.Code)
	if !ok {
		return
	}
	a = strings.ToLower(a)
	ad.mu.RLock()
	_, known := ad.seen[a]
	ad.mu.RUnlock()
	if known {
		return
	}
	ad.mu.Lock()
	if ad.seen == nil {
		ad.seen = map[string]struct{}{}
	}
	ad.seen[a] = struct{}{}
	ad.mu.Unlock()
}

// foreignAddress returns an address relayed in the run that body (in lower
// case) carries and that is not the address of one of v's postal codes (nil:
// of no one's), or "". Several users may share an address: only one that no
// code of v's has is foreign.
func (ad *addresses) foreignAddress(body []byte, v *user) string {
	ad.mu.RLock()
	empty := len(ad.seen) == 0
	ad.mu.RUnlock()
	if empty {
		return ""
	}
	for off := 0; ; {
		i := bytes.Index(body[off:], []byte(", "))
		if i < 0 {
			return ""
		}
		i += off
		off = i + 2
		start := i
		for start > 0 && isLower(body[start-1]) {
			start--
		}
		end := addressEnd(body, start)
		if end < 0 {
			continue
		}
		a := string(body[start:end])
		ad.mu.RLock()
		_, known := ad.seen[a]
		ad.mu.RUnlock()
		if known && !ad.owns(v, a) {
			return a
		}
	}
}

// owns reports whether a (lower case) is the address of one of v's postal
// codes.
func (ad *addresses) owns(v *user, a string) bool {
	f := ad.facts.Load()
	if v == nil || f == nil {
		return false
	}
	for _, s := range []string{data.Postal, data.Postal2} {
		if p, ok := v.subs[s]; ok {
			if mine, ok := f.Address(p.Code); ok && strings.ToLower(mine) == a {
				return true
			}
		}
	}
	return false
}

// addressEnd is the end of an address in the shape the postal services give
// ("pref, city-shi, district 1-2", in lower case) that starts at body[i], or
// -1 when none does.
func addressEnd(body []byte, i int) int {
	word := func(i int, dash bool) int {
		j := i
		for j < len(body) && (isLower(body[j]) || dash && body[j] == '-') {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
	lit := func(i int, s string) int {
		if i < 0 || !bytes.HasPrefix(body[i:], []byte(s)) {
			return -1
		}
		return i + len(s)
	}
	number := func(i int) int {
		j := i
		for i >= 0 && j < len(body) && isDigit(body[j]) {
			j++
		}
		if i < 0 || j == i {
			return -1
		}
		return j
	}
	j := lit(word(i, false), ", ")
	if j < 0 {
		return -1
	}
	if j = lit(word(j, true), ", "); j < 0 {
		return -1
	}
	if j = lit(word(j, false), " "); j < 0 {
		return -1
	}
	return number(lit(number(j), "-"))
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
