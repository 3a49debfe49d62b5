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
	names   map[string]bool // every player's display name, lower-cased
	tenants map[string]bool // every tenant's name and display name, lower-cased
}

func newOwners(maxID int64) *owners {
	return &owners{tenant: make([]atomic.Int32, maxID+1+ownerSlack), names: map[string]bool{}, tenants: map[string]bool{}}
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
	o.names[strings.ToLower(n)] = true
	o.namesMu.Unlock()
}

// tenantText records a tenant's name and display name.
func (o *owners) tenantText(name, display string) {
	o.namesMu.Lock()
	o.tenants[strings.ToLower(name)] = true
	o.tenants[strings.ToLower(display)] = true
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

// scan checks one answer for a viewer on tenant tid's host (0 for none
// known) or the admin's. It reads the body and the headers as
// engine.Response.Readings gives them (their common encodings undone); the
// numbers of a header whose name holds "id" are ids, as are those under a key
// that ends in "id" and, in a refusal, any number of the body but its status.
// The body of a 200 outside /api/ is one of the problem's own files, which
// other checks hold to the byte: only its headers are read.
func (o *owners) scan(res *engine.Response, tid int64, admin bool) error {
	refusal := res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden
	var texts [][]byte
	if res.StatusCode != http.StatusOK || res.URL != nil && strings.HasPrefix(res.URL.Path, "/api/") {
		texts = (&engine.Response{Body: res.Body}).Readings()
	}
	nBody := len(texts)
	var idTexts [][]byte // the values of headers named for an id
	for name, values := range res.Header {
		if name == "Date" || name == "Content-Length" {
			continue
		}
		for _, v := range values {
			r := (&engine.Response{Body: []byte(v)}).Readings()
			if strings.Contains(strings.ToLower(name), "id") {
				idTexts = append(idTexts, r...)
			}
			texts = append(texts, r...)
		}
	}
	if refusal || !admin {
		allowed := tid
		if refusal {
			allowed = -1
		}
		for i, t := range texts {
			id, owner := o.foreignID(t, allowed)
			if owner == 0 && refusal && i < nBody {
				id, owner = o.foreignNumber(t, allowed, int64(res.StatusCode))
			}
			if owner != 0 {
				return o.idLeak(res, tid, id, owner, refusal)
			}
		}
		for _, t := range idTexts {
			if id, owner := o.foreignNumber(t, allowed, -1); owner != 0 {
				return o.idLeak(res, tid, id, owner, refusal)
			}
		}
	}
	if res.StatusCode >= 400 {
		for _, t := range texts {
			if n, what := o.nameIn(t, refusal); n != "" {
				if what == "tenant" {
					return res.Criticalf("leak", "a %d answer carries the name of a tenant, %q: a refusal shows nothing of any tenant", res.StatusCode, n)
				}
				return res.Criticalf("leak", "a %d answer carries the name of a player, %q: an error names nobody", res.StatusCode, n)
			}
		}
	}
	return nil
}

// idLeak is the error of an id found in an answer.
func (o *owners) idLeak(res *engine.Response, tid, id, owner int64, refusal bool) error {
	if refusal {
		return res.Criticalf("leak", "a %d answer carries id %d, of a player or competition of tenant %d: a refusal shows nothing",
			res.StatusCode, id, owner)
	}
	return res.Criticalf("leak", "an answer on tenant %d's host carries id %d, of a player or competition of tenant %d",
		tid, id, owner)
}

// idKey ends every key of an id: "id", "player_id", "competition_id", ...
var idKey = []byte(`id"`)

// foreignID finds, in body, a number (or a string of digits) under a key that
// ends in "id" which is a player's or a competition's id of a tenant other
// than allowed (-1: of any tenant); it returns it and its owner, or 0, 0.
// allowed's own id (a tenant object's) is allowed too.
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
		if k > i && k < len(body) && body[k] == '"' {
			k++
		}
		if k == i || k >= len(body) || body[k] < '0' || body[k] > '9' {
			continue
		}
		var id int64
		for ; k < len(body) && body[k] >= '0' && body[k] <= '9' && id < 1<<40; k++ {
			id = id*10 + int64(body[k]-'0')
		}
		if id == allowed || k < len(body) && isWordByte(body[k]) {
			continue // or the start of a word, such as a hex request id
		}
		if owner := o.owner(id); owner != 0 && owner != allowed {
			return id, owner
		}
	}
}

// foreignNumber finds, in body, any run of digits that is a player's or a
// competition's id of a tenant other than allowed (-1: of any tenant), but
// skip (a refusal's own status); it returns it and its owner, or 0, 0.
func (o *owners) foreignNumber(body []byte, allowed, skip int64) (int64, int64) {
	for k := 0; k < len(body); {
		if body[k] < '0' || body[k] > '9' {
			k++
			continue
		}
		start := k
		var id int64
		for ; k < len(body) && body[k] >= '0' && body[k] <= '9'; k++ {
			if id < 1<<40 {
				id = id*10 + int64(body[k]-'0')
			}
		}
		if id == allowed || id == skip || start > 0 && isWordByte(body[start-1]) || k < len(body) && isWordByte(body[k]) {
			continue // a number only on its own: not a piece of a word such as a hex request id
		}
		if owner := o.owner(id); owner != 0 && owner != allowed {
			return id, owner
		}
	}
	return 0, 0
}

// nameIn returns the first player's name that two words in a row of body
// make, in any letter case, and "player"; with tenants, also a tenant's
// display name (two or three words) or name (letters, digits and hyphens), and
// "tenant"; or "", "".
func (o *owners) nameIn(body []byte, tenants bool) (string, string) {
	body = bytes.ToLower(body)
	o.namesMu.RLock()
	defer o.namesMu.RUnlock()
	if tenants {
		for _, w := range bytes.FieldsFunc(body, notLabel) {
			if o.tenants[string(w)] {
				return string(w), "tenant"
			}
		}
	}
	prev, prev2 := "", ""
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
			return "", ""
		}
		word := string(body[start:end])
		if prev != "" && o.names[prev+" "+word] {
			return prev + " " + word, "player"
		}
		if tenants && prev != "" && o.tenants[prev+" "+word] {
			return prev + " " + word, "tenant"
		}
		if tenants && prev2 != "" && o.tenants[prev2+" "+prev+" "+word] {
			return prev2 + " " + prev + " " + word, "tenant"
		}
		prev2, prev, body = prev, word, body[end:]
	}
	return "", ""
}

// notLabel tells the runes that no tenant's name holds.
func notLabel(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-')
}

// isWordByte reports whether c is a letter, a digit or an underscore: a run
// of digits next to one is part of a word (a hex id, "v2"), not a number.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
