package leagues

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/tunecon/tunecon/engine"
)

// What a viewer may not see (MANUAL: "What no answer may carry"), scanned in
// every answer the app gives every agent of the run, whatever its status,
// before anyone reads it:
//
//   - on a tenant's host, no id of another tenant's player or competition,
//     under any key that ends in "id";
//   - in a refusal (401, 403), no id of any player or competition at all: its
//     viewer is nobody, or may not ask;
//   - in any error (4xx, 5xx), no player's display name.
//
// The scans are one pass over the body: the ids are found by their keys and
// looked up in a table indexed by id, and the names (two words) in a set,
// only in error answers, which are small.

// ownerSlack is how many ids past the initial data's the owner table holds;
// ids above it are not looked up (the generator's ceiling catches them).
const ownerSlack = 1 << 21

// owners says which tenant owns each id of a player or a competition.
type owners struct {
	tenant  []atomic.Int32 // by id; 0: nobody's
	namesMu sync.RWMutex
	names   map[string]bool // every player's display name
}

func newOwners(maxID int64) *owners {
	return &owners{tenant: make([]atomic.Int32, maxID+1+ownerSlack), names: map[string]bool{}}
}

// own records id as tenant's.
func (o *owners) own(id, tenant int64) {
	if id > 0 && id < int64(len(o.tenant)) {
		o.tenant[id].Store(int32(tenant))
	}
}

// owner returns the tenant that owns id, 0 for none.
func (o *owners) owner(id int64) int64 {
	if id <= 0 || id >= int64(len(o.tenant)) {
		return 0
	}
	return int64(o.tenant[id].Load())
}

func (o *owners) name(n string) {
	o.namesMu.Lock()
	o.names[n] = true
	o.namesMu.Unlock()
}

// watch makes every answer a gives pass the scan for a viewer on the host of
// label (the admin's, or a tenant's).
func (s *Scenario) watch(a *engine.Agent, label string) {
	var tid int64
	if label != adminLabel {
		if t := s.m.byLabel(label); t != nil {
			tid = t.id
		}
	}
	admin := label == adminLabel
	a.Inspect(func(res *engine.Response) error { return s.m.own.scan(res, tid, admin) })
}

// byLabel returns the tenant named label, or nil.
func (m *model) byLabel(label string) *tenant {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byName[label]
}

// scan checks one answer of the API for a viewer on tenant tid's host (0 for
// none known) or the admin's.
func (o *owners) scan(res *engine.Response, tid int64, admin bool) error {
	if res.URL == nil || !strings.HasPrefix(res.URL.Path, "/api/") {
		return nil
	}
	refusal := res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden
	if refusal || !admin {
		allowed := tid
		if refusal {
			allowed = -1
		}
		if id, owner := o.foreignID(res.Body, allowed); owner != 0 {
			if refusal {
				return res.Criticalf("leak", "a %d answer carries id %d, of a player or competition of tenant %d: a refusal shows nothing",
					res.StatusCode, id, owner)
			}
			return res.Criticalf("leak", "an answer on tenant %d's host carries id %d, of a player or competition of tenant %d",
				tid, id, owner)
		}
	}
	if res.StatusCode >= 400 {
		if n := o.nameIn(res.Body); n != "" {
			return res.Criticalf("leak", "a %d answer carries the name of a player, %q: an error names nobody", res.StatusCode, n)
		}
	}
	return nil
}

// idKey ends every key of an id: "id", "player_id", "competition_id", ...
var idKey = []byte(`id"`)

// foreignID finds, in body, a number under a key that ends in "id" which is a
// player's or a competition's id of a tenant other than allowed (-1: of any
// tenant); it returns it and its owner, or 0, 0. allowed's own id (a tenant
// object's) is allowed too.
func (o *owners) foreignID(body []byte, allowed int64) (int64, int64) {
	for i := 0; ; {
		j := bytes.Index(body[i:], idKey)
		if j < 0 {
			return 0, 0
		}
		k := i + j + len(idKey)
		i = k
		for k < len(body) && (body[k] == ' ' || body[k] == ':') {
			k++
		}
		if k == i || k >= len(body) || body[k] < '0' || body[k] > '9' {
			continue
		}
		var id int64
		for ; k < len(body) && body[k] >= '0' && body[k] <= '9' && id < 1<<40; k++ {
			id = id*10 + int64(body[k]-'0')
		}
		if id == allowed {
			continue
		}
		if owner := o.owner(id); owner != 0 && owner != allowed {
			return id, owner
		}
	}
}

// nameIn returns the first player's name that two words in a row of body
// make, or "".
func (o *owners) nameIn(body []byte) string {
	o.namesMu.RLock()
	defer o.namesMu.RUnlock()
	prev := ""
	for len(body) > 0 {
		start := 0
		for start < len(body) {
			r, n := utf8.DecodeRune(body[start:])
			if unicode.IsLetter(r) {
				break
			}
			start += n
		}
		end := start
		for end < len(body) {
			r, n := utf8.DecodeRune(body[end:])
			if !unicode.IsLetter(r) {
				break
			}
			end += n
		}
		if start == end {
			return ""
		}
		word := string(body[start:end])
		if prev != "" && o.names[prev+" "+word] {
			return prev + " " + word
		}
		prev, body = word, body[end:]
	}
	return ""
}
