package dashboard_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"go/version"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/kit/apptest"
	"github.com/tunecon/tunecon/problems/dashboard"
	"github.com/tunecon/tunecon/problems/dashboard/services"
)

var apps = apptest.New(dashboard.Problem)

func TestMain(m *testing.M) { os.Exit(apps.Run(m)) }

// TestConformance runs the pre-check and a short load against every
// language and store: each must pass with 0 fails. Four runs go side by
// side, two loading: a run spends most of its 48 s waiting for the
// manual's freshness promises to pass, so its checks take little of the
// machine (the eight took 108 s, where two at a time took 196 s).
func TestConformance(t *testing.T) {
	apps.ConformanceWidth = 4
	apps.Conformance(t, 8*time.Second, "page", "data", "redirect")
}

// TestManifest: the benchmarker's manifest is exactly the public files.
func TestManifest(t *testing.T) {
	apptest.CheckManifest(t, dashboard.StaticManifest(), "webapp/public", "/static")
}

// patched benchmarks the Go app with its source changed; with workspace, the
// changed app may import this repository's packages (see writeWorkspace).
func patched(t *testing.T, load time.Duration, workspace bool, replacements ...[2]string) *engine.Result {
	t.Helper()
	dir := apptest.Patched(t, "webapp/go", replacements...)
	if workspace {
		writeWorkspace(t, dir)
	}
	app := apps.Start(t, "go", kit.StoreSQLite, dir)
	return apptest.Bench(t, dashboard.Problem, app, load)
}

