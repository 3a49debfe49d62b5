package bank

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/bank/data"
)

// Version of the scenario.
const Version = "1"

// Score tags and the rules' numbers (MANUAL: "Scoring").
const (
	tagLogin   = "login"   // a success, with its /mypage verified
	tagRefusal = "refusal" // a refusal, with its notice verified
	tagAsset   = "asset"

	weightLogin   = 5
	weightRefusal = 2
	weightAsset   = 0.1

	penaltyError   = 5
	penaltyTimeout = 1
	maxErrorRate   = 0.01

	startUsers = 8
	growth     = 1.0
	// chunk is how many accounts each virtual user owns; it also caps the
	// virtual users: the accounts run out.
	chunk    = 100
	maxUsers = 1980 // 200,000 / chunk, less the chunks the pre-check uses
	// addrsPerUser is how many addresses of 192.168.0.0/16 each virtual user owns.
	addrsPerUser = 16
	slowRequest  = time.Second
)

var (
	thinkMin = 300 * time.Millisecond
	thinkMax = time.Second
)

// Scenario is the bank benchmark.
type Scenario struct {
	m *model
	// bannedLocks serialise attempts from the initially banned addresses,
	// which virtual users share (the manual promises one attempt per
	// address at a time).
	bannedLocks sync.Map
}

var _ engine.Scenario = (*Scenario)(nil)

// NewScenario returns a scenario for one run.
func NewScenario() (*Scenario, error) {
	st, err := initialState()
	if err != nil {
		return nil, err
	}
	return &Scenario{m: newModel(data.Default(), st)}, nil
}

// Meta declares the rules.
func (s *Scenario) Meta() engine.Meta {
	return engine.Meta{
		Problem: Name, Version: Version,
		Rules: engine.Rules{
			Weights:   map[string]float64{tagLogin: weightLogin, tagRefusal: weightRefusal, tagAsset: weightAsset},
			Deduction: engine.PerError(map[engine.Class]float64{engine.ClassApplication: penaltyError, engine.ClassTimeout: penaltyTimeout}),
			Pass:      []engine.PassRule{engine.MaxErrorRate(maxErrorRate)},
		},
		Assets: Manifest(),
		Load:   engine.LoadPolicy{StartUsers: startUsers, Growth: growth, MaxUsers: maxUsers, SlowRequest: slowRequest},
	}
}

func critical(res *engine.Response, code, format string, args ...any) error {
	e := engine.Criticalf(code, format, args...)
	e.Request, e.URL = res.Endpoint, res.URL.String()
	return e
}

// page checks what every HTML page has: status 200, HTML, its asset tags.
func page(res *engine.Response) (*goquery.Document, error) {
	if err := res.Check(engine.Status(200), engine.ContentType("text/html"),
		engine.Count(`head link[rel="stylesheet"][href="/static/css/bank.css"]`, 1),
		engine.Count(`head script[src="/static/js/bank.js"]`, 1),
		engine.Count(`#header img#logo[src="/static/img/logo.png"]`, 1)); err != nil {
		return nil, err
	}
	return res.Document()
}

// top loads / and its assets and checks the notice: want is the reason the
// page must show, "" for none.
func (s *Scenario) top(ctx context.Context, a *engine.Agent, want string, score func(string, int64)) error {
	res, err := a.Get(ctx, "GET /", "/")
	if err != nil {
		return err
	}
	doc, err := page(res)
	if err != nil {
		return err
	}
	if err := res.Check(engine.HeaderHasToken("Cache-Control", "private"),
		engine.Count(`main form#login-form[method="post"][action="/login"] input[name="login"]`, 1),
		engine.Count(`main form#login-form input[name="password"][type="password"]`, 1)); err != nil {
		return err
	}
	notice := doc.Find("main p#notice")
	switch {
	case want == "" && notice.Length() > 0:
		return critical(res, "notice", "the page shows the notice %q, expected none", notice.AttrOr("data-reason", ""))
	case want != "" && notice.Length() == 0:
		return critical(res, "notice", "the page shows no notice, expected %q", want)
	case want != "":
		if got := notice.AttrOr("data-reason", ""); got != want {
			return critical(res, "notice", "the notice's reason is %q, expected %q", got, want)
		}
		if got := strings.TrimSpace(notice.Text()); got != noticeTexts[want] {
			return critical(res, "notice", "the notice reads %q, expected %q", got, noticeTexts[want])
		}
	}
	fetched, err := a.FetchAssets(ctx, res)
	if err != nil {
		return err
	}
	score(tagAsset, int64(fetched))
	return nil
}

