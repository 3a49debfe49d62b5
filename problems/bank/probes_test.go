package bank

import (
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/bank/data"
)

// TestWrongPasswordsAreWrongAndVaried: a wrong password is never the right
// one, and no one shape (the right one plus a letter, say) gives them away.
func TestWrongPasswordsAreWrongAndVaried(t *testing.T) {
	cfg := data.Config{Seed: 7, Users: 1000, LogRows: 4000}
	rnd := rand.New(rand.NewPCG(1, 2))
	right := cfg.User(42).Password
	seen := map[string]bool{}
	longer, shorter, same := 0, 0, 0
	for range 2000 {
		w := wrongPassword(rnd, cfg, right)
		if w == right {
			t.Fatalf("wrongPassword gave the right password %q", w)
		}
		seen[w] = true
		switch {
		case len(w) > len(right):
			longer++
		case len(w) < len(right):
			shorter++
		default:
			same++
		}
		if strings.HasPrefix(w, right) && len(w) == len(right)+1 && w[len(w)-1] == 'x' {
			t.Errorf("the old probe's shape: %q", w)
		}
	}
	if len(seen) < 500 || longer < 200 || shorter < 200 || same < 500 {
		t.Errorf("%d distinct wrong passwords, %d longer, %d shorter, %d as long: not varied enough", len(seen), longer, shorter, same)
	}
}

// TestForgedCookiesKeepTheShape: a forged cookie is never the real one, has
// its length and alphabet, and swaps the user's login when the cookie
// holds it.
func TestForgedCookiesKeepTheShape(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	hex := "3f9a0c1b2d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"
	for range 500 {
		f := forgeCookie(rnd, hex, "u0000042", "u0001234")
		if f == hex || len(f) != len(hex) || strings.Trim(f, "0123456789abcdef") != "" {
			t.Fatalf("forged %q from the hex cookie %q", f, hex)
		}
	}
	named := "u0000042.Zm9vYmFy"
	swapped := 0
	for range 500 {
		f := forgeCookie(rnd, named, "u0000042", "u0001234")
		if f == named || len(f) != len(named) || f[8] != '.' {
			t.Fatalf("forged %q from %q", f, named)
		}
		if f == "u0001234.Zm9vYmFy" {
			swapped++
		}
	}
	if swapped < 100 {
		t.Errorf("the login swapped %d times in 500, expected about a third", swapped)
	}
}

// TestScanFindsLoginsAndDataAddresses: the scan finds a user's login and an
// address of the data's networks anywhere in a body, and nothing else.
func TestScanFindsLoginsAndDataAddresses(t *testing.T) {
	body := []byte(`<p>u0000042</p><!-- xu1234567 --><i data-x="u12345678">u123456</i>` +
		`10.1.2.3 172.20.0.1, 172.32.0.1 192.168.4.5.6 1.10.1.2.3 192.168.1.256 127.0.0.1 (192.168.7.8) from 192.168.9.9.`)
	var logins, addrs []string
	eachLogin(body, func(l string) { logins = append(logins, l) })
	eachDataAddr(body, func(a string) { addrs = append(addrs, a) })
	if want := []string{"u0000042", "u1234567"}; !slices.Equal(logins, want) {
		t.Errorf("logins %q, want %q", logins, want)
	}
	if want := []string{"10.1.2.3", "172.20.0.1", "192.168.7.8", "192.168.9.9"}; !slices.Equal(addrs, want) {
		t.Errorf("addresses %q, want %q", addrs, want)
	}
}

