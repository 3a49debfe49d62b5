package bank

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/bank/data"
)

// parsePage checks what every HTML page has: status 200, HTML, its asset
// tags; it returns the parsed document.
func parsePage(res *engine.Response) (*goquery.Document, error) {
	if err := res.Check(engine.Status(200), engine.ContentType("text/html"),
		engine.Count(`head link[rel="stylesheet"][href="/static/css/bank.css"]`, 1),
		engine.Count(`head script[src="/static/js/bank.js"]`, 1),
		engine.Count(`#header img#logo[src="/static/img/logo.png"]`, 1)); err != nil {
		return nil, err
	}
	return res.Document()
}

// notice is the notice on /.
type notice struct {
	present bool
	reason  string // its data-reason
	text    string // its text, trimmed
}

// parseTop parses /: a page, private to the session, with the login form;
// it returns the notice the page shows.
func parseTop(res *engine.Response) (notice, error) {
	doc, err := parsePage(res)
	if err != nil {
		return notice{}, err
	}
	if err := res.Check(engine.Private(),
		engine.Count(`main form#login-form[method="post"][action="/login"] input[name="login"]`, 1),
		engine.Count(`main form#login-form input[name="password"][type="password"]`, 1)); err != nil {
		return notice{}, err
	}
	sel := doc.Find("main p#notice")
	return notice{
		present: sel.Length() > 0,
		reason:  sel.AttrOr("data-reason", ""),
		text:    strings.TrimSpace(sel.Text()),
	}, nil
}

// mypageFields is what /mypage shows: the user's login and its previous
// successful login.
type mypageFields struct {
	login    string
	lastIP   string
	lastAt   string    // as shown
	lastTime time.Time // lastAt read as a time in UTC, when lastAtOK
	lastAtOK bool
}

// parseMypage parses /mypage: a page, private to the session.
func parseMypage(res *engine.Response) (mypageFields, error) {
	doc, err := parsePage(res)
	if err != nil {
		return mypageFields{}, err
	}
	if err := res.Check(engine.Private()); err != nil {
		return mypageFields{}, err
	}
	f := mypageFields{
		login:  strings.TrimSpace(doc.Find("main #login-name").Text()),
		lastIP: strings.TrimSpace(doc.Find("main dd#last-login-ip").Text()),
		lastAt: strings.TrimSpace(doc.Find("main dd#last-login-at").Text()),
	}
	t, err := time.ParseInLocation(data.TimeFormat, f.lastAt, time.UTC)
	f.lastTime, f.lastAtOK = t, err == nil
	return f, nil
}

// report is the JSON of /report: its two lists and whether each key is
// there.
type report struct {
	bannedIPs, lockedUsers       []string
	hasBannedIPs, hasLockedUsers bool
}

// parseReport parses /report: status 200 and a JSON object.
func parseReport(res *engine.Response) (report, error) {
	var got struct {
		BannedIPs   []string `json:"banned_ips"`
		LockedUsers []string `json:"locked_users"`
	}
	if err := res.Check(engine.Status(200), engine.JSON(&got)); err != nil {
		return report{}, err
	}
	if key := duplicateKey(res.Body); key != "" {
		return report{}, res.Criticalf("report", "/report has the key %q more than once: a reader may take either", key)
	}
	rep := report{bannedIPs: got.BannedIPs, lockedUsers: got.LockedUsers, hasBannedIPs: true, hasLockedUsers: true}
	if got.BannedIPs == nil || got.LockedUsers == nil {
		// A list may be missing, or null.
		raw := map[string]json.RawMessage{}
		_ = json.Unmarshal(res.Body, &raw)
		_, rep.hasBannedIPs = raw["banned_ips"]
		_, rep.hasLockedUsers = raw["locked_users"]
	}
	return rep, nil
}

// duplicateKey returns a key that body's JSON object has more than once, ""
// if none does (or body is no object: engine.JSON judges that).
func duplicateKey(body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return ""
		}
		if seen[key] {
			return key
		}
		seen[key] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// cookieName is the session's cookie (MANUAL: "Sessions and notices").
const cookieName = "bank_session"

// sessionCookie returns the value of the bank_session cookie res sets, ""
// when it sets none or one that deletes it.
func sessionCookie(res *engine.Response) string {
	if _, ok := res.Header["Set-Cookie"]; !ok {
		return ""
	}
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.Name == cookieName && c.MaxAge >= 0 {
			return c.Value
		}
	}
	return ""
}

// eachLogin calls f with every login of a user's shape in body: "u" and
// seven digits, not followed by another digit. It is one pass over the
// body, cheap enough to run on every answer.
func eachLogin(body []byte, f func(login string)) {
	for i := 0; ; {
		k := bytes.IndexByte(body[i:], 'u')
		if k < 0 {
			return
		}
		i += k + 1
		if end := i + 7; end <= len(body) && allDigits(body[i:end]) && (end == len(body) || !isDigit(body[end])) {
			f(string(body[i-1 : end]))
			i = end
		}
	}
}

// eachDataAddr calls f with every IPv4 address in body that lies in the
// data's networks, 10.0.0.0/8, 172.16.0.0/12 and 192.168.0.0/16 (MANUAL:
// "Initial data"): four numbers of at most three digits joined by dots,
// with neither a digit nor a dot before, and after it neither a digit nor
// a dot followed by a digit (a full stop may end a sentence).
func eachDataAddr(body []byte, f func(addr string)) {
	for i := 0; i < len(body); i++ {
		if !isDigit(body[i]) || i > 0 && (isDigit(body[i-1]) || body[i-1] == '.') {
			continue
		}
		var octets [4]int
		j := i
		ok := true
		for n := range 4 {
			start := j
			for j < len(body) && isDigit(body[j]) && j-start < 4 {
				octets[n] = octets[n]*10 + int(body[j]-'0')
				j++
			}
			if j == start || j-start > 3 || octets[n] > 255 || n < 3 && (j >= len(body) || body[j] != '.') {
				ok = false
				break
			}
			if n < 3 {
				j++
			}
		}
		if ok && (j == len(body) || !isDigit(body[j]) && !dotDigit(body[j:])) && inDataNets(octets) {
			f(string(body[i:j]))
		}
	}
}

// inDataNets reports whether an address is in 10.0.0.0/8, 172.16.0.0/12
// or 192.168.0.0/16.
func inDataNets(o [4]int) bool {
	return o[0] == 10 || o[0] == 172 && o[1]&0xf0 == 16 || o[0] == 192 && o[1] == 168
}

// dotDigit reports whether b starts with a dot and a digit.
func dotDigit(b []byte) bool { return len(b) > 1 && b[0] == '.' && isDigit(b[1]) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// reportExtras returns /report's JSON without its two lists, which name
// locked users and banned addresses by design: what is left must name
// nobody. A body that is no JSON object gives nil (parseReport fails it).
func reportExtras(body []byte) []byte {
	fields := map[string]json.RawMessage{}
	if json.Unmarshal(body, &fields) != nil {
		return nil
	}
	delete(fields, "banned_ips")
	delete(fields, "locked_users")
	if len(fields) == 0 {
		return nil
	}
	out, _ := json.Marshal(fields)
	return out
}
