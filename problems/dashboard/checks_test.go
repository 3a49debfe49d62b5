package dashboard

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/dashboard/data"
	"github.com/tunecon/tunecon/problems/dashboard/services"
)

// TestAnswersFromTheFuture: an answer dated after the benchmarker received it
// is refused, for each timed service. No app can relay one (the services answer
// in real time); the services run an hour ahead here to make them.
func TestAnswersFromTheFuture(t *testing.T) {
	t.Parallel()
	ahead := func() time.Time { return time.Now().Add(time.Hour) }
	svc, err := services.Start(context.Background(), services.Config{Seed: 1, Now: ahead, Latency: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	get := getter(t)
	p := data.Params{Location: "L0001", Req: "r1", Token: strings.Repeat("0a", 16)}
	for _, c := range []struct {
		service, url, token, want string
	}{
		{data.Weather, svc.HTTP() + "/weather?location=" + p.Location, "", "after the answer came"},
		{data.Security, svc.HTTPS() + "/tokens?req=" + url.QueryEscape(p.Req), p.Token, "a one-time token issued after the answer came"},
		{data.Attacked, svc.HTTPS() + "/attacked", p.Token, "a list that began after the answer came"},
	} {
		now := time.Now()
		err := checkAnswer(svc, item{Service: c.service, Data: get(c.url, c.token)}, p, now, now)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s from an hour ahead: %v, want %q", c.service, err, c.want)
		}
	}
}

// getter returns a function that GETs a service's URL, with the token if any,
// and returns the body of its 200.
func getter(t *testing.T) func(url, token string) []byte {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return func(url, token string) []byte {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("X-Security-Token", token)
		}
		res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %q %v", url, res.StatusCode, body, err)
		}
		return body
	}
}