// TestViewerSeesOnlyItsOwn: the inspection passes what the viewer sent or
// was shown as its own, and fails another user's login or address
// critically, whatever the answer's status; /report's two lists and
// assets are left alone, and headers are read for logins and the clients'
// addresses only.
func TestViewerSeesOnlyItsOwn(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:1")
	v := newViewer(engine.NewAgent(base, engine.AgentConfig{}, nil), newModel(data.Config{}, &data.State{}))
	v.typed("u0000042", "192.168.3.4 , 10.0.0.1")
	v.shown("10.9.8.7")
	answer := func(path string, status int, body string) *engine.Response {
		u, _ := url.Parse("http://127.0.0.1:1" + path)
		return &engine.Response{Endpoint: "GET " + path, Method: http.MethodGet, URL: u, StatusCode: status, Body: []byte(body)}
	}
	withHeader := answer("/", 200, "")
	withHeader.Header = http.Header{"X-Last-User": {"u0000007"}}
	if err := v.inspect(withHeader); engine.AsError(err) == nil || engine.AsError(err).Code != "leak" {
		t.Errorf("a login in a header: %v, want a leak", err)
	}
	proxied := answer("/", 200, "")
	proxied.Header = http.Header{"X-Upstream": {"10.1.1.1:8080"}, "Set-Cookie": {"bank_session=u1234567"}}
	for _, ok := range []*engine.Response{
		proxied,
		answer("/mypage", 200, "u0000042 from 10.9.8.7, now 192.168.3.4 (10.0.0.1)"),
		answer("/", 200, "U0000042 from 192.168.3.4."),
		answer("/report", 200, `{"locked_users":["u0000007"],"banned_ips":["172.16.0.9"]}`),
		answer("/static/js/bank.js", 200, "u0000007"),
	} {
		if err := v.inspect(ok); err != nil {
			t.Errorf("%s: %v", ok.URL.Path, err)
		}
	}
	for _, leak := range []*engine.Response{
		answer("/favicon.ico", 404, `<section id="error">u0000043</section>`),
		answer("/", 200, `<div hidden data-last="192.168.3.5"></div>`),
		answer("/mypage", 303, `<!-- u0000007 -->`),
		answer("/static/none", 404, `10.9.8.6`),
		answer("/report", 200, `{"locked_users":[],"banned_ips":[],"last":"u0000007"}`),
		answer("/", 200, `<p hidden>Last refused attempt: U0000007 from 192.168.3.4.</p>`),
		answer("/", 200, `<p hidden>Last refused attempt: u0000042 from 192.168.3.5.</p>`),
		answer("/", 200, `<p hidden data-x="bGFzdDogdTAwMDAwMDcgb2s="></p>`),
		answer("/", 200, `<p hidden data-x="&#117;0000007"></p>`),
		func() *engine.Response {
			res := answer("/", 200, "")
			res.Header = http.Header{"X-Previous-Attempt-From": {"192.168.3.5"}}
			return res
		}(),
	} {
		err := v.inspect(leak)
		if e := engine.AsError(err); e == nil || e.Class != engine.ClassCritical || e.Code != "leak" {
			t.Errorf("%s %q: %v, want a critical leak", leak.URL.Path, leak.Body, err)
		}
	}
}

