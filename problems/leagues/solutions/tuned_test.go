// Package solutions_test checks the tuned solution of leagues (SPOILER: ./go) against the Go reference app.
package solutions_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunecon/tunecon/kit/apptest"
	"github.com/tunecon/tunecon/kit/apptest/servers"
	"github.com/tunecon/tunecon/kit/launch"
	"github.com/tunecon/tunecon/problems/leagues/data"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// TestTunedAgreesWithReference starts the Go reference app and the tuned app side by side on the initial data,
// each on its own working copy, and sends both the same requests: first one after the other (reads, every kind of
// write, every refusal), then from many goroutines at once (new tenants with their players and competitions,
// repeated uploads on the huge tenant while players read its rankings, disqualifications, finishes, bills), then
// it reads everything back, restarts the tuned app and reads everything again, and ends with POST /initialize
// (also under load). Answers are compared byte for byte (status, Content-Type, Cache-Control and body), after
// translating the ids the two apps handed out in another order; the ranking reads that race with uploads are
// checked against a model of the uploads instead. The tuned app keeps its data in SQLite, then in MariaDB.
// Under -race the tuned app is built with -race too, and any race it reports fails the test.
func TestTunedAgreesWithReference(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the reference and the tuned apps: not in -short")
	}
	e := newEnv(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the apps' output (last 20,000 bytes):\n%s", tail(e.out.String(), 20000))
		}
	})
	// The two stores side by side: each has apps and a working copy of its
	// own, and a comparison mostly waits on them.
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		e.compare(t, "", true)
	})
	t.Run("mariadb", func(t *testing.T) {
		t.Parallel()
		maria, err := servers.StartMariaDB(context.Background(), t.TempDir(), e.log)
		servers.Require(t, err)
		t.Cleanup(maria.Stop)
		dsn, err := maria.CreateDatabase(context.Background(), "leagues_tuned")
		if err != nil {
			t.Fatal(err)
		}
		e.compare(t, dsn, false)
	})
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// env is what every run shares: the built apps, the initial data and the key.
type env struct {
	webapp, initial  string
	refBin, tunedBin string
	in               *data.Initial
	key              *rsa.PrivateKey
	out              *apptest.Buffer
	log              *apptest.Buffer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{webapp: filepath.Join(root, "problems", "leagues", "webapp"), out: &apptest.Buffer{}}
	e.log = e.out
	e.initial = filepath.Join(e.webapp, "data", "initial")
	if _, err := data.Ensure(e.initial, data.Default()); err != nil {
		t.Fatal(err)
	}
	if e.in, err = data.Default().Initial(); err != nil {
		t.Fatal(err)
	}
	if e.key, err = keys.Private(); err != nil {
		t.Fatal(err)
	}
	build := t.TempDir()
	e.refBin, e.tunedBin = filepath.Join(build, "leagues-ref"), filepath.Join(build, "leagues-tuned")
	if err := launch.BuildGo(context.Background(), filepath.Join(e.webapp, "go"), e.refBin, e.log); err != nil {
		t.Fatalf("%v\n%s", err, e.out.String())
	}
	args := []string{"build", "-o", e.tunedBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = filepath.Join(root, "problems", "leagues", "solutions", "go")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the tuned app: %v\n%s", err, out)
	}
	return e
}

// start starts an app and returns it; it is stopped at the end of the test if not before.
func (e *env) start(t *testing.T, name, bin string, vars ...string) *launch.App {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = launch.Env(append([]string{"LEAGUES_ADDR=127.0.0.1:0", "LEAGUES_ROOT=" + e.webapp,
		"LEAGUES_INITIAL_DIR=" + e.initial}, vars...)...)
	app, err := launch.Start(context.Background(), cmd, name, e.log)
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(e.out.String(), 5000))
	}
	t.Cleanup(func() { stopApp(t, app) })
	return app
}

func stopApp(t *testing.T, app *launch.App) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := app.Stop(ctx); err != nil {
		t.Errorf("stopping: %v", err)
	}
}

// compare runs every phase against a fresh reference app and a fresh tuned app whose store is at dsn ("" for a
// SQLite file); all of them if full, else the sequential ones only.
func (e *env) compare(t *testing.T, dsn string, full bool) {
	work := t.TempDir()
	ref := e.start(t, "ref", e.refBin, "LEAGUES_DB=sqlite:"+filepath.Join(work, "ref.db"),
		"LEAGUES_TENANT_DIR="+filepath.Join(work, "ref-tenants"))
	if dsn == "" {
		dsn = "sqlite:" + filepath.Join(work, "tuned.db")
	}
	startTuned := func() *launch.App { return e.start(t, "tuned", e.tunedBin, "LEAGUES_DB="+dsn) }
	tuned := startTuned()
	h := newHarness(t, e, ref.URL, tuned.URL)
	defer func() {
		if strings.Contains(e.out.String(), "DATA RACE") {
			t.Error("the tuned app reported a data race (its output is in the log)")
		}
		t.Logf("%d requests compared, %d ranking reads checked against the model", h.compared.Load(), h.modelled.Load())
	}()

	h.sequential()
	if t.Failed() {
		return
	}
	t.Logf("one after the other: %d requests compared", h.compared.Load())
	tenants := append(h.initialTenants(), tenantInfo{name: "parity-new"}, tenantInfo{name: "a-1"})
	if full {
		tenants = append(tenants, h.concurrent()...)
	}
	cache := map[string]reply{}
	h.sweep(tenants, cache, false)

	// A restart keeps every acknowledged write.
	stopApp(t, tuned)
	tuned = startTuned()
	h.urls[1] = tuned.URL
	h.sweep(tenants, cache, true)

	// POST /initialize restores the initial data.
	h.initialize()
	h.sweep(h.initialTenants(), map[string]reply{}, false)
	h.checkInitialBills()
	for _, tn := range tenants[len(h.e.in.Tenants):] {
		h.both(call{method: "GET", host: tn.name, path: "/api/organizer/players", aud: tn.name, role: keys.RoleOrganizer, sub: "o", status: 404})
	}
	huge := h.e.in.Tenant(1).Name
	r, _ := h.both(call{method: "POST", host: huge, path: "/api/organizer/players", aud: huge, role: keys.RoleOrganizer, sub: "o",
		body: `{"display_names":["After Initialize"]}`, status: 200})
	if !strings.Contains(r.body, fmt.Sprintf(`"id":%d,`, h.e.in.NextID)) {
		t.Errorf("after /initialize the first new player is %s, want id %d", r.body, h.e.in.NextID)
	}
	if full {
		h.initializeUnderLoad()
		h.initialize()
		h.sweep(h.initialTenants()[:3], map[string]reply{}, false)
		h.checkInitialBills()
	}
}

// harness sends requests to both apps: index 0 is the reference, 1 the tuned app.
type harness struct {
	t      *testing.T
	e      *env
	urls   [2]string
	client *http.Client

	mu sync.Mutex
	// gen and ten translate the ids the apps handed out: players' and competitions' (gen) and tenants' (ten).
	// gen[0] maps a reference id to the tuned app's, gen[1] back. Ids the apps did not hand out are the same.
	gen, ten [2]map[int64]int64
	tokens   map[string]string
	// finished holds the initial competitions the sequential phase finished.
	finished map[int64]bool

	compared, modelled atomic.Int64
}

func newHarness(t *testing.T, e *env, ref, tuned string) *harness {
	h := &harness{t: t, e: e, urls: [2]string{ref, tuned}, tokens: map[string]string{}, finished: map[int64]bool{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 2 * time.Minute}}
	for i := range 2 {
		h.gen[i], h.ten[i] = map[int64]int64{}, map[int64]int64{}
	}
	return h
}

// call is one request, written with the reference's ids: in path, sub, body and csv, {g:N} stands for the
// player's or competition's id N and {t:N} for the tenant's id N, each app's own.
type call struct {
	method, host, path string
	aud, role, sub     string // the token's claims; no token when role is ""
	raw                string // a token as it is, instead
	body, ctype        string
	csv                string // a CSV file, sent as the multipart part "scores"
	status             int    // the status both must answer; 0: any, the same
	hostAs             string // the Host header's label, if not host
}

func (c call) String() string { return c.method + " " + c.host + " " + c.path }

type reply struct {
	status int
	header http.Header
	body   string
}

var placeholder = regexp.MustCompile(`\{([gt]):(\d+)\}`)

