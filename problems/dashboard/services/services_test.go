package services_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunecon/tunecon/problems/dashboard/data"
	"github.com/tunecon/tunecon/problems/dashboard/services"
)

// t0 is a weather period's start (1764000000000 is a multiple of 3000 ms) and a
// whole second.
var t0 = time.UnixMilli(1764000000000).UTC()

// clock is an injected clock that tests step by hand.
type clock struct{ ms atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.ms.Store(t.UnixMilli())
	return c
}

func (c *clock) now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *clock) add(d time.Duration) { c.ms.Add(d.Milliseconds()) }

func start(t *testing.T, cfg services.Config) *services.Services {
	t.Helper()
	s, err := services.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The clients: plain HTTP/1.1, HTTPS over HTTP/1.1 only, HTTPS over HTTP/2.
func plainClient(t *testing.T) *http.Client { return newClient(t, false, false) }
func h1Client(t *testing.T) *http.Client    { return newClient(t, true, false) }
func h2Client(t *testing.T) *http.Client    { return newClient(t, true, true) }

func newClient(t *testing.T, insecure, h2 bool) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 100, ForceAttemptHTTP2: h2, Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP1(true)
	tr.Protocols.SetHTTP2(h2)
	if insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

type answer struct {
	status int
	proto  int
	header http.Header
	body   []byte
}

// get sends a GET with the given headers (name, value, ...) and reads the whole
// answer.
func get(c *http.Client, url string, header ...string) (answer, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return answer{}, err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.ProtoMajor, resp.Header, body}, err
}

// mustGet is get that wants status.
func mustGet(t *testing.T, c *http.Client, status int, url string, header ...string) answer {
	t.Helper()
	a, err := get(c, url, header...)
	if err != nil {
		t.Fatal(err)
	}
	if a.status != status {
		t.Fatalf("GET %s: %d %q, want %d", url, a.status, a.body, status)
	}
	return a
}

// decode decodes a 200's JSON body, strictly.
func decode[T any](t *testing.T, a answer) T {
	t.Helper()
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var v T
	d := json.NewDecoder(strings.NewReader(string(a.body)))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", a.body, err)
	}
	return v
}

const (
	token  = "0123456789abcdef0123456789abcdef"
	token2 = "fedcba9876543210fedcba9876543210"
)

// secret is the tests' fixed secret, for answers known in advance.
var secret = []byte("the dashboard services' test secret")