// attempt posts a login from ip and checks the decision against the model:
// the redirect, then /mypage for a success or the notice on / for a refusal.
// id is the user the login names (0: none).
func (s *Scenario) attempt(ctx context.Context, r *engine.Run, a *engine.Agent, id int64, login, password, ip string, score func(string, int64)) error {
	right := id > 0 && password == s.m.cfg.User(id).Password
	if s.m.ipCount(ip) >= data.BanThreshold && strings.HasPrefix(ip, "172.") {
		mu, _ := s.bannedLocks.LoadOrStore(ip, &sync.Mutex{})
		mu.(*sync.Mutex).Lock()
		defer mu.(*sync.Mutex).Unlock()
	}
	want := s.m.expect(id, ip, right)
	sent := r.Now()
	res, err := a.Do(ctx, "POST /login", http.MethodPost, "/login",
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "X-Forwarded-For": {ip}},
		[]byte(url.Values{"login": {login}, "password": {password}}.Encode()))
	if err != nil {
		s.m.unsure(id, ip)
		return err
	}
	to := "/mypage"
	if want != "" {
		to = "/"
	}
	if err := res.Check(engine.Status(http.StatusSeeOther), engine.RedirectTo(func(loc string) string {
		if loc != to {
			return fmt.Sprintf("expected %s (the attempt should be %s)", to, describe(want))
		}
		return ""
	})); err != nil {
		s.m.unsure(id, ip)
		if e := engine.AsError(err); e.Code == "redirect" {
			return critical(res, "decision", "%s", e.Message)
		}
		return err
	}
	prev := s.m.record(id, ip, want, sent, res.Received)
	if want != "" {
		if err := s.top(ctx, a, want, score); err != nil {
			return err
		}
		score(tagRefusal, 1)
		return nil
	}
	if err := s.mypage(ctx, a, login, prev); err != nil {
		return err
	}
	score(tagLogin, 1)
	return nil
}

func describe(reason string) string {
	if reason == "" {
		return "a success"
	}
	return "refused as " + reason
}

// mypage checks /mypage: the login and the previous successful login.
func (s *Scenario) mypage(ctx context.Context, a *engine.Agent, login string, prev success) error {
	res, err := a.Get(ctx, "GET /mypage", "/mypage")
	if err != nil {
		return err
	}
	doc, err := page(res)
	if err != nil {
		return err
	}
	if err := res.Check(engine.HeaderHasToken("Cache-Control", "private")); err != nil {
		return err
	}
	if got := strings.TrimSpace(doc.Find("main #login-name").Text()); got != login {
		return critical(res, "mypage", "/mypage shows the user %q, expected %q", got, login)
	}
	ip := strings.TrimSpace(doc.Find("main dd#last-login-ip").Text())
	at := strings.TrimSpace(doc.Find("main dd#last-login-at").Text())
	if ip != prev.ip {
		return critical(res, "mypage", "/mypage shows the previous login from %q, expected %q", ip, prev.ip)
	}
	if !prev.at.IsZero() {
		if want := prev.at.UTC().Format(data.TimeFormat); at != want {
			return critical(res, "mypage", "/mypage shows the previous login at %q, expected %q", at, want)
		}
		return nil
	}
	t, err := time.ParseInLocation(data.TimeFormat, at, time.UTC)
	if err != nil || t.Before(prev.sent.Add(-time.Second).Truncate(time.Second)) || t.After(prev.received.Add(time.Second)) {
		return critical(res, "mypage", "/mypage shows the previous login at %q, but it happened between %s and %s", at,
			prev.sent.UTC().Format(data.TimeFormat), prev.received.UTC().Format(data.TimeFormat))
	}
	return nil
}

// checkReport compares /report with the model; entries whose outcome is
// unknown may be there or not.
func (s *Scenario) checkReport(ctx context.Context, a *engine.Agent) error {
	res, err := a.Get(ctx, "GET /report", "/report")
	if err != nil {
		return err
	}
	var got struct {
		BannedIPs   []string `json:"banned_ips"`
		LockedUsers []string `json:"locked_users"`
	}
	if err := res.Check(engine.Status(200), engine.JSON(&got)); err != nil {
		return err
	}
	if got.BannedIPs == nil || got.LockedUsers == nil {
		raw := map[string]json.RawMessage{}
		_ = json.Unmarshal(res.Body, &raw)
		if _, ok := raw["banned_ips"]; !ok {
			return critical(res, "report", "/report lacks banned_ips")
		}
		if _, ok := raw["locked_users"]; !ok {
			return critical(res, "report", "/report lacks locked_users")
		}
	}
	banned, locked, maybeIPs, maybeLogins := s.m.report()
	if err := sameList(res, "banned_ips", got.BannedIPs, banned, maybeIPs); err != nil {
		return err
	}
	return sameList(res, "locked_users", got.LockedUsers, locked, maybeLogins)
}

func sameList(res *engine.Response, name string, got, want []string, maybe map[string]bool) error {
	if !slices.IsSorted(got) {
		return critical(res, "report", "%s is not sorted", name)
	}
	if len(slices.Compact(slices.Clone(got))) != len(got) {
		return critical(res, "report", "%s has duplicates", name)
	}
	var kept []string
	for _, g := range got {
		if !maybe[g] {
			kept = append(kept, g)
		}
	}
	if slices.Equal(kept, want) {
		return nil
	}
	missing, extra := diff(want, kept)
	return critical(res, "report", "%s differs from the benchmarker's model: %d missing (first %q), %d extra (first %q)",
		name, len(missing), first(missing), len(extra), first(extra))
}

func diff(want, got []string) (missing, extra []string) {
	w := map[string]bool{}
	for _, x := range want {
		w[x] = true
	}
	g := map[string]bool{}
	for _, x := range got {
		g[x] = true
		if !w[x] {
			extra = append(extra, x)
		}
	}
	for _, x := range want {
		if !g[x] {
			missing = append(missing, x)
		}
	}
	return missing, extra
}

func first(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}