// TestAnswersFromThePublicCode: the services' own answers pass; answers made
// up from the services package's code, with a secret guessed (none, zeros),
// are refused, for each service whose answers are drawn from the secret. The
// services' secret and clock are fixed, so that no made-up forecast (one of
// 276) matches by chance on some runs.
func TestAnswersFromThePublicCode(t *testing.T) {
	t.Parallel()
	period := time.UnixMilli(1764000000000) // a weather period's start
	now := period.Add(time.Second)
	svc, err := services.Start(context.Background(), services.Config{Seed: 1, Secret: []byte("checks test secret"),
		Now: func() time.Time { return now }, Latency: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	get := getter(t)
	p := data.Params{Code: "1234567", Q: "ka", Location: "L0042"}
	for _, c := range []struct {
		service, url string
		made         func(f *services.Facts) any
		want         string
	}{
		{data.Postal, svc.HTTP() + "/postal/" + p.Code, func(f *services.Facts) any {
			address, _ := f.Address(p.Code)
			return services.PostalAnswer{Code: p.Code, Address: address}
		}, "postal: code"},
		{data.Surname, svc.HTTP() + "/surname?q=" + p.Q, func(f *services.Facts) any {
			return services.NamesAnswer{Query: p.Q, Names: f.SearchSurnames(p.Q)}
		}, "surname: query"},
		{data.GivenName, svc.HTTP() + "/givenname?q=" + p.Q, func(f *services.Facts) any {
			return services.NamesAnswer{Query: p.Q, Names: f.SearchGivenNames(p.Q)}
		}, "givenname: query"},
		{data.Weather, svc.HTTP() + "/weather?location=" + p.Location, func(f *services.Facts) any {
			forecast, temp := f.Forecast(p.Location, period)
			return services.WeatherAnswer{Location: p.Location, Date: period.UnixMilli(), Forecast: forecast, Temperature: temp}
		}, "weather: a forecast the service never gave"},
	} {
		if err := checkAnswer(svc, item{Service: c.service, Data: get(c.url, "")}, p, now, now); err != nil {
			t.Errorf("%s: the service's own answer: %v", c.service, err)
		}
		for _, guess := range [][]byte{nil, make([]byte, 32)} {
			made, _ := json.Marshal(c.made(services.NewFacts(guess)))
			err := checkAnswer(svc, item{Service: c.service, Data: made}, p, now, now)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s made up with the secret %q: %v, want %q", c.service, guess, err, c.want)
			}
		}
	}
}

// TestBorrowByGrade: a session gets a free user of the grade it asks for, each
// user once, until none is left.
func TestBorrowByGrade(t *testing.T) {
	t.Parallel()
	m := newModel(data.Default())
	rnd := rand.New(rand.NewPCG(1, 2))
	seen := map[*user]bool{}
	premium := 0
	for u := m.borrow(rnd, data.Premium); u != nil; u = m.borrow(rnd, data.Premium) {
		if u.grade != data.Premium || seen[u] {
			t.Fatalf("borrowed %s user %s (seen before: %v)", u.grade, u.email, seen[u])
		}
		seen[u] = true
		premium++
	}
	want := 0
	for id := int64(1); id <= int64(data.Default().Users); id++ {
		if data.Default().User(id).Grade == data.Premium {
			want++
		}
	}
	if premium != want {
		t.Errorf("%d premium users borrowed, want the data's %d", premium, want)
	}
	if u := m.borrow(rnd, ""); u == nil || u.grade == data.Premium {
		t.Errorf("any grade once the premium users are taken: %+v", u)
	}
}

// TestLeakScan: the scan finds another user's email and the parameters of
// another user's subscriptions, and lets the viewer's own and unknown ones
// go.
func TestLeakScan(t *testing.T) {
	t.Parallel()
	m := newModel(data.Default())
	me, other := m.free[0], m.free[1]
	m.own(me, data.Params{Code: "1000001", Location: "L0001", Token: strings.Repeat("ab", 16)})
	m.own(other, data.Params{Code: "1000002", Location: "L0002", Token: strings.Repeat("cd", 16)})
	me.subs = data.Subscriptions{data.Postal: {Code: "1000001"}, data.Weather: {Location: "L0001"},
		data.Attacked: {Token: strings.Repeat("ab", 16)}}
	for _, c := range []struct {
		body   string
		viewer *user
		leak   bool
	}{
		{`{"code":"1000001","location":"L0001","key":"` + strings.Repeat("ab", 16) + `"}`, me, false},
		{`<p>` + strings.ToUpper(me.email[:1]) + me.email[1:] + `</p>`, me, false},
		{`you@dashboard.test 9999999 L9999 1764000000000`, me, false},
		{`{"last":[{"data":{"code":"1000002"}}]}`, me, true},
		{`<!-- L0002 -->`, me, true},
		{`<i hidden>` + strings.Repeat("cd", 16) + `</i>`, me, true},
		{`<p>` + other.email + `</p>`, me, true},
		{`<p>` + me.email + `</p>`, nil, true},
		{`1000001`, nil, true},
		{`<!-- also online: ` + strings.ToUpper(other.email) + ` -->`, me, true},
		{`<i hidden>` + strings.Repeat("CD", 16) + `</i>`, me, true},
		{`<!-- l0002 -->`, me, true},
		{`<p>` + strings.ToUpper(me.email) + `</p>`, me, false},
	} {
		if err := m.scan([]byte(c.body), c.viewer); (err != nil) != c.leak {
			t.Errorf("scan(%q): %v, want a leak: %v", c.body, err, c.leak)
		}
	}
	// A refused change's answer may show back what its sender typed, in any
	// case, even when it is another user's parameter; once sent, it is not
	// the sender's any more.
	me.sending = data.Params{Location: "l0002"}
	if err := m.scan([]byte(`<p class="error">bad location: l0002</p>`), me); err != nil {
		t.Errorf("the location a refused change sent, shown back: %v", err)
	}
	me.sending = data.Params{}
	if err := m.scan([]byte(`<p class="error">bad location: l0002</p>`), me); err == nil {
		t.Error("another user's location, not sent by the viewer, passed")
	}
}

// TestLeakScanReadings: the scan of an answer reads its headers and its
// texts with the cheap disguises undone: another user's email escaped for a
// URL, another user's /data in base64, in a header.
func TestLeakScanReadings(t *testing.T) {
	t.Parallel()
	m := newModel(data.Default())
	me, other := m.free[0], m.free[1]
	m.own(other, data.Params{Code: "1000002"})
	otherData := base64.StdEncoding.EncodeToString([]byte(`[{"service":"postal","data":{"code":"1000002"}}]`))
	for name, c := range map[string]struct {
		res  *engine.Response
		leak bool
	}{
		"own email escaped": {&engine.Response{Header: http.Header{"X-Who": {url.QueryEscape(me.email)}}, Body: []byte("ok")}, false},
		"an email escaped":  {&engine.Response{Header: http.Header{"X-Last-Viewer": {url.QueryEscape(other.email)}}, Body: []byte("ok")}, true},
		"/data in base64":   {&engine.Response{Header: http.Header{"X-Last-Data": {otherData}}, Body: []byte("ok")}, true},
		"an email in JSON":  {&engine.Response{Body: []byte(`{"who":"` + strings.Replace(other.email, "@", `\u0040`, 1) + `"}`)}, true},
	} {
		if err := m.scanAnswer(c.res, me); (err != nil) != c.leak {
			t.Errorf("%s: %v, want a leak: %v", name, err, c.leak)
		}
	}
}

// TestNegativeDraws: a wrong sign-in is never the right one, a forged session
// id is never the real one (the made-up ones keep its shape), and a bad
// change of services is one the manual refuses, with its status.
func TestNegativeDraws(t *testing.T) {
	t.Parallel()
	m := newModel(data.Default())
	rnd := rand.New(rand.NewPCG(3, 4))
	real := strings.Repeat("0f3a", 16)
	shape := func(s string) string {
		return strings.Map(func(r rune) rune {
			if '0' <= r && r <= '9' {
				return '0'
			}
			return 'a'
		}, s)
	}
	kinds := map[string]bool{}
	for range 2000 {
		u := m.free[rnd.IntN(len(m.free))]
		email, password, what := m.wrongSignin(rnd, u)
		if email == u.email && password == u.password {
			t.Fatalf("%s: the right sign-in", what)
		}
		kinds[what] = true
		u.session = real
		v, what := m.forgeSession(rnd, real, u)
		if v == real || v == "" {
			t.Fatalf("%s: %q", what, v)
		}
		if what != "a session id made of another user's name" && (len(v) != len(real) || shape(v) != shape(real)) {
			t.Fatalf("%s: %q has not the shape of %q", what, v, real)
		}
		kinds[what] = true
	}
	if len(kinds) != 10 {
		t.Errorf("drew %d kinds of negative cases, want 10: %v", len(kinds), kinds)
	}
	valid := map[string]*regexp.Regexp{"code": regexp.MustCompile(`^[0-9]{7}$`), "q": regexp.MustCompile(`^[a-z]{1,8}$`),
		"location": regexp.MustCompile(`^L[0-9]{4}$`), "req": regexp.MustCompile(`^[a-z0-9]{1,16}$`),
		"token": regexp.MustCompile(`^[0-9a-f]{32}$`)}
	for range 1000 {
		u := m.free[rnd.IntN(len(m.free))]
		form, _, status, what := badChange(rnd, u)
		service := form.Get("service")
		ok := data.Allows(u.grade, service)
		for _, name := range params[service] {
			ok = ok && valid[name].MatchString(form.Get(name))
		}
		if ok || (status == http.StatusForbidden) == data.Allows(u.grade, service) {
			t.Fatalf("%s: %v for a %s user, answered %d", what, form, u.grade, status)
		}
	}
}

// params are each service's form fields (MANUAL: "Users, grades and
// sessions").
var params = map[string][]string{data.Postal: {"code"}, data.Postal2: {"code"}, data.Surname: {"q"},
	data.GivenName: {"q"}, data.Weather: {"location"}, data.Security: {"req", "token"}, data.Attacked: {"token"}}

// scanModel returns the facts of services started for tb (seed 1) and a
// model that knows them, as the leak scan's tests need.
func scanModel(tb testing.TB) (*services.Facts, *model) {
	svc, err := services.Start(context.Background(), services.Config{Seed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close() })
	m := newModel(data.Default())
	m.ad.facts.Store(svc.Facts())
	return svc.Facts(), m
}

// TestLeakScanAddresses: an address relayed in the run is another user's
// data unless one of the viewer's own codes has it, whatever the case;
// a text of its shape that no one was given is let go.
func TestLeakScanAddresses(t *testing.T) {
	t.Parallel()
	f, m := scanModel(t)
	me := m.free[0]
	me.subs = data.Subscriptions{data.Postal: {Code: "1000001"}}
	mine, _ := f.Address("1000001")
	theirs, _ := f.Address("2000002")
	m.ad.relayed(item{Service: data.Postal}, data.Params{Code: "1000001"})
	m.ad.relayed(item{Service: data.Postal2}, data.Params{Code: "2000002"})
	for _, c := range []struct {
		body   string
		viewer *user
		leak   bool
	}{
		{`{"address":"` + mine + `"}`, me, false},
		{`// a neighbour: ` + theirs + "\n", me, true},
		{`<!-- ` + strings.ToUpper(theirs) + ` -->`, me, true},
		{`{"address":"` + mine + `"}`, nil, true},
		{`Tokyo, Abc-shi, Def 1-2`, me, false},
	} {
		if err := m.scan([]byte(c.body), c.viewer); (err != nil) != c.leak {
			t.Errorf("scan(%q): %v, want a leak: %v", c.body, err, c.leak)
		}
	}
}

// TestLeakScanNames: two long names relayed for another user's query, as
// words of one text, are a leak, whatever the case; one alone, names the
// viewer's own query finds (now or earlier in the run), names inside longer
// words, short names and names a place can be made of are let go.
func TestLeakScanNames(t *testing.T) {
	t.Parallel()
	f, m := scanModel(t)
	var theirs, short, place []string
	for _, name := range f.SearchSurnames("ka") {
		switch {
		case len(name) < minLeakName:
			short = append(short, name)
		case services.PlaceLike(name):
			place = append(place, name)
		default:
			theirs = append(theirs, name)
		}
	}
	if len(theirs) < 2 || len(short) == 0 {
		t.Fatalf("the surnames of \"ka\" give %d long names and %d short ones: pick another query", len(theirs), len(short))
	}
	m.names.relayed(f, item{Service: data.Surname}, data.Params{Q: "ka"})
	me, mine := m.free[0], &user{subs: data.Subscriptions{data.Surname: {Q: "ka"}}}
	once := &user{subs: data.Subscriptions{}, oldQueries: []string{"ka"}}
	me.subs = data.Subscriptions{data.Surname: {Q: "mi"}}
	two := theirs[0] + `","` + theirs[1]
	for _, c := range []struct {
		body   string
		viewer *user
		leak   bool
	}{
		{`{"names":["` + two + `"]}`, me, true},
		{`<div hidden>` + strings.ToUpper(theirs[0]+" "+theirs[1]) + `</div>`, me, true},
		{`{"names":["` + two + `"]}`, nil, true},
		{`{"names":["` + two + `"]}`, mine, false},
		{`{"names":["` + two + `"]}`, once, false},
		{`<p>` + theirs[0] + `</p>`, me, false},
		{`<p>x` + theirs[0] + ` ` + theirs[1] + `x</p>`, me, false},
		{strings.Join(short, " "), me, false},
		{strings.Join(place, " ") + " " + theirs[0], me, false},
	} {
		if err := m.scan([]byte(c.body), c.viewer); (err != nil) != c.leak {
			t.Errorf("scan(%q): %v, want a leak: %v", c.body, err, c.leak)
		}
	}
}

// BenchmarkLeakScan: the scan every answer of the load passes, over a /data
// of a premium user's size, before any name was relayed and after every
// surname and given name of the common two-letter queries was.
func BenchmarkLeakScan(b *testing.B) {
	f, m := scanModel(b)
	me := m.free[0]
	me.subs = data.Subscriptions{data.Surname: {Q: "ka"}, data.GivenName: {Q: "mi"}}
	sur, _ := json.Marshal(services.NamesAnswer{Query: "ka", Names: f.SearchSurnames("ka")})
	giv, _ := json.Marshal(services.NamesAnswer{Query: "mi", Names: f.SearchGivenNames("mi")})
	addr, _ := f.Address("1000001")
	body := []byte(`[{"service":"postal","data":{"code":"1000001","address":"` + addr + `"}},{"service":"surname","data":` +
		string(sur) + `},{"service":"givenname","data":` + string(giv) + `},{"service":"weather","data":{"location":"L0001",` +
		`"date":"2026-11-28T12:00:00Z","forecast":"cloudy, then rain"}}]`)
	run := func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := m.scan(body, me); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("no names relayed", run)
	for _, a := range []string{"a", "ka", "ki", "ko", "sa", "shi", "su", "ta", "to", "na", "no", "ha", "hi", "ma", "mi", "mo"} {
		for _, s := range []string{data.Surname, data.GivenName} {
			m.names.relayed(f, item{Service: s}, data.Params{Q: a})
		}
	}
	b.Run("names relayed", run)
}
