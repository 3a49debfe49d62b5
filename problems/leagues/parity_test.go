package leagues_test

import (
	"bytes"
	"context"
	"crypto/rsa"
	"database/sql"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/tunecon/tunecon/kit/apptest"
	"github.com/tunecon/tunecon/kit/apptest/servers"
	"github.com/tunecon/tunecon/kit/launch"
	"github.com/tunecon/tunecon/problems/leagues/data"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// TestGoAndPythonAgree starts the Go and the Python reference apps on the
// initial data, each on its own working copy, with the admin data in SQLite and
// then in MariaDB, sends both the same requests one after the other (reads,
// every kind of write, refusals, /initialize), and checks that they answer the
// same status, the same Content-Type and Cache-Control, and the same body, byte
// for byte.
func TestGoAndPythonAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts both reference apps: not in -short")
	}
	if err := exec.Command("python3", "-c", "import venv, ensurepip").Run(); err != nil {
		t.Skip("python3 with venv is not installed")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	webapp := filepath.Join(root, "problems", "leagues", "webapp")
	initial := filepath.Join(webapp, "data", "initial")
	if _, err := data.Ensure(initial, data.Default()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out := &apptest.Buffer{}
	log := out
	build := t.TempDir()
	bin := filepath.Join(build, "leagues-go")
	if err := launch.BuildGo(ctx, filepath.Join(webapp, "go"), bin, log); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	venv := filepath.Join(root, "build", "venv-leagues-python")
	if err := launch.EnsureVenv(ctx, venv, filepath.Join(webapp, "python", "requirements.txt"), log); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// start starts the app of lang with its admin data at dsn, and returns its
	// URL.
	start := func(t *testing.T, lang, dsn string) string {
		t.Helper()
		cmd := exec.Command(bin)
		if lang == "python" {
			cmd = exec.Command(filepath.Join(venv, "bin", "gunicorn"), "--config", "gunicorn.conf.py")
		}
		cmd.Dir = filepath.Join(webapp, lang)
		cmd.Env = launch.Env("LEAGUES_ADDR=127.0.0.1:0", "LEAGUES_ROOT="+webapp, "LEAGUES_INITIAL_DIR="+initial,
			"LEAGUES_DB="+dsn, "LEAGUES_TENANT_DIR="+filepath.Join(t.TempDir(), "tenants"))
		app, err := launch.Start(ctx, cmd, lang, log)
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := app.Stop(sctx); err != nil {
				t.Errorf("stopping %s: %v", lang, err)
			}
		})
		return app.URL
	}

	// The two stores' halves go side by side: each sends one request at a
	// time, and the MariaDB half's first start loads the data for long.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the apps' output:\n%s", out.String())
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, "loaded the initial") {
				t.Log(line) // how long a first start on MariaDB takes
			}
		}
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		work := t.TempDir()
		dsn := func(lang string) string { return "sqlite:" + filepath.Join(work, lang+".db") }
		checkParity(t, [2]string{start(t, "go", dsn("go")), start(t, "python", dsn("python"))}, func(lang, insert string) error {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(work, lang+".db")+"?_pragma=busy_timeout(5000)")
			if err != nil {
				return err
			}
			defer db.Close()
			_, err = db.Exec(insert)
			return err
		})
	})
	t.Run("mariadb", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		maria, err := servers.StartMariaDB(ctx, dir, log)
		servers.Require(t, err)
		t.Cleanup(maria.Stop)
		dsns := map[string]string{}
		for _, lang := range []string{"go", "python"} {
			if dsns[lang], err = maria.CreateDatabase(ctx, "leagues_"+lang); err != nil {
				t.Fatal(err)
			}
		}
		checkParity(t, [2]string{start(t, "go", dsns["go"]), start(t, "python", dsns["python"])}, func(lang, insert string) error {
			return maria.SQL(ctx, "USE leagues_"+lang+"; "+insert)
		})
	})
}