// BenchmarkViewerInspect: the scan that runs on every answer of the load,
// over a /mypage of the reference's size (about 1 KB).
func BenchmarkViewerInspect(b *testing.B) {
	base, _ := url.Parse("http://127.0.0.1:1")
	v := newViewer(engine.NewAgent(base, engine.AgentConfig{}, nil), newModel(data.Config{}, &data.State{}))
	v.typed("u0000042", "192.168.3.4")
	v.shown("10.9.8.7")
	page := `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
		`<title>My page - tunecon bank</title><link rel="stylesheet" href="/static/css/bank.css"><script src="/static/js/bank.js"></script></head>` +
		`<body><header id="header"><a id="home-link" href="/"><img id="logo" src="/static/img/logo.png" alt="tunecon bank"></a></header><main id="main">` +
		`<section id="mypage"><h1>Welcome, <span id="login-name">u0000042</span></h1><dl id="last-login"><dt>Last login at</dt>` +
		`<dd id="last-login-at">2025-12-31 23:59:57</dd><dt>Last login from</dt><dd id="last-login-ip">10.9.8.7</dd></dl></section></main>` +
		`<footer id="footer"><p>tunecon bank will never ask for your password by email or on the phone.</p></footer></body></html>`
	u, _ := url.Parse("http://127.0.0.1:1/mypage")
	res := &engine.Response{Endpoint: "GET /mypage", Method: http.MethodGet, URL: u, StatusCode: 200, Body: []byte(page)}
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if err := v.inspect(res); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReportRefusesDuplicateKeys: a key /report has twice is found, at the
// top level only, whatever it holds.
func TestReportRefusesDuplicateKeys(t *testing.T) {
	for body, want := range map[string]string{
		`{"banned_ips":["10.0.0.1"],"locked_users":[],"banned_ips":[]}`: "banned_ips",
		`{"banned_ips":[],"locked_users":[{"a":1,"a":2}]}`:              "",
		`{"banned_ips":[],"locked_users":[]}`:                           "",
		`[1,1]`:                                                         "",
	} {
		if got := duplicateKey([]byte(body)); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

// TestOwnAddrIsTheConnectionsSource: the address the pre-check's viewer may
// see as its own, after a login the app took from the connection, is the
// one this machine connects to the target from.
func TestOwnAddrIsTheConnectionsSource(t *testing.T) {
	for target, want := range map[string]string{"http://127.0.0.1:8080/": "127.0.0.1", "http://127.0.0.1/": "127.0.0.1"} {
		u, _ := url.Parse(target)
		if got := ownAddr(u); got != want {
			t.Errorf("ownAddr(%s) = %q, want %q", target, got, want)
		}
	}
}

// TestCookieHandedOutTwice: an answer, a login's or any other, that sets a
// session cookie the app handed out before in the run, to another browser
// or before POST /initialize, is critical; so is a login that keeps the
// viewer's own last cookie or sets none.
func TestCookieHandedOutTwice(t *testing.T) {
	m := newModel(data.Config{}, &data.State{})
	if m.handedOut("c1") || m.handedOut("c2") || !m.handedOut("c1") {
		t.Fatal("handedOut must report only a cookie recorded before")
	}
	u, _ := url.Parse("http://app/login")
	res := &engine.Response{Endpoint: "POST /login", Method: http.MethodPost, URL: u, StatusCode: http.StatusSeeOther}
	for _, c := range []struct {
		got, last string
		want      string
	}{
		{"c3", "c2", ""},
		{"c2", "c2", "the previous attempt started"},
		{"", "c2", "set no bank_session cookie"},
	} {
		err := checkNewSession(res, c.got, c.last)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q after %q: %v, want no error", c.got, c.last, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || engine.AsError(err).Class != engine.ClassCritical):
			t.Errorf("%q after %q: %v, want a critical error with %q", c.got, c.last, err, c.want)
		}
	}
	mypage, _ := url.Parse("http://app/mypage")
	for _, c := range []struct {
		path, setCookie string
		want            bool
	}{
		{"/login", "bank_session=c4; Path=/; HttpOnly", false},
		{"/mypage", "bank_session=c5; Path=/", false},
		{"/mypage", "other=c1; Path=/", false},
		{"/mypage", "bank_session=c1; Path=/; Max-Age=0", false},
		{"/mypage", "bank_session=c1; Path=/", true},
		{"/login", "bank_session=c4; Path=/", true},
	} {
		res := &engine.Response{Endpoint: "GET " + c.path, Method: http.MethodGet, URL: mypage.JoinPath("..", c.path),
			StatusCode: http.StatusSeeOther, Header: http.Header{"Set-Cookie": {c.setCookie}}}
		var err error
		if got := sessionCookie(res); got != "" {
			err = checkSessionStart(res, got, "c0", m.handedOut)
		}
		if got := err != nil; got != c.want || (got && (engine.AsError(err).Class != engine.ClassCritical ||
			!strings.Contains(err.Error(), "handed out before in this run"))) {
			t.Errorf("%s setting %q: %v, want an error: %v", c.path, c.setCookie, err, c.want)
		}
	}
	if err := checkSessionStart(res, "c4", "c4", m.handedOut); err == nil || !strings.Contains(err.Error(), "the one this browser already held") {
		t.Errorf("the cookie the browser held set again: %v, want it named", err)
	}
}