// TestAnswers: every service answers what the pure functions say.
func TestAnswers(t *testing.T) {
	clk := newClock(t0.Add(1500 * time.Millisecond))
	s := start(t, services.Config{Seed: 7, Secret: secret, Now: clk.now, Latency: 0.01})
	plain, h2 := plainClient(t), h2Client(t)
	facts := services.NewFacts(secret)

	for _, path := range []string{"/postal/1234567", "/postal?code=1234567"} {
		got := decode[services.PostalAnswer](t, mustGet(t, plain, 200, s.HTTP()+path))
		want, _ := facts.Address("1234567")
		if got != (services.PostalAnswer{Code: "1234567", Address: want}) {
			t.Errorf("%s: %+v, want address %q", path, got, want)
		}
	}

	for _, c := range []struct {
		path  string
		names []string
	}{{"/surname", facts.Surnames()}, {"/givenname", facts.GivenNames()}} {
		for _, q := range []string{"ka", "shimo", "zzz"} {
			got := decode[services.NamesAnswer](t, mustGet(t, plain, 200, s.HTTP()+c.path+"?q="+q))
			if want := services.SearchNames(c.names, q); got.Query != q || !slices.Equal(got.Names, want) || got.Names == nil {
				t.Errorf("%s?q=%s: %+v, want %q", c.path, q, got, want)
			}
		}
	}

	a := mustGet(t, plain, 200, s.HTTP()+"/weather?location=L0042")
	w := decode[services.WeatherAnswer](t, a)
	forecast, temperature := facts.Forecast("L0042", t0)
	if w != (services.WeatherAnswer{Location: "L0042", Date: t0.UnixMilli(), Forecast: forecast, Temperature: temperature}) {
		t.Errorf("weather %+v, want %s %d at %d", w, forecast, temperature, t0.UnixMilli())
	}
	if lm := a.header.Get("Last-Modified"); lm != t0.Format(http.TimeFormat) {
		t.Errorf("weather Last-Modified %q", lm)
	}

	a = mustGet(t, h2, 200, s.HTTPS()+"/tokens?req=abc123", "X-Security-Token", token)
	tok := decode[services.TokenAnswer](t, a)
	if a.proto != 2 || tok.Req != "abc123" || tok.Key != token {
		t.Errorf("tokens: HTTP/%d %+v", a.proto, tok)
	}
	if issued, err := s.CheckOnetime(token, "abc123", tok.OnetimeToken); err != nil || !issued.Equal(clk.now()) {
		t.Errorf("CheckOnetime(%q) = %v, %v; want %v", tok.OnetimeToken, issued, err, clk.now())
	}

	a = mustGet(t, h2, 200, s.HTTPS()+"/attacked", "X-Security-Token", token)
	att := decode[services.AttackedAnswer](t, a)
	v := s.AttackedAt(clk.now())
	keys := s.AttackedKeys(token, v.Seq)
	if att != (services.AttackedAnswer{UpdatedAt: v.Start.UnixMilli(), Key1: keys[0], Key2: keys[1], Key3: keys[2]}) {
		t.Errorf("attacked %+v, want version %+v keys %q", att, v, keys)
	}
	if v.Seq != 0 || !v.Start.Equal(clk.now().Truncate(time.Second)) {
		t.Errorf("version %+v at start-up, want 0 from %v", v, clk.now().Truncate(time.Second))
	}
	if lm := a.header.Get("Last-Modified"); lm != v.Start.Format(http.TimeFormat) {
		t.Errorf("attacked Last-Modified %q", lm)
	}
	if got, ok := s.AttackedVersion(time.UnixMilli(att.UpdatedAt)); !ok || got != v {
		t.Errorf("AttackedVersion(%d) = %+v, %v", att.UpdatedAt, got, ok)
	}
	if other := s.AttackedKeys(token2, v.Seq); other == keys || s.AttackedKeys(token, v.Seq+1) == keys {
		t.Errorf("keys do not depend on the token and the version")
	}

	st := s.Stats()
	want := map[string]int64{"postal": 1, "postal2": 1, "surname": 3, "givenname": 3, "weather": 1, "security": 1, "attacked": 1}
	if !maps(st.Requests, want) || st.PeakInFlight < 1 {
		t.Errorf("stats %+v", st)
	}
}

func maps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRefusals: 400 at once for a bad parameter, 403 without a token and 404 on
// an unknown path after the (scaled) second.
func TestRefusals(t *testing.T) {
	s := start(t, services.Config{Latency: 0.05}) // refusals after 50 ms
	plain, h1 := plainClient(t), h1Client(t)
	bad := []string{
		s.HTTP() + "/postal/123456", s.HTTP() + "/postal/12345678", s.HTTP() + "/postal/123456a", s.HTTP() + "/postal/",
		s.HTTP() + "/postal", s.HTTP() + "/postal?code=12", s.HTTP() + "/surname", s.HTTP() + "/surname?q=Ka",
		s.HTTP() + "/givenname?q=abcdefghi", s.HTTP() + "/weather", s.HTTP() + "/weather?location=L42",
		s.HTTP() + "/weather?location=X0042",
	}
	for _, u := range bad {
		mustGet(t, plain, 400, u)
	}
	mustGet(t, h1, 400, s.HTTPS()+"/tokens?req=abc", "X-Security-Token", strings.ToUpper(token))
	mustGet(t, h1, 400, s.HTTPS()+"/attacked", "X-Security-Token", token[:31])
	mustGet(t, h1, 400, s.HTTPS()+"/tokens", "X-Security-Token", token)
	mustGet(t, h1, 400, s.HTTPS()+"/tokens?req=ABC", "X-Security-Token", token)
	mustGet(t, h1, 400, s.HTTPS()+"/tokens?req=abcdefghijklmnopq", "X-Security-Token", token)

	for _, c := range []struct {
		url    string
		status int
	}{
		{s.HTTPS() + "/tokens?req=abc", 403}, {s.HTTPS() + "/attacked", 403},
		{s.HTTP() + "/nothing", 404}, {s.HTTPS() + "/nothing", 404}, {s.HTTP() + "/tokens", 404}, {s.HTTPS() + "/weather?location=L0001", 404},
	} {
		begin := time.Now()
		cl := plain
		if strings.HasPrefix(c.url, "https") {
			cl = h1
		}
		mustGet(t, cl, c.status, c.url)
		if d := time.Since(begin); d < 50*time.Millisecond {
			t.Errorf("%s: %d after %v, want after 50 ms", c.url, c.status, d)
		}
	}
	st := s.Stats()
	if st.BadRequest != int64(len(bad)+5) || st.Forbidden != 2 || st.NotFound != 4 || st.TooMany != 0 {
		t.Errorf("stats %+v", st)
	}
}