// render writes s for app side.
func (h *harness) render(side int, s string) string {
	if side == 0 || !strings.Contains(s, "{") {
		return placeholder.ReplaceAllString(s, "$2")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		sub := placeholder.FindStringSubmatch(m)
		id, _ := strconv.ParseInt(sub[2], 10, 64)
		mp := h.gen[0]
		if sub[1] == "t" {
			mp = h.ten[0]
		}
		if v, ok := mp[id]; ok {
			return strconv.FormatInt(v, 10)
		}
		return sub[2]
	})
}

func (h *harness) token(side int, c call) string {
	if c.raw != "" {
		return c.raw
	}
	if c.role == "" {
		return ""
	}
	sub := h.render(side, c.sub)
	k := c.aud + "\x00" + c.role + "\x00" + sub
	h.mu.Lock()
	defer h.mu.Unlock()
	if tok, ok := h.tokens[k]; ok {
		return tok
	}
	tok, err := keys.Sign(h.e.key, keys.Claims{Sub: sub, Aud: c.aud, Role: c.role, Exp: time.Now().Add(3 * time.Hour).Unix()})
	if err != nil {
		h.t.Fatal(err)
	}
	h.tokens[k] = tok
	return tok
}

const boundary = "tuned-test-boundary-0123456789"

func (h *harness) request(side int, c call) *http.Request {
	body, ctype := h.render(side, c.body), c.ctype
	if c.csv != "" || c.ctype == "multipart" {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		mw.SetBoundary(boundary)
		fw, _ := mw.CreateFormFile("scores", "scores.csv")
		io.WriteString(fw, h.render(side, c.csv))
		mw.Close()
		body, ctype = b.String(), mw.FormDataContentType()
	} else if ctype == "" && c.body != "" {
		ctype = "application/json"
	}
	req, err := http.NewRequest(c.method, h.urls[side]+h.render(side, c.path), strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(req.URL.Host)
	label := c.host
	if c.hostAs != "" {
		label = c.hostAs
	}
	req.Host = label + ".t.localhost:" + port
	if tok := h.token(side, c); tok != "" {
		req.AddCookie(&http.Cookie{Name: keys.CookieName, Value: tok})
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	return req
}

func (h *harness) send(side int, c call) (reply, error) {
	res, err := h.client.Do(h.request(side, c))
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return reply{res.StatusCode, res.Header, string(b)}, err
}

// hooks are called around each app's request of a pair.
type hooks struct {
	before func(side int)
	after  func(side int, r reply)
}

// pair sends c to both apps at once and returns their answers, the tuned app's ids translated to the reference's.
func (h *harness) pair(c call, hk hooks) (reply, reply) {
	var out [2]reply
	var errs [2]error
	var wg sync.WaitGroup
	for side := range 2 {
		wg.Go(func() {
			if hk.before != nil {
				hk.before(side)
			}
			out[side], errs[side] = h.send(side, c)
			if hk.after != nil && errs[side] == nil {
				hk.after(side, out[side])
			}
		})
	}
	wg.Wait()
	for side, err := range errs {
		if err != nil {
			h.t.Fatalf("%s to %s: %v", c, []string{"the reference", "the tuned app"}[side], err)
		}
	}
	h.learn(c, out[0], out[1])
	out[1].body = h.translate(c.path, out[1].body)
	return out[0], out[1]
}

var (
	anyID   = regexp.MustCompile(`"id":(\d+)`)
	idField = regexp.MustCompile(`"(id|player_id|competition_id)":(\d+)|"subject":"(\d+)"|"tenant":\{"id":(\d+)`)
)

// learn maps the ids the two apps gave to the same new players, competition or tenant.
func (h *harness) learn(c call, ref, tun reply) {
	if c.method != "POST" || ref.status != 200 || tun.status != 200 {
		return
	}
	mp := &h.gen
	switch c.path {
	case "/api/organizer/players", "/api/organizer/competitions":
	case "/api/admin/tenants":
		mp = &h.ten
	default:
		return
	}
	a, b := anyID.FindAllStringSubmatch(ref.body, -1), anyID.FindAllStringSubmatch(tun.body, -1)
	if len(a) != len(b) {
		return // compared later
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range a {
		r, _ := strconv.ParseInt(a[i][1], 10, 64)
		u, _ := strconv.ParseInt(b[i][1], 10, 64)
		mp[0][r], mp[1][u] = u, r
	}
}

// translate writes the tuned app's ids in body as the reference's.
func (h *harness) translate(path, body string) string {
	admin := strings.HasPrefix(path, "/api/admin/")
	h.mu.Lock()
	defer h.mu.Unlock()
	back := func(mp map[int64]int64, s string) string {
		id, _ := strconv.ParseInt(s, 10, 64)
		if v, ok := mp[id]; ok {
			return strconv.FormatInt(v, 10)
		}
		return s
	}
	return idField.ReplaceAllStringFunc(body, func(m string) string {
		sub := idField.FindStringSubmatch(m)
		switch {
		case sub[4] != "":
			return `"tenant":{"id":` + back(h.ten[1], sub[4])
		case sub[3] != "":
			return `"subject":"` + back(h.gen[1], sub[3]) + `"`
		case sub[1] == "id" && admin:
			return `"id":` + back(h.ten[1], sub[2])
		}
		return `"` + sub[1] + `":` + back(h.gen[1], sub[2])
	})
}

// both sends c to both apps and checks that they answer alike.
func (h *harness) both(c call) (reply, reply) {
	ref, tun := h.pair(c, hooks{})
	h.same(c, ref, tun)
	return ref, tun
}

// same checks that two answers to c are alike.
func (h *harness) same(c call, ref, tun reply) {
	h.t.Helper()
	h.compared.Add(1)
	if ref.status != tun.status || (c.status != 0 && ref.status != c.status) {
		h.t.Errorf("%s: reference %d, tuned %d, want %d\nreference: %.300s\ntuned:     %.300s", c, ref.status, tun.status, c.status, ref.body, tun.body)
		return
	}
	api := strings.HasPrefix(c.path, "/api/") || c.path == "/initialize"
	if api {
		for _, name := range []string{"Content-Type", "Cache-Control"} {
			if ref.header.Get(name) != tun.header.Get(name) || (name == "Cache-Control" && tun.header.Get(name) != "private") {
				h.t.Errorf("%s: %s %q from the reference, %q from the tuned app", c, name, ref.header.Get(name), tun.header.Get(name))
			}
		}
	}
	if ref.body != tun.body {
		i := 0
		for i < len(ref.body) && i < len(tun.body) && ref.body[i] == tun.body[i] {
			i++
		}
		from := max(0, i-100)
		h.t.Errorf("%s: the bodies differ at byte %d\nreference: …%.300s\ntuned:     …%.300s", c, i, ref.body[from:], tun.body[from:])
	}
}

// initialize sends POST /initialize to both apps.
func (h *harness) initialize() {
	h.t.Helper()
	for side, lang := range []string{"go", "go"} {
		start := time.Now()
		r, err := h.send(side, call{method: "POST", host: "anything", path: "/initialize"})
		if err != nil {
			h.t.Fatal(err)
		}
		if want := `{"lang":"` + lang + `"}`; r.status != 200 || r.body != want || r.header.Get("Cache-Control") != "private" {
			h.t.Errorf("side %d: /initialize: %d %q Cache-Control %q, want 200 %s", side, r.status, r.body, r.header.Get("Cache-Control"), want)
		}
		if d := time.Since(start); side == 1 {
			h.t.Logf("the tuned app's POST /initialize took %v", d.Round(time.Millisecond))
			if d > 30*time.Second {
				h.t.Errorf("the tuned app's POST /initialize took %v, more than the manual's 30 s", d)
			}
		}
	}
}

// The phases.

type tenantInfo struct {
	id   int64 // the reference's
	name string
}

func (h *harness) initialTenants() []tenantInfo {
	var out []tenantInfo
	for _, tn := range h.e.in.Tenants {
		out = append(out, tenantInfo{tn.ID, tn.Name})
	}
	return out
}

// sequential sends requests one after the other: reads of the initial data, refusals, and every kind of write.
func (h *harness) sequential() {
	in := h.e.in
	huge, small := in.Tenant(1), in.Tenant(2)
	var finished, running, empty data.Competition
	for _, c := range huge.Competitions {
		if c.Finished() && finished.ID == 0 {
			finished = c
		}
		if !c.Finished() && c.Uploads > 0 && running.ID == 0 {
			running = c
		}
		if c.Uploads == 0 && empty.ID == 0 {
			empty = c
		}
	}
	var disqualified, player data.Player
	for _, pl := range huge.Players {
		if pl.Disqualified && disqualified.ID == 0 {
			disqualified = pl
		}
		if !pl.Disqualified && player.ID == 0 {
			player = pl
		}
	}
	hn := huge.Name
	me := func(c call) call { c.aud, c.role, c.sub = hn, keys.RolePlayer, fmt.Sprint(player.ID); return c }
	org := func(c call) call { c.aud, c.role, c.sub = hn, keys.RoleOrganizer, "boss"; return c }
	admin := func(c call) call { c.aud, c.role, c.sub = keys.AdminAudience, keys.RoleAdmin, "root"; return c }
	get := func(host, path string) call { return call{method: "GET", host: host, path: path, status: 200} }

	// Reads of the initial data.
	h.both(me(get(hn, "/api/me")))
	h.both(org(get(hn, "/api/me")))
	h.both(admin(get("admin", "/api/me")))
	h.both(me(get(hn, "/api/player/competitions")))
	h.both(org(get(hn, "/api/organizer/competitions")))
	for _, after := range []string{"", "?rank_after=", "?rank_after=0", "?rank_after=000", "?rank_after=99", "?rank_after=100",
		"?rank_after=2600", "?rank_after=99999", "?rank_after=999999999999999999"} {
		h.both(me(get(hn, fmt.Sprintf("/api/player/competitions/%d/ranking%s", running.ID, after))))
	}
	h.both(me(get(hn, fmt.Sprintf("/api/player/competitions/%d/ranking", finished.ID))))
	if empty.ID != 0 {
		h.both(me(get(hn, fmt.Sprintf("/api/player/competitions/%d/ranking", empty.ID))))
	}
	for _, id := range []int64{player.ID, disqualified.ID, huge.Players[len(huge.Players)-1].ID} {
		h.both(me(get(hn, fmt.Sprintf("/api/player/players/%d", id))))
	}
	h.both(org(get(hn, "/api/organizer/players")))
	h.both(org(get(hn, "/api/organizer/billing")))
	sorg := call{aud: small.Name, role: keys.RoleOrganizer, sub: "o"}
	for _, path := range []string{"/api/organizer/billing", "/api/organizer/players", "/api/organizer/competitions"} {
		c := sorg
		c.method, c.host, c.path, c.status = "GET", small.Name, path, 200
		h.both(c)
	}
	for _, q := range []string{"", "?before=", "?before=50", "?before=1", "?before=0", "?before=2", "?before=000101", "?before=101",
		"?before=999999999999999999"} {
		h.both(admin(get("admin", "/api/admin/billing"+q)))
	}
	// The host's label in capitals is the same tenant.
	c := me(get(hn, "/api/me"))
	c.hostAs = strings.ToUpper(hn)
	h.both(c)

	// Refusals, in the manual's order of checks.
	for _, c := range h.refusals(hn, small.Name, player, disqualified, running) {
		h.both(c)
	}

	// Writes, in the same order to both.
	r, _ := h.both(org(call{method: "POST", host: hn, path: "/api/organizer/players",
		body: `{"display_names":["Ann <&>","名前 \u2028 x","q\"uote\\","tab\u00a0é","😀 emoji","` + strings.Repeat("x", 64) + `"]}`, status: 200}))
	ids := anyID.FindAllStringSubmatch(r.body, -1)
	if len(ids) != 6 {
		h.t.Fatalf("POST players: %s", r.body)
	}
	np := func(i int) string { return "{g:" + ids[i][1] + "}" }
	r, _ = h.both(org(call{method: "POST", host: hn, path: "/api/organizer/competitions", body: `{"title":"Parity Cup <&> \"x\" 決勝"}`, status: 200}))
	comp := "{g:" + anyID.FindStringSubmatch(r.body)[1] + "}"
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/competitions", body: `{"title":"` + strings.Repeat("t", 128) + `"}`, status: 200}))
	upload := func(csv string, status int) {
		h.both(org(call{method: "POST", host: hn, path: "/api/organizer/competitions/" + comp + "/scores", csv: csv, ctype: "multipart", status: status}))
	}
	ranking := func() {
		h.both(me(get(hn, "/api/player/competitions/"+comp+"/ranking")))
		h.both(me(get(hn, "/api/player/competitions/"+comp+"/ranking?rank_after=1")))
	}
	ranking()
	upload(fmt.Sprintf("player_id,score\n%d,500\n%s,700\n%s,700\r\n%d,100\n%d,0\n%s,999999999", player.ID, np(0), np(1), player.ID, disqualified.ID, np(2)), 200)
	ranking()
	h.both(me(get(hn, "/api/player/players/"+np(1))))
	h.both(me(get(hn, fmt.Sprintf("/api/player/players/%d", player.ID))))
	upload(fmt.Sprintf("player_id,score\n%s,42\n", np(2)), 200)
	ranking()
	upload("player_id,score", 200)
	ranking()
	upload("player_id,score\r\n", 200)
	for _, bad := range []string{"", "\n", "player_id;score\n1,1", "player_id,score\n1,-1", "player_id,score\n999999,1",
		"player_id,score\n\n", fmt.Sprintf("player_id,score\n%d,1\n\n", player.ID), fmt.Sprintf("player_id,score\n%d,01", player.ID),
		fmt.Sprintf("player_id,score\n0%d,1", player.ID), fmt.Sprintf("player_id,score\n%d,1000000000", player.ID),
		fmt.Sprintf("player_id,score\n%d, 1", player.ID), fmt.Sprintf("player_id,score\n%d,1,2", player.ID),
		fmt.Sprintf("player_id,score\n%d,1", small.Players[0].ID), "Player_id,score\n", "player_id,score,\n",
		fmt.Sprintf("player_id,score\n%d,\"1\"", player.ID), "player_id,score\n\xff,1"} {
		upload(bad, 400)
	}
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/competitions/" + comp + "/scores", body: "player_id,score\n", ctype: "text/csv", status: 400}))
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/competitions/" + comp + "/scores", status: 400}))
	var rows strings.Builder
	rows.WriteString("player_id,score\n")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 4000 {
		fmt.Fprintf(&rows, "%d,%d\n", huge.Players[rng.IntN(len(huge.Players))].ID, 100*rng.IntN(50))
	}
	upload(rows.String(), 200)
	ranking()
	for _, after := range []string{"?rank_after=100", "?rank_after=2500", "?rank_after=4000"} {
		h.both(me(get(hn, "/api/player/competitions/"+comp+"/ranking"+after)))
	}
	upload(fmt.Sprintf("player_id,score\n%d,9\n%s,9\n", player.ID, np(3)), 200)
	ranking()
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/competitions/" + comp + "/finish", status: 200}))
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/competitions/" + comp + "/finish", status: 409}))
	upload(fmt.Sprintf("player_id,score\n%d,9\n", player.ID), 409)
	upload("not a csv", 409)
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/competitions/1/scores", csv: "player_id,score\n", status: 404}))
	h.both(org(call{method: "POST", host: hn, path: fmt.Sprintf("/api/organizer/competitions/%d/finish", small.Competitions[0].ID), status: 404}))
	h.both(org(call{method: "POST", host: hn, path: fmt.Sprintf("/api/organizer/competitions/%d/finish", finished.ID), status: 409}))
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/competitions/01/finish", status: 404}))
	h.both(org(get(hn, "/api/organizer/billing")))
	h.both(org(get(hn, "/api/organizer/competitions")))
	h.both(me(get(hn, "/api/player/competitions/"+comp+"/ranking")))
	h.both(me(get(hn, fmt.Sprintf("/api/player/players/%d", player.ID))))
	h.both(org(get(hn, "/api/organizer/billing")))
	// Finishing an initial running competition makes its bill from the initial visits.
	h.both(org(call{method: "POST", host: hn, path: fmt.Sprintf("/api/organizer/competitions/%d/finish", running.ID), status: 200}))
	h.finished[running.ID] = true
	h.both(org(get(hn, "/api/organizer/billing")))
	h.both(admin(get("admin", "/api/admin/billing")))

	// Disqualification.
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/players/" + np(0) + "/disqualify", status: 200}))
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/players/" + np(0) + "/disqualify", status: 200}))
	h.both(org(call{method: "POST", host: hn, path: fmt.Sprintf("/api/organizer/players/%d/disqualify", disqualified.ID), status: 200}))
	victim := call{aud: hn, role: keys.RolePlayer, sub: np(0), status: 403}
	for _, path := range []string{"/api/me", "/api/player/competitions", "/api/player/players/" + np(0), "/api/player/players/999999",
		"/api/player/competitions/" + comp + "/ranking", "/api/player/competitions/999999/ranking?rank_after=x"} {
		c := victim
		c.method, c.host, c.path = "GET", hn, path
		h.both(c)
	}
	h.both(me(get(hn, "/api/player/players/"+np(0))))
	h.both(org(get(hn, "/api/organizer/players")))
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/players/999999/disqualify", status: 404}))
	h.both(org(call{method: "POST", host: hn, path: fmt.Sprintf("/api/organizer/players/%d/disqualify", small.Players[0].ID), status: 404}))
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/players/x/disqualify", status: 404}))
	h.both(org(call{method: "GET", host: hn, path: "/api/organizer/players/" + np(1) + "/disqualify", status: 404}))

	// Bad bodies.
	for _, body := range []string{``, `{`, `[]`, `null`, `{}`, `{"display_names":[]}`, `{"display_names":[1]}`, `{"display_names":null}`,
		`{"display_names":["a\u0007"]}`, `{"display_names":[""]}`, `{"display_names":["` + strings.Repeat("x", 65) + `"]}`,
		`{"display_names":["a\u007f"]}`, "{\"display_names\":[\"\xff\"]}", `{"display_names":["ok"]} x`,
		`{"display_names":[` + strings.TrimSuffix(strings.Repeat(`"n",`, 101), ",") + `]}`} {
		h.both(org(call{method: "POST", host: hn, path: "/api/organizer/players", body: body, status: 400}))
	}
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/players", body: `{"DISPLAY_NAMES":["Case"],"other":1}`, status: 200}))
	h.both(org(call{method: "POST", host: hn, path: "/api/organizer/players", body: `{"display_names":[` + strings.TrimSuffix(strings.Repeat(`"n",`, 100), ",") + `]}`, status: 200}))
	for _, body := range []string{``, `{}`, `{"title":""}`, `{"title":1}`, `{"title":"` + strings.Repeat("t", 129) + `"}`, `{"title":"a\nb"}`} {
		h.both(org(call{method: "POST", host: hn, path: "/api/organizer/competitions", body: body, status: 400}))
	}

	// Tenants.
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"name":"parity-new","display_name":"Parity & Co <b>"}`, 200},
		{`{"name":"parity-new","display_name":"Again"}`, 409},
		{`{"name":"parity-new","display_name":""}`, 400},
		{`{"name":"admin","display_name":"No"}`, 400},
		{`{"name":"a","display_name":"Short"}`, 400},
		{`{"name":"-ab","display_name":"x"}`, 400},
		{`{"name":"ab-","display_name":"x"}`, 400},
		{`{"name":"Ab","display_name":"x"}`, 400},
		{`{"name":"a_b","display_name":"x"}`, 400},
		{`{"name":"` + "a" + strings.Repeat("b", 63) + `","display_name":"x"}`, 400},
		{`{"name":"` + "a" + strings.Repeat("b", 62) + `","display_name":"Longest name"}`, 200},
		{`{"name":"a-1","display_name":"Dash"}`, 200},
		{`{"name":"` + hn + `","display_name":"Taken"}`, 409},
		{`{"display_name":"No name"}`, 400},
	} {
		h.both(admin(call{method: "POST", host: "admin", path: "/api/admin/tenants", body: c.body, status: c.status}))
	}
	newOrg := func(c call) call { c.aud, c.role, c.sub = "parity-new", keys.RoleOrganizer, "n"; return c }
	h.both(newOrg(get("parity-new", "/api/organizer/players")))
	h.both(newOrg(get("parity-new", "/api/organizer/billing")))
	h.both(newOrg(get("parity-new", "/api/me")))
	r, _ = h.both(newOrg(call{method: "POST", host: "parity-new", path: "/api/organizer/players", body: `{"display_names":["First","Second"]}`, status: 200}))
	first := "{g:" + anyID.FindStringSubmatch(r.body)[1] + "}"
	r, _ = h.both(newOrg(call{method: "POST", host: "parity-new", path: "/api/organizer/competitions", body: `{"title":"New Cup"}`, status: 200}))
	newComp := "{g:" + anyID.FindStringSubmatch(r.body)[1] + "}"
	h.both(newOrg(call{method: "POST", host: "parity-new", path: "/api/organizer/competitions/" + newComp + "/scores", csv: "player_id,score\n" + first + ",10\n", status: 200}))
	newMe := call{aud: "parity-new", role: keys.RolePlayer, sub: first}
	for _, path := range []string{"/api/me", "/api/player/competitions", "/api/player/competitions/" + newComp + "/ranking", "/api/player/players/" + first} {
		c := newMe
		c.method, c.host, c.path, c.status = "GET", "parity-new", path, 200
		h.both(c)
	}
	h.both(newOrg(call{method: "POST", host: "parity-new", path: "/api/organizer/competitions/" + newComp + "/finish", status: 200}))
	h.both(newOrg(get("parity-new", "/api/organizer/billing")))
	// A player of one tenant is no player of another.
	c = newMe
	c.method, c.host, c.path, c.aud, c.status = "GET", hn, "/api/me", hn, 401
	h.both(c)
	for _, q := range []string{"", "?before=101", "?before={t:101}", "?before=1000"} {
		h.both(admin(get("admin", "/api/admin/billing"+q)))
	}

	// The single-page app (the tuned app adds caching headers: bodies are compared).
	for _, path := range []string{"/", "/static/leagues.js", "/static/leagues.css"} {
		h.both(call{method: "GET", host: hn, path: path, status: 200})
	}
	for _, path := range []string{"/static/nope.js", "/static/", "/static/index.html"} {
		h.both(call{method: "GET", host: hn, path: path})
	}
	h.both(call{method: "GET", host: "admin", path: "/initialize", status: 404})
}

// refusals are requests both apps must refuse alike.
func (h *harness) refusals(hn, small string, player, disqualified data.Player, running data.Competition) []call {
	hour := time.Now().Add(time.Hour).Unix()
	claims := func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) }
	rs := func(header, payload string) string { return signRS256(h.t, h.e.key, header, payload) }
	rsHeader := `{"alg":"RS256","typ":"JWT"}`
	other, err := rsa.GenerateKey(crand.Reader, 2048)
	if err != nil {
		h.t.Fatal(err)
	}
	valid := map[string]any{"sub": fmt.Sprint(player.ID), "aud": hn, "role": "player", "exp": hour}
	validTok := rs(rsHeader, claims(valid))
	parts := strings.Split(validTok, ".")
	otherBody := base64.RawURLEncoding.EncodeToString([]byte(claims(map[string]any{"sub": fmt.Sprint(player.ID + 1), "aud": hn, "role": "player", "exp": hour})))
	tampered := parts[0] + "." + otherBody + "." + parts[2]
	none := b64(`{"alg":"none","typ":"JWT"}`) + "." + b64(claims(valid)) + "."
	mac := hmac.New(sha256.New, keys.PublicPEM())
	hsSigned := b64(`{"alg":"HS256","typ":"JWT"}`) + "." + b64(claims(valid))
	mac.Write([]byte(hsSigned))
	hs := hsSigned + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	foreign := signRS256(h.t, other, rsHeader, claims(valid))
	with := func(k string, v any) string {
		m := map[string]any{}
		for a, b := range valid {
			m[a] = b
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return rs(rsHeader, claims(m))
	}
	pc := "/api/player/competitions"
	raw := func(host, path, tok string, status int) call {
		return call{method: "GET", host: host, path: path, raw: tok, status: status}
	}
	return []call{
		raw(hn, pc, validTok, 200),
		raw(hn, pc, with("aud", []string{"x", hn}), 200),
		raw(hn, pc, with("aud", []string{"x"}), 401),
		raw(hn, pc, with("nbf", time.Now().Add(time.Hour).Unix()), 401),
		raw(hn, pc, with("nbf", time.Now().Add(-time.Hour).Unix()), 200),
		raw(hn, pc, with("iat", time.Now().Add(time.Hour).Unix()), 200),
		raw(hn, pc, with("exp", nil), 401),
		raw(hn, pc, with("exp", time.Now().Add(-time.Minute).Unix()), 401),
		raw(hn, pc, with("exp", "tomorrow"), 401),
		raw(hn, pc, with("sub", ""), 401),
		raw(hn, pc, with("sub", "0"+fmt.Sprint(player.ID)), 401),
		raw(hn, pc, with("sub", 12), 401),
		raw(hn, pc, with("role", "Player"), 401),
		raw(hn, pc, with("role", nil), 401),
		raw(hn, pc, rs(`{"alg":"RS384","typ":"JWT"}`, claims(valid)), 401),
		raw(hn, pc, tampered, 401),
		raw(hn, pc, none, 401),
		raw(hn, pc, hs, 401),
		raw(hn, pc, foreign, 401),
		raw(hn, pc, "not.a.token", 401),
		raw(hn, pc, "", 401),
		{method: "GET", host: hn, path: "/api/organizer/players", status: 401},
		{method: "GET", host: hn, path: "/api/organizer/players", aud: small, role: keys.RoleOrganizer, sub: "o", status: 401},
		{method: "GET", host: hn, path: "/api/organizer/players", aud: hn, role: "owner", sub: "o", status: 401},
		{method: "GET", host: hn, path: "/api/organizer/players", aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root", status: 401},
		{method: "GET", host: hn, path: pc, aud: hn, role: keys.RolePlayer, sub: "999999", status: 401},
		{method: "GET", host: hn, path: pc, aud: hn, role: keys.RolePlayer, sub: "boss", status: 401},
		{method: "GET", host: "admin", path: "/api/admin/billing", aud: keys.AdminAudience, role: keys.RolePlayer, sub: "1", status: 401},
		{method: "GET", host: hn, path: "/api/organizer/players", aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player.ID), status: 403},
		{method: "GET", host: hn, path: pc, aud: hn, role: keys.RoleOrganizer, sub: "o", status: 403},
		{method: "GET", host: hn, path: pc, aud: hn, role: keys.RoleAdmin, sub: "root", status: 403},
		{method: "GET", host: "admin", path: "/api/admin/billing", aud: keys.AdminAudience, role: keys.RoleOrganizer, sub: "o", status: 403},
		{method: "POST", host: "admin", path: "/api/admin/tenants", aud: keys.AdminAudience, role: keys.RoleOrganizer, sub: "o", body: `{}`, status: 403},
		{method: "GET", host: hn, path: "/api/me", aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(disqualified.ID), status: 403},
		{method: "GET", host: hn, path: pc, aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(disqualified.ID), status: 403},
		{method: "GET", host: hn, path: "/api/player/competitions/1/ranking?rank_after=x", aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(disqualified.ID), status: 403},
		{method: "GET", host: "no-such-tenant", path: "/api/me", aud: "no-such-tenant", role: keys.RoleOrganizer, sub: "o", status: 404},
		{method: "GET", host: "no-such-tenant", path: "/api/me", status: 404},
		{method: "GET", host: hn, path: "/api/player/competitions/1/ranking", aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player.ID), status: 404},
		{method: "GET", host: hn, path: "/api/player/competitions/0/ranking", aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player.ID), status: 404},
		{method: "GET", host: hn, path: fmt.Sprintf("/api/player/competitions/%d/ranking?rank_after=-1", running.ID), aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player.ID), status: 400},
		{method: "GET", host: hn, path: fmt.Sprintf("/api/player/competitions/%d/ranking?rank_after=1000000000000000000", running.ID), aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player.ID), status: 400},
		{method: "GET", host: hn, path: "/api/player/competitions/999999/ranking?rank_after=x", aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player.ID), status: 400},
		{method: "GET", host: hn, path: "/api/player/players/0", aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player.ID), status: 404},
		{method: "GET", host: hn, path: "/api/player/players/999999", aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player.ID), status: 404},
		{method: "GET", host: hn, path: "/api/player/players", aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player.ID), status: 404},
		{method: "GET", host: "admin", path: "/api/admin/billing?before=1x", aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root", status: 400},
		{method: "GET", host: "admin", path: "/api/admin/billing?before=-1", aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root", status: 400},
		{method: "GET", host: "admin", path: "/api/admin/billing?before=1000000000000000000", aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root", status: 400},
		{method: "DELETE", host: hn, path: "/api/organizer/players", aud: hn, role: keys.RoleOrganizer, sub: "o", status: 404},
		{method: "GET", host: hn, path: "/api/nothing", aud: hn, role: keys.RoleOrganizer, sub: "o", status: 404},
		{method: "POST", host: hn, path: "/api/me", aud: hn, role: keys.RoleOrganizer, sub: "o", status: 404},
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// signRS256 signs any header and payload with RS256 (the header's alg is whatever it says).
func signRS256(t *testing.T, k *rsa.PrivateKey, header, payload string) string {
	signed := b64(header) + "." + b64(payload)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(nil, k, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// The concurrent phase.

// concurrent runs, all at once: tenant workers (each adds a tenant, players and competitions, uploads, reads,
// disqualifies and finishes in it, every answer compared), uploaders on running competitions of the huge tenant
// and players reading their rankings meanwhile (checked against the model of the uploads), and readers of the
// bills. It returns the tenants it added.
func (h *harness) concurrent() []tenantInfo {
	const tenantWorkers = 4
	in := h.e.in
	huge := in.Tenant(1)
	names := map[int64]string{}
	for _, p := range huge.Players {
		names[p.ID] = p.DisplayName
	}
	// Three running competitions of the huge tenant, each with one uploader.
	var comps []*raced
	for _, c := range huge.Competitions {
		if !c.Finished() && !h.finished[c.ID] && len(comps) < 3 && (len(comps) > 0 || c.Uploads > 0) {
			comps = append(comps, &raced{id: c.ID, rankings: [][]rankEntry{modelRanks(c.Ranking)}})
		}
	}
	// Players who read, and players who are disqualified meanwhile.
	var readers, victims []data.Player
	for _, p := range huge.Players {
		switch {
		case p.Disqualified:
		case len(readers) < 200:
			readers = append(readers, p)
		case len(victims) < 3:
			victims = append(victims, p)
		}
	}

	var added []tenantInfo
	var addedMu sync.Mutex
	var wg sync.WaitGroup
	for i := range tenantWorkers {
		wg.Go(func() {
			tn := h.tenantWorker(i)
			addedMu.Lock()
			added = append(added, tn)
			addedMu.Unlock()
		})
	}
	var uploaders sync.WaitGroup
	stopReads := make(chan struct{})
	readsDone := sync.WaitGroup{}
	for i, c := range comps {
		uploaders.Go(func() { h.uploader(huge, c, i, victims) })
	}
	for i := range 4 {
		readsDone.Go(func() { h.rankingReader(huge, comps, readers, names, stopReads, uint64(i)) })
	}
	readsDone.Go(func() { h.billReader(huge.Name, stopReads) })
	uploaders.Wait()
	close(stopReads)
	readsDone.Wait()
	wg.Wait()
	// Every read has answered: the bills of the finishes are the same in both apps.
	org := call{aud: huge.Name, role: keys.RoleOrganizer, sub: "boss"}
	for _, c := range comps {
		f := org
		f.method, f.host, f.path, f.status = "POST", huge.Name, fmt.Sprintf("/api/organizer/competitions/%d/finish", c.id), 200
		h.both(f)
	}
	b := org
	b.method, b.host, b.path, b.status = "GET", huge.Name, "/api/organizer/billing", 200
	h.both(b)
	slices.SortFunc(added, func(a, b tenantInfo) int { return cmp.Compare(a.id, b.id) })
	return added
}

// raced is a competition of the huge tenant that one uploader uploads to while readers read its ranking.
type raced struct {
	id       int64
	mu       sync.Mutex
	rankings [][]rankEntry // after each upload of the run, [0] the initial ranking
	// started and acked count each app's uploads sent and answered.
	started, acked [2]int
}

type rankEntry struct {
	player, score, row int64
}

func modelRanks(r []data.Rank) []rankEntry {
	out := make([]rankEntry, len(r))
	for i, x := range r {
		out[i] = rankEntry{x.PlayerID, x.Score, int64(x.Row)}
	}
	return out
}

// model ranks the rows of a CSV as the manual says.
func model(rows [][2]int64) []rankEntry {
	last := map[int64]int{}
	for i, r := range rows {
		last[r[0]] = i
	}
	var out []rankEntry
	for p, i := range last {
		out = append(out, rankEntry{p, rows[i][1], int64(i + 1)})
	}
	slices.SortFunc(out, func(a, b rankEntry) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.row, b.row)
	})
	return out
}

func (h *harness) uploader(huge *data.Tenant, c *raced, n int, victims []data.Player) {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	org := call{method: "POST", host: huge.Name, path: fmt.Sprintf("/api/organizer/competitions/%d/scores", c.id),
		aud: huge.Name, role: keys.RoleOrganizer, sub: "boss", status: 200}
	for round := range 8 {
		time.Sleep(300 * time.Millisecond) // the readers read meanwhile
		var csv strings.Builder
		csv.WriteString("player_id,score\n")
		var rows [][2]int64
		for range 500 + rng.IntN(3000) {
			r := [2]int64{huge.Players[rng.IntN(len(huge.Players))].ID, int64(100 * rng.IntN(200))}
			rows = append(rows, r)
			fmt.Fprintf(&csv, "%d,%d\n", r[0], r[1])
		}
		up := org
		up.csv = csv.String()
		c.mu.Lock()
		c.rankings = append(c.rankings, model(rows))
		c.mu.Unlock()
		ref, tun := h.pair(up, hooks{
			before: func(side int) { c.mu.Lock(); c.started[side]++; c.mu.Unlock() },
			after: func(side int, r reply) {
				if r.status == 200 {
					c.mu.Lock()
					c.acked[side]++
					c.mu.Unlock()
				}
			},
		})
		h.same(up, ref, tun)
		if round == 2 && n < len(victims) {
			v := victims[n]
			d := org
			d.path, d.csv = fmt.Sprintf("/api/organizer/players/%d/disqualify", v.ID), ""
			h.both(d)
			for _, path := range []string{"/api/me", "/api/player/competitions", fmt.Sprintf("/api/player/competitions/%d/ranking", c.id)} {
				h.both(call{method: "GET", host: huge.Name, path: path, aud: huge.Name, role: keys.RolePlayer, sub: fmt.Sprint(v.ID), status: 403})
			}
		}
	}
}

// rankingReader reads the rankings of the raced competitions as random players until stop, and checks each answer
// against the uploads: it must be the ranking of an upload acknowledged before the read was sent, or of a later one
// sent before the read was answered.
func (h *harness) rankingReader(huge *data.Tenant, comps []*raced, readers []data.Player, names map[int64]string, stop chan struct{}, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	for {
		select {
		case <-stop:
			return
		default:
		}
		c := comps[rng.IntN(len(comps))]
		p := readers[rng.IntN(len(readers))]
		after := []int64{0, 0, 100, 1500, 2500}[rng.IntN(5)]
		rc := call{method: "GET", host: huge.Name, path: fmt.Sprintf("/api/player/competitions/%d/ranking?rank_after=%d", c.id, after),
			aud: huge.Name, role: keys.RolePlayer, sub: fmt.Sprint(p.ID), status: 200}
		var lo, hi [2]int
		h.pair(rc, hooks{
			before: func(side int) { c.mu.Lock(); lo[side] = c.acked[side]; c.mu.Unlock() },
			after: func(side int, r reply) {
				c.mu.Lock()
				hi[side] = c.started[side]
				rankings := c.rankings
				c.mu.Unlock()
				h.modelled.Add(1)
				if err := checkRanking(r, rankings[lo[side]:hi[side]+1], after, names); err != nil {
					h.t.Errorf("%s, %s: %v", rc, []string{"reference", "tuned"}[side], err)
				}
			},
		})
		// The players' other reads, at the same time: their answers change with the uploads; only the status is
		// compared.
		if rng.IntN(4) != 0 {
			continue
		}
		for _, path := range []string{fmt.Sprintf("/api/player/players/%d", readers[rng.IntN(len(readers))].ID), "/api/player/competitions"} {
			o := rc
			o.path = path
			ref, tun := h.pair(o, hooks{})
			if ref.status != 200 || tun.status != 200 {
				h.t.Errorf("%s: %d and %d", o, ref.status, tun.status)
			}
		}
	}
}

// checkRanking checks that a ranking answer is the page after `after` of one of the rankings.
func checkRanking(r reply, rankings [][]rankEntry, after int64, names map[int64]string) error {
	if r.status != 200 {
		return fmt.Errorf("status %d: %s", r.status, r.body)
	}
	var ans struct {
		Ranks []struct {
			Rank        int64  `json:"rank"`
			PlayerID    int64  `json:"player_id"`
			DisplayName string `json:"display_name"`
			Score       int64  `json:"score"`
		} `json:"ranks"`
	}
	if err := json.Unmarshal([]byte(r.body), &ans); err != nil {
		return err
	}
	for k, want := range rankings {
		page := want[min(int64(len(want)), after):min(int64(len(want)), after+100)]
		if len(page) != len(ans.Ranks) {
			continue
		}
		ok := true
		for i, e := range page {
			got := ans.Ranks[i]
			if got.Rank != after+int64(i)+1 || got.PlayerID != e.player || got.Score != e.score || got.DisplayName != names[e.player] {
				ok = false
				break
			}
		}
		if ok {
			_ = k
			return nil
		}
	}
	return fmt.Errorf("the ranking after rank %d (%d entries) is none of the %d rankings it may be: %.300s", after, len(ans.Ranks), len(rankings), r.body)
}

// billReader reads the bills while the uploads go on: the huge tenant's (its finished competitions do not
// change) and an admin page of initial tenants, compared; the admin's first page (new tenants come and go with
// other ids in each app), status only.
func (h *harness) billReader(hugeName string, stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		h.both(call{method: "GET", host: hugeName, path: "/api/organizer/billing", aud: hugeName, role: keys.RoleOrganizer, sub: "boss", status: 200})
		h.both(call{method: "GET", host: "admin", path: "/api/admin/billing?before=50", aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root", status: 200})
		c := call{method: "GET", host: "admin", path: "/api/admin/billing", aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root"}
		ref, tun := h.pair(c, hooks{})
		if ref.status != 200 || tun.status != 200 {
			h.t.Errorf("%s: %d and %d", c, ref.status, tun.status)
		}
	}
}

// tenantWorker adds a tenant and runs its league: players, competitions, uploads, reads, disqualifications,
// finishes and bills. Every answer is compared: nothing else touches the tenant.
func (h *harness) tenantWorker(n int) tenantInfo {
	rng := rand.New(rand.NewPCG(uint64(n), 3))
	name := fmt.Sprintf("conc-%d", n)
	r, _ := h.both(call{method: "POST", host: "admin", path: "/api/admin/tenants", aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root",
		body: fmt.Sprintf(`{"name":%q,"display_name":"Concurrent <%d> & Co"}`, name, n), status: 200})
	tid, _ := strconv.ParseInt(anyID.FindStringSubmatch(r.body)[1], 10, 64)
	org := func(method, path, body string, status int) (reply, reply) {
		return h.both(call{method: method, host: name, path: path, body: body, aud: name, role: keys.RoleOrganizer, sub: "org", status: status})
	}
	var players []int64
	for b := range 2 {
		var names []string
		for i := range 15 + rng.IntN(20) {
			names = append(names, fmt.Sprintf("%q", fmt.Sprintf("P%d-%d-%d 選手", n, b, i)))
		}
		r, _ := org("POST", "/api/organizer/players", `{"display_names":[`+strings.Join(names, ",")+`]}`, 200)
		for _, m := range anyID.FindAllStringSubmatch(r.body, -1) {
			id, _ := strconv.ParseInt(m[1], 10, 64)
			players = append(players, id)
		}
	}
	var comps []int64
	for i := range 3 {
		r, _ := org("POST", "/api/organizer/competitions", fmt.Sprintf(`{"title":"Cup %d of %s"}`, i, name), 200)
		id, _ := strconv.ParseInt(anyID.FindStringSubmatch(r.body)[1], 10, 64)
		comps = append(comps, id)
	}
	g := func(id int64) string { return fmt.Sprintf("{g:%d}", id) }
	disq := map[int64]bool{}
	finished := map[int64]bool{}
	visited := map[[2]int64]bool{} // competition, player: read before the finish
	read := func() {
		var p int64
		for p == 0 || disq[p] {
			p = players[rng.IntN(len(players))]
		}
		c := comps[rng.IntN(len(comps))]
		if finished[c] && !visited[[2]int64{c, p}] {
			return // a first read after the finish, in its second, counts in the reference and not in the tuned app
		}
		visited[[2]int64{c, p}] = true
		pl := func(path string) {
			h.both(call{method: "GET", host: name, path: path, aud: name, role: keys.RolePlayer, sub: g(p), status: 200})
		}
		pl(fmt.Sprintf("/api/player/competitions/%s/ranking%s", g(c), []string{"", "?rank_after=3", "?rank_after=10"}[rng.IntN(3)]))
		pl(fmt.Sprintf("/api/player/players/%s", g(players[rng.IntN(len(players))])))
		pl("/api/player/competitions")
	}
	for round := range 4 {
		for _, c := range comps {
			if finished[c] {
				org("POST", "/api/organizer/competitions/"+g(c)+"/scores", "", 409)
				continue
			}
			var csv strings.Builder
			csv.WriteString("player_id,score\n")
			for range rng.IntN(len(players) + 10) {
				fmt.Fprintf(&csv, "%s,%d\n", g(players[rng.IntN(len(players))]), 10*rng.IntN(20))
			}
			h.both(call{method: "POST", host: name, path: "/api/organizer/competitions/" + g(c) + "/scores", csv: csv.String(),
				aud: name, role: keys.RoleOrganizer, sub: "org", status: 200})
			for range 4 {
				read()
			}
		}
		switch round {
		case 1:
			for range 2 {
				p := players[rng.IntN(len(players))]
				org("POST", "/api/organizer/players/"+g(p)+"/disqualify", "", 200)
				disq[p] = true
				for _, path := range []string{"/api/me", "/api/player/competitions", "/api/player/competitions/" + g(comps[0]) + "/ranking"} {
					h.both(call{method: "GET", host: name, path: path, aud: name, role: keys.RolePlayer, sub: g(p), status: 403})
				}
			}
			org("GET", "/api/organizer/players", "", 200)
		case 2:
			org("POST", "/api/organizer/competitions/"+g(comps[0])+"/finish", "", 200)
			finished[comps[0]] = true
			org("POST", "/api/organizer/competitions/"+g(comps[0])+"/finish", "", 409)
			org("GET", "/api/organizer/billing", "", 200)
		}
	}
	for _, c := range comps[1:] {
		org("POST", "/api/organizer/competitions/"+g(c)+"/finish", "", 200)
		org("GET", "/api/organizer/billing", "", 200)
	}
	org("GET", "/api/organizer/competitions", "", 200)
	return tenantInfo{id: tid, name: name}
}

// The sweeps.

// sweep reads every tenant's players, competitions and bill, the rankings and some profiles of the huge tenant
// and of the tenants added, and every admin page, and compares. With replay, only the tuned app is asked and its
// answers are compared with the reference's in cache (the reference did not change meanwhile); else both are
// asked and cache gets the reference's answers.
func (h *harness) sweep(tenants []tenantInfo, cache map[string]reply, replay bool) {
	h.t.Helper()
	ask := func(c call) reply {
		key := c.String() + " " + c.sub
		if !replay {
			ref, _ := h.both(c)
			cache[key] = ref
			return ref
		}
		ref, ok := cache[key]
		if !ok {
			h.t.Fatalf("%s: no answer of the reference kept", c)
		}
		tun, err := h.send(1, c)
		if err != nil {
			h.t.Fatal(err)
		}
		tun.body = h.translate(c.path, tun.body)
		h.same(c, ref, tun)
		return ref
	}
	for _, tn := range tenants {
		org := func(path string) reply {
			return ask(call{method: "GET", host: tn.name, path: path, aud: tn.name, role: keys.RoleOrganizer, sub: "sweep", status: 200})
		}
		players := org("/api/organizer/players")
		competitions := org("/api/organizer/competitions")
		added := tn.id == 0 || tn.id > int64(len(h.e.in.Tenants))
		if tn.id <= 10 || added {
			// The others' totals are on the admin pages below (the reference takes seconds for all the bills).
			org("/api/organizer/billing")
		}
		if tn.id != 1 && !added {
			continue
		}
		var pl struct {
			Players []struct {
				ID             int64 `json:"id"`
				IsDisqualified bool  `json:"is_disqualified"`
			} `json:"players"`
		}
		var cs struct {
			Competitions []struct {
				ID int64 `json:"id"`
			} `json:"competitions"`
		}
		if json.Unmarshal([]byte(players.body), &pl) != nil || json.Unmarshal([]byte(competitions.body), &cs) != nil {
			h.t.Errorf("%s: %.200s %.200s", tn.name, players.body, competitions.body)
			continue
		}
		if len(pl.Players) == 0 {
			continue
		}
		var reader int64
		for _, p := range pl.Players {
			if !p.IsDisqualified {
				reader = p.ID
				break
			}
		}
		player := func(path string) {
			ask(call{method: "GET", host: tn.name, path: path, aud: tn.name, role: keys.RolePlayer, sub: fmt.Sprintf("{g:%d}", reader), status: 200})
		}
		for _, c := range cs.Competitions {
			player(fmt.Sprintf("/api/player/competitions/{g:%d}/ranking", c.ID))
			player(fmt.Sprintf("/api/player/competitions/{g:%d}/ranking?rank_after=100", c.ID))
		}
		for i := 0; i < len(pl.Players); i += max(1, len(pl.Players)/15) {
			player(fmt.Sprintf("/api/player/players/{g:%d}", pl.Players[i].ID))
		}
	}
	// Every admin page: the same tenants with the same bills. Tenants added at the same time may have their ids
	// in another order in each app, and so be on other pages.
	const adminKey = "every admin page"
	if !replay {
		cache[adminKey] = reply{body: strings.Join(h.adminPages(0), "\n")}
	}
	ref, tun := cache[adminKey].body, strings.Join(h.adminPages(1), "\n")
	h.compared.Add(1)
	if ref != tun {
		a, b := strings.Split(ref, "\n"), strings.Split(tun, "\n")
		for i := range max(len(a), len(b)) {
			if i >= len(a) || i >= len(b) || a[i] != b[i] {
				h.t.Errorf("the admin pages differ: %d tenants in the reference's, %d in the tuned app's; the %dth, by id:\nreference: %.300s\ntuned:     %.300s",
					len(a), len(b), i+1, a[min(i, len(a)-1)], b[min(i, len(b)-1)])
				break
			}
		}
	}
}

// adminPages reads every admin page of app side, checks their order and size, and returns every tenant's entry,
// with the reference's ids, lowest id first.
func (h *harness) adminPages(side int) []string {
	var out []string
	last := int64(1) << 62
	before := ""
	for {
		c := call{method: "GET", host: "admin", path: "/api/admin/billing" + before, aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root"}
		r, err := h.send(side, c)
		if err != nil {
			h.t.Fatal(err)
		}
		var page struct {
			Tenants []json.RawMessage `json:"tenants"`
		}
		if err := json.Unmarshal([]byte(r.body), &page); err != nil || r.status != 200 || r.header.Get("Cache-Control") != "private" {
			h.t.Fatalf("side %d: %s: %d %.200s (%v)", side, c, r.status, r.body, err)
		}
		if len(page.Tenants) == 0 {
			break
		}
		if len(page.Tenants) > 10 {
			h.t.Errorf("side %d: %s lists %d tenants", side, c, len(page.Tenants))
		}
		for _, raw := range page.Tenants {
			id, _ := strconv.ParseInt(anyID.FindStringSubmatch(string(raw))[1], 10, 64)
			if id >= last {
				h.t.Errorf("side %d: %s: tenant %d after tenant %d", side, c, id, last)
			}
			last = id
			entry := string(raw)
			if side == 1 {
				entry = h.translate(c.path, entry)
			}
			out = append(out, entry)
		}
		before = fmt.Sprintf("?before=%d", last)
	}
	slices.SortFunc(out, func(a, b string) int {
		x, _ := strconv.ParseInt(anyID.FindStringSubmatch(a)[1], 10, 64)
		y, _ := strconv.ParseInt(anyID.FindStringSubmatch(b)[1], 10, 64)
		return cmp.Compare(x, y)
	})
	return out
}

// checkInitialBills checks the admin pages of the tuned app against the bills of the initial data.
func (h *harness) checkInitialBills() {
	want := map[int64]int64{}
	for _, tn := range h.e.in.Tenants {
		want[tn.ID] = tn.Billing()
	}
	got := map[int64]int64{}
	before := ""
	for {
		r, err := h.send(1, call{method: "GET", host: "admin", path: "/api/admin/billing" + before, aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root"})
		if err != nil {
			h.t.Fatal(err)
		}
		var page struct {
			Tenants []struct {
				ID      int64 `json:"id"`
				Billing int64 `json:"billing"`
			} `json:"tenants"`
		}
		if err := json.Unmarshal([]byte(r.body), &page); err != nil {
			h.t.Fatalf("%d %s: %v", r.status, r.body, err)
		}
		if len(page.Tenants) == 0 {
			break
		}
		for _, tn := range page.Tenants {
			got[tn.ID] = tn.Billing
		}
		before = fmt.Sprintf("?before=%d", page.Tenants[len(page.Tenants)-1].ID)
	}
	if len(got) != len(want) {
		h.t.Errorf("the tuned app lists %d tenants after /initialize, want %d", len(got), len(want))
	}
	for id, yen := range want {
		if got[id] != yen {
			h.t.Errorf("tenant %d: the tuned app bills %d after /initialize, the initial data %d", id, got[id], yen)
		}
	}
}

// initializeUnderLoad sends POST /initialize to the tuned app twice while writers and readers keep at it: no
// answer may be a 5xx, and the app must stay up.
func (h *harness) initializeUnderLoad() {
	huge := h.e.in.Tenant(1)
	var running int64
	for _, c := range huge.Competitions {
		if !c.Finished() {
			running = c.ID
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var requests, failures atomic.Int64
	for i := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 5))
			for {
				select {
				case <-stop:
					return
				default:
				}
				var c call
				switch rng.IntN(5) {
				case 0:
					c = call{method: "POST", host: huge.Name, path: "/api/organizer/players", body: `{"display_names":["Load"]}`, aud: huge.Name, role: keys.RoleOrganizer, sub: "o"}
				case 1:
					c = call{method: "POST", host: huge.Name, path: fmt.Sprintf("/api/organizer/competitions/%d/scores", running),
						csv: fmt.Sprintf("player_id,score\n%d,%d\n", huge.Players[rng.IntN(100)].ID, rng.IntN(1000)), aud: huge.Name, role: keys.RoleOrganizer, sub: "o"}
				case 2:
					c = call{method: "GET", host: "admin", path: "/api/admin/billing", aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root"}
				case 3:
					c = call{method: "POST", host: "admin", path: "/api/admin/tenants", body: fmt.Sprintf(`{"name":"load-%d-%d","display_name":"L"}`, i, rng.IntN(1e9)), aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root"}
				default:
					p := huge.Players[rng.IntN(len(huge.Players))]
					c = call{method: "GET", host: huge.Name, path: fmt.Sprintf("/api/player/competitions/%d/ranking", running), aud: huge.Name, role: keys.RolePlayer, sub: fmt.Sprint(p.ID)}
				}
				r, err := h.send(1, c)
				requests.Add(1)
				if err != nil || r.status >= 500 {
					failures.Add(1)
					h.t.Errorf("%s during /initialize: %v %d %.200s", c, err, r.status, r.body)
				}
			}
		})
	}
	for range 2 {
		time.Sleep(700 * time.Millisecond)
		r, err := h.send(1, call{method: "POST", host: "anything", path: "/initialize"})
		if err != nil || r.status != 200 {
			h.t.Errorf("/initialize under load: %v %d %s", err, r.status, r.body)
		}
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	h.t.Logf("%d requests to the tuned app while it ran POST /initialize twice, %d failed", requests.Load(), failures.Load())
}

// TestLatency measures single requests to the slow endpoints of both apps on the initial data: set
// LEAGUES_MEASURE=1 (the numbers in ../solutions/README.md come from it).
func TestLatency(t *testing.T) {
	if os.Getenv("LEAGUES_MEASURE") == "" {
		t.Skip("set LEAGUES_MEASURE=1 to measure")
	}
	e := newEnv(t)
	work := t.TempDir()
	ref := e.start(t, "ref", e.refBin, "LEAGUES_DB=sqlite:"+filepath.Join(work, "ref.db"), "LEAGUES_TENANT_DIR="+filepath.Join(work, "ref-tenants"))
	tuned := e.start(t, "tuned", e.tunedBin, "LEAGUES_DB=sqlite:"+filepath.Join(work, "tuned.db"))
	h := newHarness(t, e, ref.URL, tuned.URL)
	huge := e.in.Tenant(1)
	var running data.Competition
	for _, c := range huge.Competitions {
		if !c.Finished() && len(c.Ranking) > len(running.Ranking) {
			running = c
		}
	}
	var player int64
	for _, p := range huge.Players {
		if !p.Disqualified {
			player = p.ID
			break
		}
	}
	hn := huge.Name
	var csv strings.Builder
	csv.WriteString("player_id,score\n")
	for i, p := range huge.Players {
		fmt.Fprintf(&csv, "%d,%d\n", p.ID, 100*(i%300))
	}
	adminC := func(path string) call {
		return call{method: "GET", host: "admin", path: path, aud: keys.AdminAudience, role: keys.RoleAdmin, sub: "root"}
	}
	cases := []struct {
		what string
		c    call
		n    int
	}{
		{"ranking, huge tenant, biggest running competition", call{method: "GET", host: hn, path: fmt.Sprintf("/api/player/competitions/%d/ranking", running.ID), aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player)}, 9},
		{"ranking, huge tenant, rank_after=2500", call{method: "GET", host: hn, path: fmt.Sprintf("/api/player/competitions/%d/ranking?rank_after=2500", running.ID), aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player)}, 9},
		{"player profile, huge tenant", call{method: "GET", host: hn, path: fmt.Sprintf("/api/player/players/%d", player), aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player)}, 9},
		{"competitions, huge tenant", call{method: "GET", host: hn, path: "/api/player/competitions", aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(player)}, 9},
		{"organizer billing, huge tenant", call{method: "GET", host: hn, path: "/api/organizer/billing", aud: hn, role: keys.RoleOrganizer, sub: "o"}, 7},
		{"organizer billing, tenant 2", call{method: "GET", host: e.in.Tenant(2).Name, path: "/api/organizer/billing", aud: e.in.Tenant(2).Name, role: keys.RoleOrganizer, sub: "o"}, 7},
		{"organizer players, huge tenant", call{method: "GET", host: hn, path: "/api/organizer/players", aud: hn, role: keys.RoleOrganizer, sub: "o"}, 7},
		{"admin billing, first page", adminC("/api/admin/billing"), 5},
		{"admin billing, before=11 (tenants 1-10)", adminC("/api/admin/billing?before=11"), 5},
		{"score upload, 3,000 rows, huge tenant", call{method: "POST", host: hn, path: fmt.Sprintf("/api/organizer/competitions/%d/scores", running.ID), csv: csv.String(), aud: hn, role: keys.RoleOrganizer, sub: "o"}, 5},
		{"add one player, huge tenant", call{method: "POST", host: hn, path: "/api/organizer/players", body: `{"display_names":["New"]}`, aud: hn, role: keys.RoleOrganizer, sub: "o"}, 7},
	}
	var report strings.Builder
	report.WriteString("| request | reference (median) | tuned (median) |\n|---|---|---|\n")
	for _, c := range cases {
		var med [2]time.Duration
		for side := range 2 {
			h.send(side, c.c) // warm: the token, the connection
			var ds []time.Duration
			for range c.n {
				start := time.Now()
				r, err := h.send(side, c.c)
				ds = append(ds, time.Since(start))
				if err != nil || r.status != 200 {
					t.Fatalf("%s: %v %d %.200s", c.what, err, r.status, r.body)
				}
			}
			slices.Sort(ds)
			med[side] = ds[len(ds)/2]
		}
		fmt.Fprintf(&report, "| %s | %s | %s |\n", c.what, ms(med[0]), ms(med[1]))
	}
	for side, name := range []string{"reference", "tuned"} {
		start := time.Now()
		if r, err := h.send(side, call{method: "POST", host: "x", path: "/initialize"}); err != nil || r.status != 200 {
			t.Fatalf("%s /initialize: %v", name, err)
		}
		fmt.Fprintf(&report, "| POST /initialize, %s | %s |\n", name, ms(time.Since(start)))
	}
	t.Logf("single requests, one at a time:\n%s", report.String())

	// Ranking reads on the huge tenant from 16 connections for 10 s, as many players.
	var players []int64
	for _, p := range huge.Players {
		if !p.Disqualified {
			players = append(players, p.ID)
		}
	}
	for side, name := range []string{"reference", "tuned"} {
		var n atomic.Int64
		var mu sync.Mutex
		var ds []time.Duration
		stop := time.Now().Add(10 * time.Second)
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				for time.Now().Before(stop) {
					c := huge.Competitions[rng.IntN(len(huge.Competitions))]
					start := time.Now()
					r, err := h.send(side, call{method: "GET", host: hn, path: fmt.Sprintf("/api/player/competitions/%d/ranking", c.ID), aud: hn, role: keys.RolePlayer, sub: fmt.Sprint(players[rng.IntN(len(players))])})
					d := time.Since(start)
					if err != nil || r.status != 200 {
						t.Errorf("%v %d", err, r.status)
						return
					}
					n.Add(1)
					mu.Lock()
					ds = append(ds, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		slices.Sort(ds)
		t.Logf("%s: ranking reads of the huge tenant, 16 at a time for 10 s: %d reads, %.0f/s, p50 %s, p99 %s, over 1.2 s: %d",
			name, n.Load(), float64(n.Load())/10, ms(ds[len(ds)/2]), ms(ds[len(ds)*99/100]), len(ds)-sort1200(ds))
	}
}

func sort1200(ds []time.Duration) int {
	i, _ := slices.BinarySearch(ds, 1200*time.Millisecond)
	return i
}

func ms(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f ms", float64(d)/1e6)
}