// checkParity sends the same requests to the Go app at urls[0] and the Python
// app at urls[1]. insert runs an INSERT statement on an app's admin data ("go"
// or "python").
func checkParity(t *testing.T, urls [2]string, insert func(lang, statement string) error) {
	in, err := data.Default().Initial()
	if err != nil {
		t.Fatal(err)
	}
	key, err := keys.Private()
	if err != nil {
		t.Fatal(err)
	}
	p := &parity{t: t, key: key, urls: urls}
	huge, small := in.Tenant(1), in.Tenant(2)
	var finished, running data.Competition
	for _, c := range huge.Competitions {
		if c.Finished() && finished.ID == 0 {
			finished = c
		}
		if !c.Finished() && c.Uploads > 0 && running.ID == 0 {
			running = c
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
	h := huge.Name
	org, me := p.token(h, keys.RoleOrganizer, "boss"), p.token(h, keys.RolePlayer, fmt.Sprint(player.ID))
	admin := p.token(keys.AdminAudience, keys.RoleAdmin, "root")

	// Reads of the initial data.
	p.same("GET", h, "/api/me", me, nil, "", 200)
	p.same("GET", h, "/api/me", org, nil, "", 200)
	p.same("GET", "admin", "/api/me", admin, nil, "", 200)
	p.same("GET", h, "/api/player/competitions", me, nil, "", 200)
	p.same("GET", h, "/api/organizer/competitions", org, nil, "", 200)
	for _, after := range []string{"", "?rank_after=0", "?rank_after=100", "?rank_after=2600", "?rank_after=99999"} {
		p.same("GET", h, fmt.Sprintf("/api/player/competitions/%d/ranking%s", running.ID, after), me, nil, "", 200)
	}
	p.same("GET", h, fmt.Sprintf("/api/player/competitions/%d/ranking", finished.ID), me, nil, "", 200)
	for _, id := range []int64{player.ID, disqualified.ID, huge.Players[len(huge.Players)-1].ID} {
		p.same("GET", h, fmt.Sprintf("/api/player/players/%d", id), me, nil, "", 200)
	}
	p.same("GET", h, "/api/organizer/players", org, nil, "", 200)
	p.same("GET", h, "/api/organizer/billing", org, nil, "", 200)
	p.same("GET", small.Name, "/api/organizer/billing", p.token(small.Name, keys.RoleOrganizer, "o"), nil, "", 200)
	p.same("GET", "admin", "/api/admin/billing", admin, nil, "", 200)
	p.same("GET", "admin", "/api/admin/billing?before=50", admin, nil, "", 200)
	p.same("GET", "admin", "/api/admin/billing?before=1", admin, nil, "", 200)

	// Refusals.
	expired, _ := keys.Sign(key, keys.Claims{Sub: "boss", Aud: h, Role: keys.RoleOrganizer, Exp: time.Now().Add(-time.Minute).Unix()})
	for _, c := range []struct {
		method, host, path, token string
		status                    int
	}{
		{"GET", h, "/api/organizer/players", "", 401},
		{"GET", h, "/api/organizer/players", "x.y.z", 401},
		{"GET", h, "/api/organizer/players", expired, 401},
		{"GET", h, "/api/organizer/players", p.token(small.Name, keys.RoleOrganizer, "o"), 401},
		{"GET", h, "/api/organizer/players", p.token(h, "owner", "o"), 401},
		{"GET", h, "/api/player/competitions", p.token(h, keys.RolePlayer, "999999"), 401},
		{"GET", h, "/api/organizer/players", me, 403},
		{"GET", h, "/api/player/competitions", org, 403},
		{"GET", "admin", "/api/admin/billing", p.token(keys.AdminAudience, keys.RoleOrganizer, "o"), 403},
		{"GET", h, "/api/me", p.token(h, keys.RolePlayer, fmt.Sprint(disqualified.ID)), 403},
		{"GET", h, "/api/player/competitions", p.token(h, keys.RolePlayer, fmt.Sprint(disqualified.ID)), 403},
		{"GET", "no-such-tenant", "/api/me", p.token("no-such-tenant", keys.RoleOrganizer, "o"), 404},
		{"GET", h, "/api/player/competitions/1/ranking", me, 404},
		{"GET", h, fmt.Sprintf("/api/player/competitions/%d/ranking?rank_after=-1", running.ID), me, 400},
		{"GET", h, "/api/player/players/0", me, 404},
		{"GET", "admin", "/api/admin/billing?before=1x", admin, 400},
		{"DELETE", h, "/api/organizer/players", org, 404},
		{"GET", h, "/api/nothing", org, 404},
	} {
		p.same(c.method, c.host, c.path, c.token, nil, "", c.status)
	}

	// Writes, in the same order to both: ids come from the same generator
	// state.
	p.same("POST", h, "/api/organizer/players", org, []byte(`{"display_names":["Ann <&>","名前 \u2028 x","q\"uote\\"]}`), "application/json", 200)
	p.same("POST", h, "/api/organizer/competitions", org, []byte(`{"title":"Parity Cup"}`), "application/json", 200)
	comp := in.NextID + 3
	csv := fmt.Sprintf("player_id,score\n%d,500\n%d,700\n%d,700\r\n%d,100\n", player.ID, in.NextID, in.NextID+1, player.ID)
	p.upload(h, comp, org, csv, 200)
	p.same("GET", h, fmt.Sprintf("/api/player/competitions/%d/ranking", comp), me, nil, "", 200)
	p.same("GET", h, fmt.Sprintf("/api/player/players/%d", in.NextID+1), me, nil, "", 200)
	p.upload(h, comp, org, fmt.Sprintf("player_id,score\n%d,42\n", in.NextID+2), 200)
	p.same("GET", h, fmt.Sprintf("/api/player/competitions/%d/ranking", comp), me, nil, "", 200)
	p.upload(h, comp, org, "player_id,score", 200)
	p.same("GET", h, fmt.Sprintf("/api/player/competitions/%d/ranking", comp), me, nil, "", 200)
	for _, bad := range []string{"", "player_id;score\n1,1", "player_id,score\n1,-1", "player_id,score\n999999,1", "player_id,score\n\n"} {
		p.upload(h, comp, org, bad, 400)
	}
	p.upload(h, comp, org, fmt.Sprintf("player_id,score\n%d,9\n", player.ID), 200)
	p.same("GET", h, fmt.Sprintf("/api/player/competitions/%d/ranking", comp), me, nil, "", 200)
	p.same("POST", h, fmt.Sprintf("/api/organizer/competitions/%d/finish", comp), org, nil, "", 200)
	p.same("POST", h, fmt.Sprintf("/api/organizer/competitions/%d/finish", comp), org, nil, "", 409)
	p.upload(h, comp, org, fmt.Sprintf("player_id,score\n%d,9\n", player.ID), 409)
	p.upload(h, 1, org, "player_id,score\n", 404)
	p.same("GET", h, "/api/organizer/billing", org, nil, "", 200)
	p.same("GET", h, "/api/organizer/competitions", org, nil, "", 200)
	// The billing rule's edge, the same in both: a new player (who has no
	// score) read an initial finished competition's ranking at the second it
	// finished (counts), another a second later (does not).
	for _, lang := range []string{"go", "python"} {
		if err := insert(lang, fmt.Sprintf("INSERT INTO visit_history (player_id, tenant_id, competition_id, created_at) VALUES (%d, 1, %d, %d), (%d, 1, %d, %d)",
			in.NextID, finished.ID, finished.FinishedAt, in.NextID+1, finished.ID, finished.FinishedAt+1)); err != nil {
			t.Fatal(err)
		}
	}
	p.same("GET", h, "/api/organizer/billing", org, nil, "", 200)
	if want := fmt.Sprintf(`"competition_id":%d,"title":%q,"is_finished":true,"scored":%d,"viewed":%d,"billing":%d}`, finished.ID,
		finished.Title, finished.Billing.Scored, finished.Billing.Viewed+1, finished.Billing.Yen+data.YenPerViewer); !strings.Contains(p.last, want) {
		t.Errorf("the bill of competition %d is not the initial one and one viewer more (%s):\n%.500s", finished.ID, want, p.last)
	}
	p.same("POST", h, fmt.Sprintf("/api/organizer/players/%d/disqualify", in.NextID), org, nil, "", 200)
	p.same("GET", h, "/api/me", p.token(h, keys.RolePlayer, fmt.Sprint(in.NextID)), nil, "", 403)
	p.same("POST", h, "/api/organizer/players/999999/disqualify", org, nil, "", 404)
	for _, body := range []string{``, `{`, `[]`, `null`, `{"display_names":[]}`, `{"display_names":[1]}`, `{"display_names":["a\u0007"]}`} {
		p.same("POST", h, "/api/organizer/players", org, []byte(body), "application/json", 400)
	}
	p.same("POST", "admin", "/api/admin/tenants", admin, []byte(`{"name":"parity-new","display_name":"Parity & Co"}`), "application/json", 200)
	p.same("POST", "admin", "/api/admin/tenants", admin, []byte(`{"name":"parity-new","display_name":"Again"}`), "application/json", 409)
	p.same("POST", "admin", "/api/admin/tenants", admin, []byte(`{"name":"admin","display_name":"No"}`), "application/json", 400)
	newOrg := p.token("parity-new", keys.RoleOrganizer, "n")
	p.same("POST", "parity-new", "/api/organizer/players", newOrg, []byte(`{"display_names":["First"]}`), "application/json", 200)
	p.same("GET", "parity-new", "/api/organizer/players", newOrg, nil, "", 200)
	p.same("GET", "admin", "/api/admin/billing", admin, nil, "", 200)

	// /initialize: each app names its language; then both are back at the
	// start.
	p.initialize()
	p.same("GET", "parity-new", "/api/organizer/players", newOrg, nil, "", 404)
	p.same("GET", h, "/api/organizer/competitions", org, nil, "", 200)
	p.same("POST", h, "/api/organizer/players", org, []byte(`{"display_names":["Again"]}`), "application/json", 200)
	if !strings.Contains(p.last, fmt.Sprintf(`"id":%d`, in.NextID)) {
		t.Errorf("after /initialize the first new player is %s, want id %d", p.last, in.NextID)
	}
}

// parity sends each request to both apps.
type parity struct {
	t    *testing.T
	key  *rsa.PrivateKey
	urls [2]string // Go, Python
	last string    // the last body both answered
}

func (p *parity) token(aud, role, sub string) string {
	tok, err := keys.Sign(p.key, keys.Claims{Sub: sub, Aud: aud, Role: role, Exp: time.Now().Add(time.Hour).Unix()})
	if err != nil {
		p.t.Fatal(err)
	}
	return tok
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (p *parity) send(base, method, host, path, token string, body []byte, contentType string) reply {
	p.t.Helper()
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(req.URL.Host)
	req.Host = host + ".t.localhost:" + port
	if token != "" {
		req.AddCookie(&http.Cookie{Name: keys.CookieName, Value: token})
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return reply{res.StatusCode, res.Header, string(b)}
}

// same sends one request to the Go app, then to the Python app, and checks that
// both answered status, alike.
func (p *parity) same(method, host, path, token string, body []byte, contentType string, status int) {
	p.t.Helper()
	g := p.send(p.urls[0], method, host, path, token, body, contentType)
	py := p.send(p.urls[1], method, host, path, token, body, contentType)
	what := fmt.Sprintf("%s %s %s", method, host, path)
	if g.status != status || py.status != status {
		p.t.Errorf("%s: Go %d, Python %d, want %d\nGo:     %.300s\nPython: %.300s", what, g.status, py.status, status, g.body, py.body)
		return
	}
	for _, name := range []string{"Content-Type", "Cache-Control"} {
		if g.header.Get(name) != py.header.Get(name) || (name == "Cache-Control" && g.header.Get(name) != "private") {
			p.t.Errorf("%s: %s %q from Go, %q from Python", what, name, g.header.Get(name), py.header.Get(name))
		}
	}
	if g.body != py.body {
		i := 0
		for i < len(g.body) && i < len(py.body) && g.body[i] == py.body[i] {
			i++
		}
		from := max(0, i-80)
		p.t.Errorf("%s: the bodies differ at byte %d\nGo:     …%.200s\nPython: …%.200s", what, i, g.body[from:], py.body[from:])
	}
	p.last = g.body
}

// upload sends a CSV file as the multipart part "scores" to both apps.
func (p *parity) upload(host string, competition int64, token, csv string, status int) {
	p.t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if err := mw.SetBoundary("parity-boundary-0123456789"); err != nil {
		p.t.Fatal(err)
	}
	fw, _ := mw.CreateFormFile("scores", "scores.csv")
	io.WriteString(fw, csv)
	mw.Close()
	p.same("POST", host, fmt.Sprintf("/api/organizer/competitions/%d/scores", competition), token, b.Bytes(), mw.FormDataContentType(), status)
}

func (p *parity) initialize() {
	p.t.Helper()
	for i, lang := range []string{"go", "python"} {
		r := p.send(p.urls[i], "POST", "anything", "/initialize", "", nil, "")
		if want := `{"lang":"` + lang + `"}`; r.status != 200 || r.body != want || r.header.Get("Cache-Control") != "private" {
			p.t.Errorf("%s /initialize: %d %q Cache-Control %q, want 200 %s", lang, r.status, r.body, r.header.Get("Cache-Control"), want)
		}
	}
}