// eventually waits until cond holds, for 5 s at most.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
	}
}

// concurrently sends the requests at once and returns their answers in order.
func concurrently(t *testing.T, reqs ...func() (answer, error)) []answer {
	t.Helper()
	out := make([]answer, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Go(func() { out[i], errs[i] = req() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return out
}

func statuses(as []answer) (ok, tooMany int) {
	for _, a := range as {
		switch a.status {
		case 200:
			ok++
		case 429:
			tooMany++
		}
	}
	return ok, tooMany
}

// Test429: over HTTP/1.1 a token has one request in flight at most, over HTTP/2
// any number.
func Test429(t *testing.T) {
	s := start(t, services.Config{Latency: 0.4}) // attacked takes 200 ms, security 20 ms
	h1, h2 := h1Client(t), h2Client(t)
	attacked := func(c *http.Client, tok string) func() (answer, error) {
		return func() (answer, error) { return get(c, s.HTTPS()+"/attacked", "X-Security-Token", tok) }
	}
	tokens := func(c *http.Client, tok string) func() (answer, error) {
		return func() (answer, error) { return get(c, s.HTTPS()+"/tokens?req=r1", "X-Security-Token", tok) }
	}

	as := concurrently(t, attacked(h1, token), attacked(h1, token))
	if ok, tooMany := statuses(as); ok != 1 || tooMany != 1 {
		t.Errorf("HTTP/1.1, one token: %d 200, %d 429; want 1 and 1", ok, tooMany)
	}
	if as[0].proto != 1 || as[1].proto != 1 {
		t.Errorf("HTTP/%d and HTTP/%d, want HTTP/1.1", as[0].proto, as[1].proto)
	}
	if ok, _ := statuses(concurrently(t, attacked(h1, token), tokens(h1, token2))); ok != 2 {
		t.Errorf("HTTP/1.1, two tokens: %d 200, want 2", ok)
	}
	as = concurrently(t, attacked(h2, token), attacked(h2, token), tokens(h2, token), tokens(h2, token))
	if ok, _ := statuses(as); ok != 4 {
		t.Errorf("HTTP/2, one token: %d 200, want 4", ok)
	}
	for _, a := range as {
		if a.proto != 2 {
			t.Errorf("HTTP/%d, want HTTP/2", a.proto)
		}
	}

	// An HTTP/1.1 request whose token has one in flight over HTTP/2 is refused
	// too.
	before := s.Stats().Requests["attacked"]
	inFlight := make(chan answer, 1)
	go func() { a, _ := get(h2, s.HTTPS()+"/attacked", "X-Security-Token", token); inFlight <- a }()
	eventually(t, func() bool { return s.Stats().Requests["attacked"] > before })
	time.Sleep(20 * time.Millisecond)
	mustGet(t, h1, 429, s.HTTPS()+"/tokens?req=r1", "X-Security-Token", token)
	if a := <-inFlight; a.status != 200 {
		t.Errorf("the HTTP/2 request: %d", a.status)
	}
	if n := s.Stats().TooMany; n != 2 {
		t.Errorf("%d 429s counted, want 2", n)
	}
}

// TestNotModified: an exact If-Modified-Since gets 304 (at once for weather),
// another date a 200.
func TestNotModified(t *testing.T) {
	clk := newClock(t0.Add(500 * time.Millisecond))
	s := start(t, services.Config{Now: clk.now, Latency: 1})
	plain, h2 := plainClient(t), h2Client(t)

	weather := s.HTTP() + "/weather?location=L0001"
	lm := t0.Format(http.TimeFormat)
	begin := time.Now()
	a := mustGet(t, plain, 304, weather, "If-Modified-Since", lm)
	if d := time.Since(begin); d > 250*time.Millisecond {
		t.Errorf("weather 304 after %v, want at once", d)
	}
	if len(a.body) != 0 || a.header.Get("Last-Modified") != lm {
		t.Errorf("304: Last-Modified %q, body %q", a.header.Get("Last-Modified"), a.body)
	}
	a = mustGet(t, plain, 200, weather, "If-Modified-Since", t0.Add(-3*time.Second).Format(http.TimeFormat))
	if w := decode[services.WeatherAnswer](t, a); w.Date != t0.UnixMilli() {
		t.Errorf("weather after a stale If-Modified-Since: %+v", w)
	}

	attacked := s.HTTPS() + "/attacked"
	a = mustGet(t, h2, 200, attacked, "X-Security-Token", token)
	lm = a.header.Get("Last-Modified")
	begin = time.Now()
	a = mustGet(t, h2, 304, attacked, "X-Security-Token", token, "If-Modified-Since", lm)
	if d := time.Since(begin); d < 50*time.Millisecond || d > 400*time.Millisecond {
		t.Errorf("attacked 304 after %v, want after 50 ms", d)
	}
	if len(a.body) != 0 {
		t.Errorf("304 with a body %q", a.body)
	}
	mustGet(t, h2, 200, attacked, "X-Security-Token", token, "If-Modified-Since", t0.Add(-time.Hour).Format(http.TimeFormat))
	if n := s.Stats().NotModified; n != 2 {
		t.Errorf("%d 304s counted, want 2", n)
	}
}

// TestWeatherPeriods: the forecast holds for 3 s of the clock, then the next
// period's comes.
func TestWeatherPeriods(t *testing.T) {
	clk := newClock(t0.Add(500 * time.Millisecond))
	s := start(t, services.Config{Now: clk.now, Latency: 0.01})
	plain := plainClient(t)
	ask := func(location string) services.WeatherAnswer {
		t.Helper()
		return decode[services.WeatherAnswer](t, mustGet(t, plain, 200, s.HTTP()+"/weather?location="+location))
	}
	changed := 0
	for step := range 20 {
		period := t0.Add(time.Duration(step) * services.WeatherPeriod)
		if !services.WeatherPeriodAt(clk.now()).Equal(period) {
			t.Fatalf("WeatherPeriodAt(%v) = %v, want %v", clk.now(), services.WeatherPeriodAt(clk.now()), period)
		}
		first := ask("L0007")
		clk.add(2 * time.Second) // still in the period
		second := ask("L0007")
		clk.add(time.Second) // the next one
		forecast, temperature := s.Facts().Forecast("L0007", period)
		want := services.WeatherAnswer{Location: "L0007", Date: period.UnixMilli(), Forecast: forecast, Temperature: temperature}
		if first != want || second != want {
			t.Fatalf("step %d: %+v then %+v, want %+v", step, first, second, want)
		}
		if next, _ := s.Facts().Forecast("L0007", period.Add(services.WeatherPeriod)); next != forecast {
			changed++
		}
	}
	if changed == 0 {
		t.Error("the forecast never changed in 20 periods")
	}
	if got := services.WeatherPeriodAt(time.UnixMilli(-1)); got.UnixMilli() != -3000 {
		t.Errorf("WeatherPeriodAt(-1 ms) = %d ms", got.UnixMilli())
	}
}

// TestOnetime: only the service's own tokens for the key and req pass.
func TestOnetime(t *testing.T) {
	s := start(t, services.Config{Latency: 0.01})
	other := start(t, services.Config{Latency: 0.01})
	h2 := h2Client(t)
	issue := func(s *services.Services, key, req string) string {
		return decode[services.TokenAnswer](t, mustGet(t, h2, 200, s.HTTPS()+"/tokens?req="+req, "X-Security-Token", key)).OnetimeToken
	}
	begin := time.Now().Truncate(time.Millisecond)
	good := issue(s, token, "abc")
	issued, err := s.CheckOnetime(token, "abc", good)
	if err != nil || issued.Before(begin) || issued.After(time.Now()) {
		t.Fatalf("CheckOnetime(%q) = %v, %v", good, issued, err)
	}

	ms, sig, _ := strings.Cut(good, ".")
	// flip changes the last character of s, a digit or a hex digit, to another.
	flip := func(s string) string {
		if s[len(s)-1] == '0' {
			return s[:len(s)-1] + "1"
		}
		return s[:len(s)-1] + "0"
	}
	forged := map[string]string{
		"another signature":   ms + "." + flip(sig),
		"another time":        flip(ms) + "." + sig,
		"a later time":        "9" + ms + "." + sig,
		"a plus sign":         "+" + good,
		"truncated":           good[:len(good)-1],
		"no time":             "." + sig,
		"no dot":              ms + sig,
		"empty":               "",
		"made up":             ms + "." + hex.EncodeToString(make([]byte, 32)),
		"another services'":   issue(other, token, "abc"),
		"a plain sha256":      ms + "." + hexSum(token+"|abc|"+ms),
		"another key's":       issue(s, token2, "abc"),
		"another req's":       issue(s, token, "abd"),
		"signature uppercase": ms + "." + strings.ToUpper(sig),
	}
	for name, onetime := range forged {
		if _, err := s.CheckOnetime(token, "abc", onetime); !errors.Is(err, services.ErrOnetime) {
			t.Errorf("%s (%q): %v, want ErrOnetime", name, onetime, err)
		}
	}
	if _, err := s.CheckOnetime(token2, "abc", good); err == nil {
		t.Error("a token checked against another key passed")
	}
	if _, err := s.CheckOnetime(token, "abcd", good); err == nil {
		t.Error("a token checked against another req passed")
	}
}

func hexSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestAttackedSchedule: versions start at whole seconds, 2 to 8 s apart, from
// the start-up's second, the same for the same seed.
func TestAttackedSchedule(t *testing.T) {
	clk := newClock(t0.Add(1700 * time.Millisecond))
	s := start(t, services.Config{Seed: 42, Now: clk.now, Latency: 0.01})
	same := start(t, services.Config{Seed: 42, Now: clk.now, Latency: 0.01})
	other := start(t, services.Config{Seed: 43, Now: clk.now, Latency: 0.01})

	prev := s.AttackedAt(t0.Add(-time.Hour))
	if prev.Seq != 0 || !prev.Start.Equal(t0.Add(time.Second)) {
		t.Fatalf("first version %+v, want 0 from %v", prev, t0.Add(time.Second))
	}
	differs := false
	for at := t0.Add(time.Second); at.Before(t0.Add(10 * time.Minute)); at = at.Add(250 * time.Millisecond) {
		v := s.AttackedAt(at)
		if v != same.AttackedAt(at) {
			t.Fatalf("two Services of seed 42 disagree at %v", at)
		}
		differs = differs || v != other.AttackedAt(at)
		if at.Before(v.Start) || !at.Before(v.End) || v.Start.Nanosecond() != 0 {
			t.Fatalf("at %v: %+v", at, v)
		}
		switch v.Seq {
		case prev.Seq:
			if v != prev {
				t.Fatalf("version %d changed: %+v, then %+v", v.Seq, prev, v)
			}
		case prev.Seq + 1:
			if gap := v.Start.Sub(prev.Start); !v.Start.Equal(prev.End) || gap < 2*time.Second || gap > 8*time.Second {
				t.Fatalf("version %+v after %+v", v, prev)
			}
		default:
			t.Fatalf("version %+v after %+v", v, prev)
		}
		prev = v
	}
	if !differs {
		t.Error("seeds 42 and 43 give the same schedule")
	}

	clk.add(time.Minute)
	v := s.AttackedAt(clk.now())
	if got, ok := s.AttackedVersion(v.Start); !ok || got != v {
		t.Errorf("AttackedVersion(%v) = %+v, %v; want %+v", v.Start, got, ok, v)
	}
	// No version begins a millisecond or a second off a start (they are 2 s
	// apart at least), before the first, or later than the clock.
	for _, at := range []time.Time{v.Start.Add(time.Millisecond), v.Start.Add(-time.Second), t0, v.End} {
		if got, ok := s.AttackedVersion(at); ok {
			t.Errorf("AttackedVersion(%v) = %+v, true", at, got)
		}
	}
}

// TestFacts: under a fixed secret, the lists and the addresses are known in
// advance; SearchNames finds at most 30 sorted names.
func TestFacts(t *testing.T) {
	facts := services.NewFacts(secret)
	for code, want := range map[string]string{
		"1000001": "Nara, Sawashima-shi, Kihashi 3-2",
		"1000101": "Nara, Sawashima-shi, Dachigaoka 1-7",
		"1234567": "Miyazaki, Tsutakeishi-shi, Gaasagaoka 9-21",
		"9999999": "Osaka, Tose-shi, Shirohashidai 7-4",
	} {
		if got, ok := facts.Address(code); !ok || got != want {
			t.Errorf("Address(%s) = %q, %v; want %q", code, got, ok, want)
		}
	}
	for _, code := range []string{"", "123456", "12345678", "123456a", "１２３４５６７"} {
		if got, ok := facts.Address(code); ok {
			t.Errorf("Address(%q) = %q, true", code, got)
		}
	}

	for _, c := range []struct {
		name  string
		list  []string
		first string
		sum   string
	}{
		{"Surnames", facts.Surnames(), "abehara", "53ab958919b69bdb35a384380b3d5d1be2cb9829622e35ca28d8bfe3d23fc39c"},
		{"GivenNames", facts.GivenNames(), "abaka", "10f1775ddf6feeb92a32e603f0f40616cf0317564ce54f0e99c5c3b3d2abc360"},
	} {
		if len(c.list) != 3000 || c.list[0] != c.first || hexSum(strings.Join(c.list, "\n")) != c.sum {
			t.Errorf("%s changed: %d names from %q, sha256 %s", c.name, len(c.list), c.list[0], hexSum(strings.Join(c.list, "\n")))
		}
		c.list[0] = "mutated"
	}
	if facts.Surnames()[0] == "mutated" {
		t.Error("Surnames hands out its own list")
	}

	names := facts.Surnames()
	for _, q := range []string{"a", "ka", "shi", "kaki", "roni", "zz", names[1000], names[1000] + "x"} {
		got := services.SearchNames(names, q)
		var want []string
		for _, n := range names {
			if strings.HasPrefix(n, q) && len(want) < services.MaxNames {
				want = append(want, n)
			}
		}
		if !slices.Equal(got, want) || got == nil || !slices.Equal(facts.SearchSurnames(q), want) {
			t.Errorf("SearchNames(%q) = %q, want %q", q, got, want)
		}
	}
	if n := len(services.SearchNames(names, "ka")); n != services.MaxNames {
		t.Errorf("%d names for ka, want %d", n, services.MaxNames)
	}
	if got, want := facts.SearchGivenNames("ka"), services.SearchNames(facts.GivenNames(), "ka"); !slices.Equal(got, want) {
		t.Errorf("SearchGivenNames(ka) = %q, want %q", got, want)
	}
}

// TestFactsOfAnySecret: whatever the secret, the answers have the manual's
// shapes, and most of the prefixes the benchmarker's users ask for (drawn as
// the data package draws them) find names.
func TestFactsOfAnySecret(t *testing.T) {
	secrets := [][]byte{nil, make([]byte, 32), secret}
	for range 3 {
		secrets = append(secrets, []byte(rand.Text()))
	}
	address := regexp.MustCompile(`^[A-Z][a-z]+, [A-Z][a-z]+-(shi|machi|cho|mura), [A-Z][a-z]+ [1-9]-([1-9]|[12][0-9]|30)$`)
	forecast := regexp.MustCompile(`^(sunny|cloudy|rain|snow|storm|fog)$`)
	for _, sec := range secrets {
		facts := services.NewFacts(sec)
		for _, c := range []struct {
			service string
			list    []string
			search  func(string) []string
		}{{data.Surname, facts.Surnames(), facts.SearchSurnames}, {data.GivenName, facts.GivenNames(), facts.SearchGivenNames}} {
			if len(c.list) != 3000 {
				t.Errorf("secret %q: %d %s names", sec, len(c.list), c.service)
			}
			for i, name := range c.list {
				if i > 0 && name <= c.list[i-1] || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz") != "" || name == "" {
					t.Fatalf("secret %q: %s[%d] = %q after %q", sec, c.service, i, name, c.list[max(i-1, 0)])
				}
			}
			r := mrand.New(mrand.NewPCG(1, 2))
			const asked = 2000
			found, full := 0, 0
			for range asked {
				switch n := len(c.search(data.NewParams(r.IntN, c.service).Q)); {
				case n == services.MaxNames:
					full++
					fallthrough
				case n > 0:
					found++
				}
			}
			if found < asked*80/100 || full < asked*40/100 {
				t.Errorf("secret %q: %d of %d %s prefixes find names, %d find %d; want 80%% and 40%%", sec, found, asked,
					c.service, full, services.MaxNames)
			}
		}

		distinct := map[string]bool{}
		for i := range 200 {
			code := fmt.Sprintf("%07d", 1000000+i*44711%9000000)
			got, ok := facts.Address(code)
			if !ok || !address.MatchString(got) {
				t.Fatalf("secret %q: Address(%s) = %q, %v", sec, code, got, ok)
			}
			// Codes that share their first digits share the address's start.
			sibling, _ := facts.Address(code[:5] + "00")
			parts, sparts := strings.SplitN(got, ", ", 3), strings.SplitN(sibling, ", ", 3)
			if parts[0] != sparts[0] || parts[1] != sparts[1] || strings.Fields(parts[2])[0] != strings.Fields(sparts[2])[0] {
				t.Fatalf("secret %q: %s is %q but %s00 %q", sec, code, got, code[:5], sibling)
			}
			distinct[got] = true
		}
		if len(distinct) < 190 {
			t.Errorf("secret %q: %d distinct addresses of 200 codes", sec, len(distinct))
		}

		changed := 0
		for step := range 20 {
			period := t0.Add(time.Duration(step) * services.WeatherPeriod)
			f, temp := facts.Forecast("L0042", period)
			if !forecast.MatchString(f) || temp < -10 || temp > 35 {
				t.Fatalf("secret %q: Forecast(L0042, %v) = %s, %d", sec, period, f, temp)
			}
			if next, _ := facts.Forecast("L0042", period.Add(services.WeatherPeriod)); next != f {
				changed++
			}
		}
		if changed == 0 {
			t.Errorf("secret %q: the forecast never changed in 20 periods", sec)
		}
	}
}

// TestSecret: the answers depend on the secret, which Start draws anew each
// time when the Config has none, whatever the seed; the same secret gives the
// same answers. So an answer made from this package's code with a guessed
// secret (none, or zeros) is not the services'.
func TestSecret(t *testing.T) {
	answers := func(f *services.Facts) string {
		a, _ := f.Address("1234567")
		w, temp := f.Forecast("L0042", t0)
		return fmt.Sprint(a, f.SearchSurnames("ka"), f.SearchGivenNames("mi"), w, temp)
	}
	cfg := services.Config{Seed: 1, Latency: 0.01}
	drawn := []string{answers(start(t, cfg).Facts()), answers(start(t, cfg).Facts())}
	for _, guess := range [][]byte{nil, make([]byte, 32), []byte("1")} {
		drawn = append(drawn, answers(services.NewFacts(guess)))
	}
	for i := range drawn {
		for j := range i {
			if drawn[i] == drawn[j] {
				t.Errorf("two secrets, the same answers: %s", drawn[i])
			}
		}
	}

	cfg.Secret = slices.Clone(secret)
	s := start(t, cfg)
	cfg.Secret[0]++ // Start keeps a copy
	if got, want := answers(s.Facts()), answers(services.NewFacts(secret)); got != want {
		t.Errorf("Config.Secret %q: %s, want NewFacts' %s", secret, got, want)
	}
}

// BenchmarkNewFacts: what building the facts (the name lists) costs each run.
func BenchmarkNewFacts(b *testing.B) {
	for b.Loop() {
		services.NewFacts(secret)
	}
}

// BenchmarkAddress: what checking a postal answer costs.
func BenchmarkAddress(b *testing.B) {
	facts := services.NewFacts(secret)
	for b.Loop() {
		facts.Address("1234567")
	}
}

// TestClose: Close wakes the waiting handlers, returns once they are done,
// closes both ports, and may be called again.
func TestClose(t *testing.T) {
	s, err := services.Start(context.Background(), services.Config{Latency: 1})
	if err != nil {
		t.Fatal(err)
	}
	plain, h2 := plainClient(t), h2Client(t)
	errs := make(chan error, 30)
	for i := range 30 {
		go func() {
			var err error
			if i%3 == 0 {
				_, err = get(h2, s.HTTPS()+"/attacked", "X-Security-Token", token)
			} else {
				_, err = get(plain, s.HTTP()+"/weather?location=L0001")
			}
			errs <- err
		}()
	}
	eventually(t, func() bool { return s.Stats().PeakInFlight == 30 })
	begin := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 200*time.Millisecond {
		t.Errorf("Close took %v with requests waiting", d)
	}
	for range 30 {
		if err := <-errs; err == nil {
			t.Error("a request cut off by Close got an answer")
		}
	}
	for _, base := range []string{s.HTTP(), s.HTTPS()} {
		u, _ := url.Parse(base)
		if c, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections", base)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestLoad: thousands of requests wait at once without slowing down.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("2000 connections")
	}
	s := start(t, services.Config{Latency: 0.1}) // weather takes 50 ms
	const n = 2000
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var failed atomic.Int64
	var wg sync.WaitGroup
	begin := time.Now()
	for i := range n {
		wg.Go(func() {
			loc := "L" + strings.Repeat("0", 3) + string(rune('0'+i%10))
			a, err := get(c, s.HTTP()+"/weather?location="+loc)
			if err != nil || a.status != 200 {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	wall := time.Since(begin)
	st := s.Stats()
	t.Logf("%d concurrent weather requests of 50 ms: %v wall, peak %d in flight", n, wall, st.PeakInFlight)
	if failed.Load() != 0 || st.Requests["weather"] != n {
		t.Errorf("%d of %d failed, %d counted", failed.Load(), n, st.Requests["weather"])
	}
	if wall > 10*time.Second {
		t.Errorf("%d requests took %v", n, wall)
	}
}

// TestStartLatency: a negative latency scale is refused.
func TestStartLatency(t *testing.T) {
	if s, err := services.Start(context.Background(), services.Config{Latency: -1}); err == nil {
		s.Close()
		t.Error("Start with Latency -1 succeeded")
	}
}

// ownAddress returns one of this machine's non-loopback IPv4 addresses, or
// skips the test when it has none.
func ownAddress(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.To4()
		}
	}
	t.Skip("this machine has no IPv4 address but loopback")
	return nil
}

// TestServicesListenOnTheirHost: services given a host listen on it, not on
// loopback, and their certificate names it, so that an app on another
// machine of the network reaches them at the URLs POST /initialize gives.
func TestServicesListenOnTheirHost(t *testing.T) {
	t.Parallel()
	ip := ownAddress(t)
	s := start(t, services.Config{Latency: 0.01, Host: ip})
	if want := "http://" + ip.String() + ":"; !strings.HasPrefix(s.HTTP(), want) {
		t.Errorf("plain services at %s, want %s...", s.HTTP(), want)
	}
	res, err := plainClient(t).Get(s.HTTP() + "/surname?q=x")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET /surname on %s: %s", ip, res.Status)
	}
	u, _ := url.Parse(s.HTTPS())
	if u.Hostname() != ip.String() {
		t.Fatalf("TLS services at %s, want host %s", s.HTTPS(), ip)
	}
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.ConnectionState().PeerCertificates[0].VerifyHostname(ip.String()); err != nil {
		t.Errorf("the certificate does not name the host: %v", err)
	}
}