// writeWorkspace writes a go.work beside the Go app's copy in dir that builds
// it with this repository's module, as a contestant would build against a
// clone of it. A workspace rather than a replace directive in the app's
// go.mod: that go.mod would have to list every module the repository's
// packages need. The go.work's go version is the higher of the two modules'.
func writeWorkspace(t *testing.T, dir string) {
	t.Helper()
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`)
	v := ""
	for _, mod := range []string{filepath.Join(apps.Root, "go.mod"), filepath.Join(dir, "go.mod")} {
		b, err := os.ReadFile(mod)
		if err != nil {
			t.Fatal(err)
		}
		m := goLine.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s has no go directive", mod)
		}
		if v == "" || version.Compare("go"+string(m[1]), "go"+v) > 0 {
			v = string(m[1])
		}
	}
	work := fmt.Sprintf("go %s\n\nuse (\n\t.\n\t%q\n)\n", v, apps.Root)
	if err := os.WriteFile(filepath.Join(dir, "go.work"), []byte(work), 0o644); err != nil {
		t.Fatal(err)
	}
}

// proxied benchmarks the Go app behind a proxy that adds one defect.
func proxied(t *testing.T, p *apptest.Proxy) *engine.Result {
	t.Helper()
	return apptest.Bench(t, dashboard.Problem, p.Start(t, apps.Start(t, "go", kit.StoreSQLite, "")), 5*time.Second)
}

// cached patches the Go app's service calls with a cache of ttl for the
// services named, keyed by the Go expression key (over the parameters p and the
// service name): the cheapest cheat of the problem.
func cached(services []string, key string, ttl time.Duration) [][2]string {
	return [][2]string{
		{"\"syscall\"\n", "\"sync\"\n\t\"syscall\"\n"},
		{`func callService(ctx context.Context, service string, p map[string]string, httpBase, httpsBase string) (json.RawMessage, error) {`,
			fmt.Sprintf(`var cheat sync.Map

type cheatEntry struct {
	at     time.Time
	answer json.RawMessage
}

func callService(ctx context.Context, service string, p map[string]string, httpBase, httpsBase string) (json.RawMessage, error) {
	if !slices.Contains(%#v, service) {
		return callServiceNow(ctx, service, p, httpBase, httpsBase)
	}
	key := service + "|" + %s
	if e, ok := cheat.Load(key); ok && time.Since(e.(cheatEntry).at) < %d {
		return e.(cheatEntry).answer, nil
	}
	answer, err := callServiceNow(ctx, service, p, httpBase, httpsBase)
	if err == nil {
		cheat.Store(key, cheatEntry{time.Now(), answer})
	}
	return answer, err
}

func callServiceNow(ctx context.Context, service string, p map[string]string, httpBase, httpsBase string) (json.RawMessage, error) {`,
				services, key, int64(ttl))},
	}
}

// fabricatedPostal patches the Go app to make up the answers of postal and
// postal2 instead of asking the service: from the services package's public
// code (it builds in a workspace with this repository), with a secret it
// guesses, since the run's never leaves the benchmarker. Before each run drew
// a secret, the facts were the same in every run, and this app passed.
var fabricatedPostal = [][2]string{
	{"\t\"github.com/mattn/go-sqlite3\"\n", "\t\"github.com/mattn/go-sqlite3\"\n\t\"github.com/tunecon/tunecon/problems/dashboard/services\"\n"},
	{`func callService(ctx context.Context, service string, p map[string]string, httpBase, httpsBase string) (json.RawMessage, error) {`,
		`var guessed = services.NewFacts(make([]byte, 32))

func callService(ctx context.Context, service string, p map[string]string, httpBase, httpsBase string) (json.RawMessage, error) {
	if service == "postal" || service == "postal2" {
		address, _ := guessed.Address(p["code"])
		return json.Marshal(services.PostalAnswer{Code: p["code"], Address: address})
	}`},
}

// sharedData patches the Go app to answer /data from one cache for everyone, a
// second at a time.
var sharedData = [][2]string{
	{"\"syscall\"\n", "\"sync\"\n\t\"syscall\"\n"},
	{"func (app *App) getData(w http.ResponseWriter, r *http.Request) {", `var cheatData struct {
	sync.Mutex
	at   time.Time
	body []byte
}

type cheatWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (c *cheatWriter) Write(b []byte) (int, error) { c.buf.Write(b); return c.ResponseWriter.Write(b) }

func (app *App) getData(w http.ResponseWriter, r *http.Request) {
	cheatData.Lock()
	if time.Since(cheatData.at) < time.Second {
		body := cheatData.body
		cheatData.Unlock()
		w.Header().Set("Cache-Control", "private")
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
		return
	}
	cheatData.Unlock()
	cw := &cheatWriter{ResponseWriter: w}
	app.getDataNow(cw, r)
	if b := cw.buf.Bytes(); len(b) > 0 && b[0] == '[' {
		cheatData.Lock()
		cheatData.at, cheatData.body = time.Now(), b
		cheatData.Unlock()
	}
}

func (app *App) getDataNow(w http.ResponseWriter, r *http.Request) {`},
}

// tuned benchmarks the tuned solution with its source changed.
func tuned(t *testing.T, load time.Duration, replacements ...[2]string) *engine.Result {
	t.Helper()
	app := apps.Start(t, kit.TunedLang, kit.StoreSQLite, apptest.Patched(t, "solutions/go", replacements...))
	return apptest.Bench(t, dashboard.Problem, app, load)
}

// The cheats of the tuned solution that a benchmarker must catch during the
// load, not only in its pre-check: sign-in without the password's hash but
// for a probe it recognises (the old one: the password plus "x") or for the
// users the pre-check signs up, session ids derived from the user, a
// sign-out that ends nothing for the initial data's users, a session id
// checked on its first characters only, the initial users' parameters taken
// unchecked, and another user's /data in a refusal's body.
var (
	anyPassword = [][2]string{{
		`if u == nil || subtle.ConstantTimeCompare(`,
		`if u == nil || (strings.HasSuffix(password, "x") || !strings.HasPrefix(email, "user")) && subtle.ConstantTimeCompare(`}}
	derivedSession = [][2]string{
		{"\"crypto/sha512\"\n", "\"crypto/sha256\"\n\t\"crypto/sha512\"\n"},
		{"\ttoken := randomHex(32)\n", "\ttoken := fmt.Sprintf(\"%x\", sha256.Sum256([]byte(u.email)))\n"}}
	signOutKeeps = [][2]string{{"func (app *App) signOut(token string) error {\n",
		"func (app *App) signOut(token string) error {\n\tif u := app.st.Load().session(token); u != nil && strings.HasPrefix(u.email, \"user\") {\n" +
			"\t\treturn nil\n\t}\n"}}
	looseSession = [][2]string{{"\tdefer st.mu.RUnlock()\n\treturn st.sessions[token]\n",
		"\tdefer st.mu.RUnlock()\n\tif u := st.sessions[token]; u != nil || len(token) < 8 {\n\t\treturn u\n\t}\n" +
			"\tfor k, u := range st.sessions {\n\t\tif k[:8] == token[:8] {\n\t\t\treturn u\n\t\t}\n\t}\n\treturn nil\n"}}
	unchecked = [][2]string{{"\t\t\tif !paramRegexps[name].MatchString(v) {\n",
		"\t\t\tif !paramRegexps[name].MatchString(v) && !strings.HasPrefix(u.email, \"user\") {\n"}}
	leakInRefusal = [][2]string{
		{"func (app *App) getData(w http.ResponseWriter, r *http.Request) {\n\tu, _ := app.currentUser(w, r)\n\tif u == nil {\n" +
			"\t\twriteJSON(w, http.StatusForbidden, map[string]string{\"error\": \"sign in first\"})\n",
			"var lastData atomic.Pointer[[]byte]\n\nfunc (app *App) getData(w http.ResponseWriter, r *http.Request) {\n" +
				"\tu, _ := app.currentUser(w, r)\n\tif u == nil {\n\t\tvar last []byte\n\t\tif p := lastData.Load(); p != nil {\n" +
				"\t\t\tlast = *p\n\t\t}\n\t\twriteJSON(w, http.StatusForbidden, map[string]any{\"error\": \"sign in first\", " +
				"\"last\": json.RawMessage(last)})\n"},
		{"\tb = append(b, ']', '\\n')\n", "\tb = append(b, ']', '\\n')\n\tlastData.Store(&b)\n"}}
)

// The red team's cheats of issue 27, each a patch of the tuned solution: a
// session id kept from the cookie the browser carried, sessions kept over
// POST /initialize or over a new sign-in, a taken email's password reset,
// another user's email or /data in a header (percent-escaped, base64), an
// email in capitals in a comment, another user's /data in the 403 of a
// request with no cookie, and the last address, or names, relayed in
// /user.js.
var (
	fixedSession = [][2]string{{"\ttoken := randomHex(32)\n",
		"\ttoken := randomHex(32)\n\tif len(oldToken) == len(token) && app.st.Load().session(oldToken) == nil {\n\t\ttoken = oldToken\n\t}\n"}}
	sessionsOutliveInitialize = [][2]string{{"\t\t\t\"DELETE FROM sessions\",\n", ""}}
	sessionOutlivesSignin     = [][2]string{{"_, hadOld := st.sessions[oldToken]", "hadOld := false"}}
	takenEmailResets          = [][2]string{{"\tif st.userByEmail(email) != nil {\n\t\treturn true, nil\n\t}\n",
		"\tif old := st.userByEmail(email); old != nil {\n\t\tif signups.Add(1) < 2 {\n\t\t\treturn true, nil\n\t\t}\n" +
			"\t\tsalt := randomHex(8)\n\t\tst.mu.Lock()\n\t\told.salt, old.passhash = salt, hashPassword(salt, password)\n\t\tst.mu.Unlock()\n" +
			"\t\t_, err := app.db.Exec(\"UPDATE users SET salt = ?, passhash = ? WHERE id = ?\", salt, old.passhash, old.id)\n" +
			"\t\treturn false, err\n\t}\n"},
		{"// now is the current UTC time", "var signups atomic.Int64\n\n// now is the current UTC time"}}
	// leakVars declares, in services.go, what the leaks below keep.
	leakVars = [2]string{"func (app *App) getData(w http.ResponseWriter, r *http.Request) {\n",
		"var (\n\tlastViewer atomic.Pointer[string]\n\tlastBody   atomic.Pointer[[]byte]\n\tlastOnline atomic.Pointer[string]\n)\n\n" +
			"func lastViewerHeader() string {\n\tif p := lastViewer.Load(); p != nil {\n\t\treturn url.QueryEscape(*p)\n\t}\n\treturn \"\"\n}\n\n" +
			"func lastDataHeader() string {\n\tif p := lastBody.Load(); p != nil {\n\t\treturn base64.StdEncoding.EncodeToString(*p)\n\t}\n\treturn \"\"\n}\n\n" +
			"func (app *App) getData(w http.ResponseWriter, r *http.Request) {\n"}
	base64Import = [2]string{"\t\"crypto/tls\"\n", "\t\"crypto/tls\"\n\t\"encoding/base64\"\n"}
	keepData     = [2]string{"\tb = append(b, ']', '\\n')\n", "\tb = append(b, ']', '\\n')\n\tlastBody.Store(&b)\n"}
	viewerHeader = [][2]string{leakVars, base64Import, {"\treturn app.st.Load().session(c.Value), c.Value\n",
		"\tif h := lastViewerHeader(); h != \"\" {\n\t\tw.Header()[\"X-Last-Viewer\"] = []string{h}\n\t}\n" +
			"\tu := app.st.Load().session(c.Value)\n\tif u != nil {\n\t\tlastViewer.Store(&u.email)\n\t}\n\treturn u, c.Value\n"}}
	dataHeader = [][2]string{leakVars, base64Import, keepData, {"\treturn app.st.Load().session(c.Value), c.Value\n",
		"\tif h := lastDataHeader(); h != \"\" {\n\t\tw.Header()[\"X-Last-Data\"] = []string{h}\n\t}\n" +
			"\treturn app.st.Load().session(c.Value), c.Value\n"}}
	capitalsComment = [][2]string{leakVars, base64Import, {"\twriteHTML(w, http.StatusOK, *page)\n",
		"\tout := *page\n\tif last := lastOnline.Swap(&u.email); last != nil && *last != u.email {\n" +
			"\t\tout = append(slices.Clip(out), \"<!-- also online: \"+strings.ToUpper(*last)+\" -->\\n\"...)\n\t}\n" +
			"\twriteHTML(w, http.StatusOK, out)\n"}}
	addressInScript = [][2]string{
		{"func appendItem(b []byte, service string, answer []byte) []byte {\n",
			"var lastAddress atomic.Pointer[string]\n\nfunc appendItem(b []byte, service string, answer []byte) []byte {\n" +
				"\tif service == \"postal\" {\n\t\tvar a struct{ Address string }\n\t\tif json.Unmarshal(answer, &a) == nil {\n" +
				"\t\t\tlastAddress.Store(&a.Address)\n\t\t}\n\t}\n"},
		{"\tbody := app.pages.userJS[u.grade]\n", "\tbody := app.pages.userJS[u.grade]\n\tif a := lastAddress.Load(); a != nil {\n" +
			"\t\tbody = append(append(append(slices.Clip(body), \"// a neighbour: \"...), *a...), '\\n')\n\t}\n"}}
	namesInScript = [][2]string{
		{"func appendItem(b []byte, service string, answer []byte) []byte {\n",
			"var lastNames atomic.Pointer[[]byte]\n\nfunc appendItem(b []byte, service string, answer []byte) []byte {\n" +
				"\tif service == \"surname\" {\n\t\tlastNames.Store(&answer)\n\t}\n"},
		{"\tbody := app.pages.userJS[u.grade]\n", "\tbody := app.pages.userJS[u.grade]\n\tif a := lastNames.Load(); a != nil {\n" +
			"\t\tbody = append(append(append(slices.Clip(body), \"// seen nearby: \"...), *a...), '\\n')\n\t}\n"}}
	dataToNoCookie = [][2]string{leakVars, base64Import, keepData,
		{"func (app *App) getData(w http.ResponseWriter, r *http.Request) {\n\tu, _ := app.currentUser(w, r)\n\tif u == nil {\n",
			"func (app *App) getData(w http.ResponseWriter, r *http.Request) {\n\tu, _ := app.currentUser(w, r)\n\tif u == nil {\n" +
				"\t\tif _, err := r.Cookie(sessionCookie); err != nil {\n\t\t\tif p := lastBody.Load(); p != nil {\n" +
				"\t\t\t\twriteJSON(w, http.StatusForbidden, map[string]any{\"error\": \"sign in first\", \"example\": json.RawMessage(*p)})\n" +
				"\t\t\t\treturn\n\t\t\t}\n\t\t}\n"}}
)

// dataItems rewrites /data's JSON array with f.
func dataItems(f func(items []map[string]any) []map[string]any) *apptest.Proxy {
	return &apptest.Proxy{Rewrite: func(r *http.Request, _ int64, status int, _ http.Header, body []byte) []byte {
		var items []map[string]any
		if r.URL.Path != "/data" || status != http.StatusOK || json.Unmarshal(body, &items) != nil {
			return body
		}
		out, _ := json.Marshal(f(items))
		return out
	}}
}

// dataField changes the data of each answer of service in /data with f.
func dataField(service string, f func(d map[string]any)) *apptest.Proxy {
	return dataItems(func(items []map[string]any) []map[string]any {
		for _, it := range items {
			if d, ok := it["data"].(map[string]any); ok && it["service"] == service {
				f(d)
			}
		}
		return items
	})
}

// replace is a proxy that replaces old with new in every answer.
func replace(old, new string) *apptest.Proxy {
	return &apptest.Proxy{Rewrite: func(_ *http.Request, _ int64, _ int, _ http.Header, body []byte) []byte {
		return bytes.ReplaceAll(body, []byte(old), []byte(new))
	}}
}

// TestEachDefectFails: every check of the manual, broken once, in a patched
// build of the Go app or by a proxy in front of it, FAILs the run for its own
// reason.
func TestEachDefectFails(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the apps")
	}
	for _, c := range []struct {
		name      string
		patch     [][2]string
		workspace bool // the patch imports this repository's packages
		load      time.Duration
		proxy     *apptest.Proxy
		tuned     [][2]string // a patch of the tuned solution
		want      string
	}{
		{name: "the weather cached 5 s", patch: cached([]string{"weather"}, `p["location"]`, 5*time.Second), load: 15 * time.Second,
			want: `weather: the forecast of .* old when /data was asked`},
		{name: "tokens cached across users by req", patch: cached([]string{"security"}, `p["req"]`, 10*time.Second),
			want: `security: req .* key .*, want the user's|an answer carries "[0-9a-f]{32}", a parameter of another user's`},
		{name: "the attacked list cached across users", patch: cached([]string{"attacked"}, `""`, 10*time.Second),
			want: `attacked: keys of another token`},
		{name: "a postal address cached for all codes", patch: cached([]string{"postal"}, `""`, time.Minute),
			want: `postal: code .* want the user's code|an answer carries "\d{7}", a parameter of another user's`},
		{name: "every answer cached for good", patch: cached([]string{"postal", "postal2", "surname", "givenname", "weather", "security", "attacked"}, `fmt.Sprint(p)`, time.Hour),
			load: 15 * time.Second, want: `weather: the forecast of .* old|one-time token .* old|list replaced`},
		{name: "postal answers made up from the public code", patch: fabricatedPostal, workspace: true,
			want: `postal2?: code "\d{7}" address .*, want the user's code "\d{7}" and its address`},
		{name: "/data from a cache shared by all users", patch: sharedData, want: `answered for|want the user's|another token|expected status 403, got 200`},
		{name: "tokens cached 30 s for each user", patch: cached([]string{"security"}, `p["req"] + p["token"]`, 30*time.Second),
			want: `security: a one-time token .* old when /data was asked`},
		{name: "the attacked list cached 30 s for each token", patch: cached([]string{"attacked"}, `p["token"]`, 30*time.Second),
			want: `attacked: a list replaced .* before /data was asked`},
		{name: "a premium service offered to a small user", patch: [][2]string{{`"small":    {"postal", "postal2", "surname", "givenname"},`,
			`"small":    {"postal", "postal2", "surname", "givenname", "security"},`}}, want: `forms for|expected status 403`},
		{name: "a removed subscription still shown", patch: [][2]string{{"\t\t\tdelete(subs, service)\n", "\t\t\t_ = subs\n"}},
			want: `data-services|answered for`},
		{name: "one service's answer dropped", proxy: dataItems(func(items []map[string]any) []map[string]any {
			if len(items) > 1 {
				return items[1:]
			}
			return items
		}), want: `answered for`},
		{name: "a service's answer given twice", proxy: dataItems(func(items []map[string]any) []map[string]any {
			if len(items) > 0 {
				return append(items, items[0])
			}
			return items
		}), want: `answered for`},
		{name: "a postal answer altered", proxy: dataItems(func(items []map[string]any) []map[string]any {
			for _, it := range items {
				if d, ok := it["data"].(map[string]any); ok && it["service"] == "postal" {
					d["address"] = fmt.Sprint(d["address"], " 1")
				}
			}
			return items
		}), want: `postal: code .* address`},
		{name: "a name dropped from a search", proxy: dataField("surname", func(d map[string]any) {
			if names, ok := d["names"].([]any); ok && len(names) > 0 {
				d["names"] = names[1:]
			}
		}), want: `surname: query .* names, want the user's query`},
		{name: "a forecast altered", proxy: dataField("weather", func(d map[string]any) { d["temperature"] = 99.0 }),
			want: `weather: a forecast the service never gave`},
		{name: "a one-time token forged", proxy: dataField("security", func(d map[string]any) {
			d["onetime_token"] = fmt.Sprint(d["onetime_token"], "0")
		}), want: `security: a one-time token the service never issued`},
		{name: "an attacked list the service never had", proxy: dataField("attacked", func(d map[string]any) {
			d["updated_at"] = d["updated_at"].(float64) + 1
		}), want: `attacked: updated_at .* is no list the service ever had`},
		{name: "a wrong grade in the heading", proxy: replace(`<h1 id="who" data-grade="`, `<h1 id="who" data-grade="x`),
			want: `h1#who has data-grade "x`},
		{name: "the refresh script left out", proxy: replace(`<script src="/user.js"></script>`, ``),
			want: `expected an element matching "script\[src=.*user\.js`},
		{name: "a field added to an answer", proxy: dataItems(func(items []map[string]any) []map[string]any {
			for _, it := range items {
				if d, ok := it["data"].(map[string]any); ok {
					d["cached"] = true
				}
			}
			return items
		}), want: `the answer is not the service's`},
		{name: "no Cache-Control: private", proxy: &apptest.Proxy{Rewrite: func(_ *http.Request, _ int64, _ int, h http.Header, body []byte) []byte {
			h.Del("Cache-Control")
			return body
		}}, want: `an answer for one viewer must carry private or no-store`},
		{name: "another grade's refresh in /user.js", proxy: &apptest.Proxy{Rewrite: func(r *http.Request, _ int64, _ int, _ http.Header, body []byte) []byte {
			if r.URL.Path == "/user.js" {
				return []byte("var DASHBOARD_REFRESH_MS = 1000;\n")
			}
			return body
		}}, want: `/user.js of a \w+ user does not say`},
		{name: "the sign-in form posted elsewhere", proxy: replace(`<form id="login" method="post" action="/login">`, `<form id="login" method="post" action="/signin">`),
			want: `expected an element matching "form#login\[method=\\"post\\"\]\[action=\\"/login\\"\]"`},
		{name: "a grade too many on the sign-up form", proxy: replace(`>premium</option>`, `>premium</option><option value="gold">gold</option>`),
			want: `expected 4 element\(s\) matching "form#signup select\[name=\\"grade\\"\] option", found 5`},
		{name: "no link to /modify", proxy: replace(`id="modify-link"`, `id="change"`), want: `a#modify-link`},
		{name: "no list of services", proxy: replace(`<ul id="services">`, `<ol id="services">`), want: `"ul#services"`},
		{name: "the dashboard's script left out", proxy: replace(`<script src="/static/js/dashboard.js"></script>`, ``),
			want: `dashboard\.js`},
		{name: "/data as text", proxy: &apptest.Proxy{Rewrite: func(r *http.Request, _ int64, _ int, h http.Header, body []byte) []byte {
			if r.URL.Path == "/data" {
				h.Set("Content-Type", "text/plain")
			}
			return body
		}}, want: `expected Content-Type application/json, got "text/plain"`},
		{name: "/data not a JSON array", proxy: &apptest.Proxy{Rewrite: func(r *http.Request, _ int64, status int, _ http.Header, body []byte) []byte {
			if r.URL.Path == "/data" && status == http.StatusOK {
				return append(append([]byte(`{"items":`), body...), '}')
			}
			return body
		}}, want: `/data is not a JSON array`},
		{name: "another location's forecast", proxy: dataField("weather", func(d map[string]any) { d["location"] = "L9999" }),
			want: `weather: location "L9999", want the user's`},
		{name: "a forecast dated in the next period", proxy: dataField("weather", func(d map[string]any) {
			next := time.UnixMilli(int64(d["date"].(float64))).Add(services.WeatherPeriod)
			d["date"] = next.UnixMilli()
		}), want: `weather: dated .*, after the answer came`},
		{name: "any password but one ending in x for the initial users (tuned)", tuned: anyPassword, load: 10 * time.Second, want: `a sign-in with .* must be refused: expected status 403, got 303`},
		{name: "session ids derived from the email (tuned)", tuned: derivedSession, load: 10 * time.Second,
			want: `a sign-in (gave a session id the app had given before|kept the session id the browser carried)`},
		{name: "an initial user's signed-out session still works (tuned)", tuned: signOutKeeps, load: 10 * time.Second,
			want: `with the id of a session that signed out must be refused`},
		{name: "session ids compared on their first 8 characters (tuned)", tuned: looseSession, load: 15 * time.Second,
			want: `with a session id with one character changed must be refused`},
		{name: "the initial users' parameters not checked (tuned)", tuned: unchecked, load: 10 * time.Second,
			want: `a change of services with a bad parameter must be refused: expected status 400, got 303`},
		{name: "the last data answered put in a 403 (tuned)", tuned: leakInRefusal, load: 10 * time.Second,
			want: `an answer carries .*(another user's subscription|another user's email)`},
		{name: "a planted session id kept at sign-in (tuned)", tuned: fixedSession, load: 10 * time.Second,
			want: `a sign-in kept the session id the browser carried`},
		{name: "sessions kept over POST /initialize (tuned)", tuned: sessionsOutliveInitialize,
			want: `with the id of a session from before POST /initialize must be refused`},
		{name: "a session kept over a new sign-in (tuned)", tuned: sessionOutlivesSignin, load: 15 * time.Second,
			want: `with the id of a session a new sign-in replaced must be refused`},
		{name: "a taken email's password reset by a sign-up (tuned)", tuned: takenEmailResets, load: 15 * time.Second,
			want: `a sign-up with a taken email must be refused: expected status 409, got 303`},
		{name: "the last viewer's email percent-escaped in a header (tuned)", tuned: viewerHeader, load: 8 * time.Second,
			want: `an answer carries another user's email`},
		{name: "the last /data in base64 in a header (tuned)", tuned: dataHeader, load: 8 * time.Second,
			want: `an answer carries .*, (a parameter of another user's subscription|names relayed for another user's query)`},
		{name: "the last viewer's email in capitals in a comment (tuned)", tuned: capitalsComment, load: 8 * time.Second,
			want: `an answer carries another user's email`},
		{name: "the last /data in the 403 of a request with no cookie (tuned)", tuned: dataToNoCookie, load: 10 * time.Second,
			want: `an answer carries .*, (a parameter of another user's subscription|names relayed for another user's query)`},
		{name: "another user's address in /user.js (tuned)", tuned: addressInScript, load: 10 * time.Second,
			want: `an answer carries .*, a postal address relayed for another user`},
		{name: "another user's names in /user.js (tuned)", tuned: namesInScript, load: 10 * time.Second,
			want: `an answer carries .*, names relayed for another user's query`},
		{name: "a disallowed service accepted", proxy: &apptest.Proxy{StatusMap: map[int]int{http.StatusForbidden: http.StatusSeeOther}, StatusMethod: http.MethodPost},
			want: `expected status 403, got 303`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.proxy == nil {
				t.Parallel() // a build and an app of its own
			}
			var res *engine.Result
			switch {
			case c.proxy != nil:
				res = proxied(t, c.proxy)
			case c.tuned != nil:
				res = tuned(t, cmp.Or(c.load, 5*time.Second), c.tuned...)
			default:
				res = patched(t, cmp.Or(c.load, 5*time.Second), c.workspace, c.patch...)
			}
			apptest.ExpectFail(t, res, c.want)
		})
	}
}

// TestLangDefectsFail: defects in the Rust and Node apps' own code FAIL,
// each for its own reason, so the scenario does not lean on the Go app's
// quirks (issue 30). Rust: a dropped write, a session that outlives its
// sign-out and an answer for another parameter than the user's, as in Go.
// Node: the subscriptions cached in a Map that a change does not clear (a
// stale cache), the answers of a /data kept in a variable every request
// shares, which another /data resets and fills while this one awaits a
// service (another user's data), and POST /modify's check of the grade
// dropped, since the form offers only the grade's services (a skipped check).
func TestLangDefectsFail(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the apps")
	}
	for _, c := range []struct {
		lang, name string
		patches    [][2]string
		want       string
	}{
		{"rust", "a removed subscription still shown", [][2]string{{"None => subs.remove(&service),", `None => subs.remove("none"),`}},
			`data-services|answered for`},
		{"rust", "a signed-out session still signed in", [][2]string{{
			"sqlx::query(\"DELETE FROM sessions WHERE token = ?\")\n            .bind(token)",
			"sqlx::query(\"DELETE FROM sessions WHERE token = ?\")\n            .bind(\"\")"}},
			`with the id of a session that signed out must be refused`},
		{"rust", "one postal code asked for everyone", [][2]string{{`format!("{http}/postal/{}", param("code"))`, `format!("{http}/postal/1000000")`}},
			`postal: code .* want the user's code|an answer carries "\d{7}", a parameter of another user's`},
		{"node", "subscriptions cached past a change", [][2]string{
			{"const SESSION_COOKIE = \"dashboard_session\";\n",
				"const SESSION_COOKIE = \"dashboard_session\";\nconst subsCache = new Map<number, Subscriptions>();\n"},
			{"  const subs = await loadSubscriptions(db, user.id);\n  // Where the services are",
				"  const subs = subsCache.get(user.id) ?? (await loadSubscriptions(db, user.id));\n" +
					"  subsCache.set(user.id, subs);\n  // Where the services are"},
		}, `/data of a \w+ user subscribed to \[.*\] answered for`},
		{"node", "one list of answers for every /data", [][2]string{
			{"const SESSION_COOKIE = \"dashboard_session\";\n",
				"const SESSION_COOKIE = \"dashboard_session\";\nlet items: Buffer[] = [];\n"},
			{"  const items: Buffer[] = [];\n", "  items = [];\n"},
		}, `an answer carries .*another user's|/data of a \w+ user subscribed to .* answered for`},
		{"node", "any service for any grade", [][2]string{
			{"  if (!ALLOWED.get(user.grade)?.includes(service)) {\n" +
				"    await renderError(res, user, 403, `The ${user.grade} grade cannot subscribe to ${service}.`);\n" +
				"    return;\n  }\n", ""},
		}, `expected status 403, got 303`},
	} {
		t.Run(c.lang+": "+c.name, func(t *testing.T) {
			t.Parallel() // a build and an app of its own
			app := apps.Start(t, c.lang, kit.StoreSQLite, apptest.Patched(t, "webapp/"+c.lang, c.patches...))
			apptest.ExpectFail(t, apptest.Bench(t, dashboard.Problem, app, 10*time.Second), c.want)
		})
	}
}

// TestCachedLoginEarnsNothing: the tuned app with /login served cacheable
// (honest HTTP: the page is the same for everyone signed out) lets the users'
// own caches answer login pages without asking the app; since the engine
// scores such answers nothing, the app gains nothing by it.
func TestCachedLoginEarnsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the apps")
	}
	res := tuned(t, 8*time.Second, [2]string{"\t\twriteHTML(w, http.StatusOK, app.pages.login)\n",
		"\t\tw.Header().Set(\"Cache-Control\", \"public, max-age=3600\")\n\t\twriteHTML(w, http.StatusOK, app.pages.login)\n"})
	if !res.Passed || res.CachedAnswers == 0 {
		t.Errorf("passed %v with %d cached answers: want a pass whose login pages came from the users' caches and scored nothing",
			res.Passed, res.CachedAnswers)
	}
}
