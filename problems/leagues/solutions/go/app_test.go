package main

import (
	"bytes"
	"crypto/rsa"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// These tests run the tuned app in process on the reference's test fixture (../../webapp/go/main_test.go), and
// expect the answers the reference's tests expect. The whole contract is checked against the reference app
// itself, side by side, by ../tuned_test.go.

func TestMain(m *testing.M) {
	log.SetOutput(io.Discard)
	os.Exit(m.Run())
}

type testEnv struct {
	t    *testing.T
	dir  string // the store and the initial data
	app  *App
	srv  *httptest.Server
	key  *rsa.PrivateKey
	dsn  string
	root string
}

// newTestEnv writes the reference's fixture as initial data and starts the tuned app on a new store.
func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	dir := t.TempDir()
	initial := filepath.Join(dir, "initial")
	if err := os.MkdirAll(filepath.Join(initial, "tenants"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(initial, "VERSION"), []byte("fixture\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	execFile(t, filepath.Join(initial, "admin.db"), "../../webapp/sql/admin.sqlite.sql",
		"INSERT INTO tenant VALUES (1, 'alpha', 'Alpha League', 100, 100), (2, 'beta', 'Beta <&> Cup', 100, 100)",
		"INSERT INTO sqlite_sequence (name, seq) VALUES ('id_generator', 99)",
		"INSERT INTO visit_history VALUES (1, 1, 11, 1200), (4, 1, 11, 1600), (4, 1, 11, 1400), (5, 1, 11, 1600), (2, 1, 10, 1300)")
	execFile(t, filepath.Join(initial, "tenants", "1.db"), "../../webapp/sql/tenant.sql",
		`INSERT INTO player VALUES (1, 'Ann', 0, 100, 100), (2, 'Ben', 0, 100, 100), (3, 'Cid', 1, 100, 100),
			(4, 'Dee', 0, 100, 100), (5, 'Eve', 0, 100, 100)`,
		"INSERT INTO competition VALUES (10, 'Open Cup', NULL, 0, 200, 200), (11, 'Old Cup', 1500, 2, 300, 1500)",
		`INSERT INTO player_score (competition_id, upload, row_num, player_id, score, created_at) VALUES
			(11, 1, 1, 4, 900, 400), (11, 1, 2, 5, 800, 400),
			(11, 2, 1, 1, 300, 500), (11, 2, 2, 2, 500, 500), (11, 2, 3, 3, 300, 500), (11, 2, 4, 2, 200, 500)`)
	execFile(t, filepath.Join(initial, "tenants", "2.db"), "../../webapp/sql/tenant.sql",
		"INSERT INTO player VALUES (20, 'Zed', 0, 100, 100)")
	pem, err := os.ReadFile("../../keys/private.pem")
	if err != nil {
		t.Fatal(err)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(pem)
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, dir: dir, key: key, dsn: "sqlite:" + filepath.Join(dir, "tuned.db"), root: "../../webapp"}
	e.start()
	return e
}

// start starts the app on the env's store (again).
func (e *testEnv) start() {
	e.t.Helper()
	app, err := newApp(e.root, e.dsn, filepath.Join(e.dir, "initial"), "../../keys/public.pem")
	if err != nil {
		e.t.Fatal(err)
	}
	e.app, e.srv = app, httptest.NewServer(app.routes())
	e.t.Cleanup(e.stop)
}

func (e *testEnv) stop() {
	if e.srv != nil {
		e.srv.Close()
		e.app.store.close()
		e.srv = nil
	}
}

func execFile(t *testing.T, path, schemaFile string, statements ...string) {
	t.Helper()
	schema, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range append([]string{string(schema)}, statements...) {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func (e *testEnv) token(aud, role, sub string) string {
	return e.sign(jwt.MapClaims{"sub": sub, "aud": aud, "role": role, "exp": time.Now().Add(time.Hour).Unix()})
}

func (e *testEnv) sign(claims jwt.MapClaims) string {
	s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(e.key)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (e *testEnv) do(method, host, path, token string, body io.Reader, contentType string) answer {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Host = host + ".t.localhost"
	if token != "" {
		req.AddCookie(&http.Cookie{Name: tokenCookie, Value: token})
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	if strings.HasPrefix(path, "/api/") || path == "/initialize" {
		if cc, ct := res.Header.Get("Cache-Control"), res.Header.Get("Content-Type"); cc != "private" || ct != "application/json" {
			e.t.Errorf("%s %s %s: Cache-Control %q, Content-Type %q", method, host, path, cc, ct)
		}
	}
	return answer{res.StatusCode, res.Header, string(b)}
}

func (e *testEnv) get(host, path, token string) answer {
	return e.do("GET", host, path, token, nil, "")
}

func (e *testEnv) postJSON(host, path, token, body string) answer {
	return e.do("POST", host, path, token, strings.NewReader(body), "application/json")
}

func (e *testEnv) upload(host string, competition int64, token, csv string) answer {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("scores", "scores.csv")
	io.WriteString(fw, csv)
	mw.Close()
	return e.do("POST", host, fmt.Sprintf("/api/organizer/competitions/%d/scores", competition), token, &b, mw.FormDataContentType())
}

func (e *testEnv) expect(a answer, status int, want string) {
	e.t.Helper()
	if a.status != status || (want != "" && a.body != want) {
		e.t.Errorf("status %d, body %s; want %d %s", a.status, a.body, status, want)
	}
}

func TestAnswers(t *testing.T) {
	e := newTestEnv(t)
	org, ann := e.token("alpha", "organizer", "boss"), e.token("alpha", "player", "1")
	admin := e.token("admin", "admin", "root")
	for _, c := range []struct{ host, path, token, want string }{
		{"alpha", "/api/organizer/players", org, `{"players":[{"id":1,"display_name":"Ann","is_disqualified":false},` +
			`{"id":2,"display_name":"Ben","is_disqualified":false},{"id":3,"display_name":"Cid","is_disqualified":true},` +
			`{"id":4,"display_name":"Dee","is_disqualified":false},{"id":5,"display_name":"Eve","is_disqualified":false}]}`},
		{"alpha", "/api/organizer/competitions", org, `{"competitions":[{"id":11,"title":"Old Cup","is_finished":true},{"id":10,"title":"Open Cup","is_finished":false}]}`},
		{"alpha", "/api/player/competitions", ann, `{"competitions":[{"id":11,"title":"Old Cup","is_finished":true},{"id":10,"title":"Open Cup","is_finished":false}]}`},
		{"alpha", "/api/player/competitions/11/ranking", ann, `{"competition":{"id":11,"title":"Old Cup","is_finished":true},"ranks":[` +
			`{"rank":1,"player_id":1,"display_name":"Ann","score":300},{"rank":2,"player_id":3,"display_name":"Cid","score":300},` +
			`{"rank":3,"player_id":2,"display_name":"Ben","score":200}]}`},
		{"alpha", "/api/player/competitions/11/ranking?rank_after=2", ann, `{"competition":{"id":11,"title":"Old Cup","is_finished":true},"ranks":[` +
			`{"rank":3,"player_id":2,"display_name":"Ben","score":200}]}`},
		{"alpha", "/api/player/competitions/11/ranking?rank_after=3", ann, `{"competition":{"id":11,"title":"Old Cup","is_finished":true},"ranks":[]}`},
		{"alpha", "/api/player/competitions/10/ranking", ann, `{"competition":{"id":10,"title":"Open Cup","is_finished":false},"ranks":[]}`},
		{"alpha", "/api/player/players/4", ann, `{"player":{"id":4,"display_name":"Dee","is_disqualified":false},"scores":[]}`},
		{"alpha", "/api/player/players/2", ann, `{"player":{"id":2,"display_name":"Ben","is_disqualified":false},"scores":[{"competition_id":11,"title":"Old Cup","score":200}]}`},
		{"alpha", "/api/organizer/billing", org, `{"billing":{"total":310,"competitions":[` +
			`{"competition_id":11,"title":"Old Cup","is_finished":true,"scored":3,"viewed":1,"billing":310},` +
			`{"competition_id":10,"title":"Open Cup","is_finished":false,"scored":0,"viewed":0,"billing":0}]}}`},
		{"admin", "/api/admin/billing", admin, `{"tenants":[{"id":2,"name":"beta","display_name":"Beta <&> Cup","billing":0},` +
			`{"id":1,"name":"alpha","display_name":"Alpha League","billing":310}]}`},
		{"admin", "/api/admin/billing?before=2", admin, `{"tenants":[{"id":1,"name":"alpha","display_name":"Alpha League","billing":310}]}`},
		{"admin", "/api/admin/billing?before=1", admin, `{"tenants":[]}`},
		{"alpha", "/api/me", ann, `{"role":"player","subject":"1","tenant":{"id":1,"name":"alpha","display_name":"Alpha League"},"player":{"id":1,"display_name":"Ann","is_disqualified":false}}`},
		{"alpha", "/api/me", org, `{"role":"organizer","subject":"boss","tenant":{"id":1,"name":"alpha","display_name":"Alpha League"},"player":null}`},
		{"admin", "/api/me", admin, `{"role":"admin","subject":"root","tenant":null,"player":null}`},
	} {
		e.expect(e.get(c.host, c.path, c.token), 200, c.want)
	}
	e.expect(e.do("DELETE", "alpha", "/api/organizer/players", org, nil, ""), 404, `{"error":"not found"}`)
	e.expect(e.get("alpha", "/api/player/competitions", e.token("alpha", "player", "3")), 403, `{"error":"disqualified"}`)
	e.expect(e.get("alpha", "/api/player/competitions", ""), 401, `{"error":"invalid token"}`)
	e.expect(e.get("alpha", "/api/organizer/players", ann), 403, `{"error":"forbidden"}`)
}

// TestTokenCache checks that a remembered token is still refused once it expires, and on another host.
func TestTokenCache(t *testing.T) {
	e := newTestEnv(t)
	tok := e.sign(jwt.MapClaims{"sub": "1", "aud": "alpha", "role": "player", "exp": time.Now().Add(1500 * time.Millisecond).Unix()})
	e.expect(e.get("alpha", "/api/me", tok), 200, "")
	e.expect(e.get("beta", "/api/me", tok), 401, "")
	for time.Now().Unix() < jwtExp(t, tok) {
		time.Sleep(100 * time.Millisecond)
	}
	e.expect(e.get("alpha", "/api/me", tok), 401, "")
}

func jwtExp(t *testing.T, tok string) int64 {
	var c jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(tok, &c); err != nil {
		t.Fatal(err)
	}
	return c.ExpiresAt.Unix()
}

func TestScoreUploads(t *testing.T) {
	e := newTestEnv(t)
	org, ann := e.token("alpha", "organizer", "boss"), e.token("alpha", "player", "1")
	ranking := func() string {
		t.Helper()
		var v struct {
			Ranks []struct {
				Rank, PlayerID, Score int64
			} `json:"ranks"`
		}
		a := e.get("alpha", "/api/player/competitions/10/ranking", ann)
		if err := json.Unmarshal([]byte(strings.ReplaceAll(a.body, "player_id", "playerid")), &v); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, r := range v.Ranks {
			parts = append(parts, fmt.Sprintf("%d:%d=%d", r.Rank, r.PlayerID, r.Score))
		}
		return strings.Join(parts, " ")
	}
	e.expect(e.upload("alpha", 10, org, "player_id,score\n1,50\n2,70\n3,60\n1,70\n4,70\n2,10\r\n5,0"), 200, `{"rows":7}`)
	if got := ranking(); got != "1:1=70 2:4=70 3:3=60 4:2=10 5:5=0" {
		t.Errorf("ranking %q", got)
	}
	e.expect(e.upload("alpha", 10, org, "player_id,score\n5,900\n"), 200, `{"rows":1}`)
	if got := ranking(); got != "1:5=900" {
		t.Errorf("after a second upload: %q", got)
	}
	for _, csv := range []string{"", "\n", "player_id,score\n20,1", "player_id,score\n999,1", "player_id,score\n1,1\n\n"} {
		if a := e.upload("alpha", 10, org, csv); a.status != 400 {
			t.Errorf("CSV %q: %d %s, want 400", csv, a.status, a.body)
		}
	}
	if got := ranking(); got != "1:5=900" {
		t.Errorf("after bad uploads: %q", got)
	}
	e.expect(e.do("POST", "alpha", "/api/organizer/competitions/10/scores", org, strings.NewReader("player_id,score\n1,1"), "text/csv"), 400, "")
	e.expect(e.upload("alpha", 10, org, "player_id,score"), 200, `{"rows":0}`)
	if got := ranking(); got != "" {
		t.Errorf("after an empty upload: %q", got)
	}
	e.expect(e.upload("alpha", 11, org, "player_id,score\n1,1\n"), 409, `{"error":"competition finished"}`)
	e.expect(e.upload("alpha", 11, org, "garbage"), 409, "")
	e.expect(e.upload("alpha", 999, org, "garbage"), 404, "")
	e.expect(e.upload("beta", 10, e.token("beta", "organizer", "b"), "player_id,score\n20,1\n"), 404, "")
}

// TestBillingAtTheFinish: a first visit at or before the finish's second counts, and none after the finish is
// recorded: the bill made at the finish never changes.
func TestBillingAtTheFinish(t *testing.T) {
	e := newTestEnv(t)
	org, dee, eve := e.token("alpha", "organizer", "boss"), e.token("alpha", "player", "4"), e.token("alpha", "player", "5")
	e.expect(e.upload("alpha", 10, org, "player_id,score\n1,5\n2,6\n1,7\n"), 200, `{"rows":3}`)
	e.expect(e.get("alpha", "/api/player/competitions/10/ranking", dee), 200, "")
	e.expect(e.get("alpha", "/api/player/competitions/10/ranking", dee), 200, "")
	// Ben (2) read the ranking in the initial data, and has a score: he counts once, as scored.
	e.expect(e.postJSON("alpha", "/api/organizer/competitions/10/finish", org, ""), 200, `{"competition":{"id":10,"title":"Open Cup","is_finished":true}}`)
	e.expect(e.get("alpha", "/api/player/competitions/10/ranking", eve), 200, "")
	want := `{"billing":{"total":520,"competitions":[` +
		`{"competition_id":11,"title":"Old Cup","is_finished":true,"scored":3,"viewed":1,"billing":310},` +
		`{"competition_id":10,"title":"Open Cup","is_finished":true,"scored":2,"viewed":1,"billing":210}]}}`
	e.expect(e.get("alpha", "/api/organizer/billing", org), 200, want)
	e.expect(e.get("admin", "/api/admin/billing?before=2", e.token("admin", "admin", "root")), 200,
		`{"tenants":[{"id":1,"name":"alpha","display_name":"Alpha League","billing":520}]}`)
	var visits int
	if err := e.app.store.db.QueryRow("SELECT COUNT(*) FROM visits WHERE competition_id = 10").Scan(&visits); err != nil || visits != 2 {
		t.Errorf("%d visit rows kept for competition 10 (%v), want 2: Ben's of the initial data and Dee's first", visits, err)
	}
	// The same after a restart, from the store.
	e.stop()
	e.start()
	e.expect(e.get("alpha", "/api/organizer/billing", org), 200, want)

	// A visit at the finish's second counts: the bill is made from the visits as the store has them.
	st := e.app.st.Load()
	c := st.tenant("alpha").competition(10)
	c2 := newCompetition(competitionRow{id: 99, tenantID: 1, title: "x"})
	c2.visits[4] = 1000
	c2.visits[5] = 1001
	if f := c2.bill(1000); f.viewed != 1 || f.yen != 10 {
		t.Errorf("visits at 1000 and 1001, finish at 1000: %+v, want one viewer", f)
	}
	if c.fin.Load() == nil || c.visits != nil {
		t.Error("a finished competition keeps its visits")
	}
}

func TestInitializeAndRestart(t *testing.T) {
	e := newTestEnv(t)
	admin, org := e.token("admin", "admin", "root"), e.token("alpha", "organizer", "boss")
	e.expect(e.postJSON("admin", "/api/admin/tenants", admin, `{"name":"gamma","display_name":"Gamma"}`), 200,
		`{"tenant":{"id":3,"name":"gamma","display_name":"Gamma","billing":0}}`)
	e.expect(e.postJSON("alpha", "/api/organizer/players", org, `{"display_names":["Fay","Gus \"G\" <x>"]}`), 200,
		`{"players":[{"id":100,"display_name":"Fay","is_disqualified":false},{"id":101,"display_name":"Gus \"G\" <x>","is_disqualified":false}]}`)
	e.expect(e.postJSON("beta", "/api/organizer/competitions", e.token("beta", "organizer", "b"), `{"title":"Beta Open"}`), 200,
		`{"competition":{"id":102,"title":"Beta Open","is_finished":false}}`)
	e.expect(e.upload("alpha", 10, org, "player_id,score\n1,5\n101,6\n"), 200, "")
	e.expect(e.postJSON("alpha", "/api/organizer/players/2/disqualify", org, ""), 200, `{"player":{"id":2,"display_name":"Ben","is_disqualified":true}}`)
	e.expect(e.postJSON("alpha", "/api/organizer/competitions/10/finish", org, ""), 200, "")
	gamma := e.token("gamma", "organizer", "g")
	e.expect(e.postJSON("gamma", "/api/organizer/players", gamma, `{"display_names":["Hal"]}`), 200,
		`{"players":[{"id":103,"display_name":"Hal","is_disqualified":false}]}`)

	// A restart keeps it all, and the id generator.
	before := []answer{e.get("alpha", "/api/organizer/billing", org), e.get("alpha", "/api/organizer/players", org),
		e.get("admin", "/api/admin/billing", admin), e.get("gamma", "/api/organizer/players", gamma),
		e.get("alpha", "/api/player/competitions/10/ranking", e.token("alpha", "player", "1"))}
	e.stop()
	e.start()
	after := []answer{e.get("alpha", "/api/organizer/billing", org), e.get("alpha", "/api/organizer/players", org),
		e.get("admin", "/api/admin/billing", admin), e.get("gamma", "/api/organizer/players", gamma),
		e.get("alpha", "/api/player/competitions/10/ranking", e.token("alpha", "player", "1"))}
	for i := range before {
		if before[i].body != after[i].body {
			t.Errorf("after a restart:\n%s\nwas\n%s", after[i].body, before[i].body)
		}
	}
	e.expect(e.postJSON("gamma", "/api/organizer/competitions", gamma, `{"title":"G"}`), 200, `{"competition":{"id":104,"title":"G","is_finished":false}}`)

	e.expect(e.do("POST", "anything", "/initialize", "", nil, ""), 200, `{"lang":"go"}`)
	e.expect(e.get("gamma", "/api/organizer/players", gamma), 404, "")
	e.expect(e.get("alpha", "/api/organizer/competitions", org), 200,
		`{"competitions":[{"id":11,"title":"Old Cup","is_finished":true},{"id":10,"title":"Open Cup","is_finished":false}]}`)
	e.expect(e.get("alpha", "/api/player/competitions/10/ranking", e.token("alpha", "player", "2")), 200,
		`{"competition":{"id":10,"title":"Open Cup","is_finished":false},"ranks":[]}`)
	e.expect(e.postJSON("alpha", "/api/organizer/players", org, `{"display_names":["Fay"]}`), 200,
		`{"players":[{"id":100,"display_name":"Fay","is_disqualified":false}]}`)
	e.expect(e.postJSON("admin", "/api/admin/tenants", admin, `{"name":"gamma","display_name":"Gamma"}`), 200,
		`{"tenant":{"id":3,"name":"gamma","display_name":"Gamma","billing":0}}`)
	// And a restart after /initialize starts from what it restored.
	e.stop()
	e.start()
	e.expect(e.get("alpha", "/api/organizer/billing", org), 200, `{"billing":{"total":310,"competitions":[`+
		`{"competition_id":11,"title":"Old Cup","is_finished":true,"scored":3,"viewed":1,"billing":310},`+
		`{"competition_id":10,"title":"Open Cup","is_finished":false,"scored":0,"viewed":0,"billing":0}]}}`)
	e.expect(e.postJSON("alpha", "/api/organizer/players", org, `{"display_names":["Gus"]}`), 200,
		`{"players":[{"id":101,"display_name":"Gus","is_disqualified":false}]}`)
}

// TestConcurrentWrites runs uploads, finishes, disqualifications and reads on one tenant from many goroutines (run
// it with -race): every upload is answered, and the bill of every finish counts the players who read before it.
func TestConcurrentWrites(t *testing.T) {
	e := newTestEnv(t)
	org := e.token("alpha", "organizer", "boss")
	var comps []int64
	for i := range 8 {
		var v struct {
			Competition struct{ ID int64 } `json:"competition"`
		}
		a := e.postJSON("alpha", "/api/organizer/competitions", org, fmt.Sprintf(`{"title":"C%d"}`, i))
		if err := json.Unmarshal([]byte(a.body), &v); err != nil {
			t.Fatal(err)
		}
		comps = append(comps, v.Competition.ID)
	}
	var wg sync.WaitGroup
	for i, c := range comps {
		wg.Go(func() {
			for j := range 20 {
				e.expect(e.upload("alpha", c, org, fmt.Sprintf("player_id,score\n1,%d\n2,%d\n", j, i)), 200, `{"rows":2}`)
			}
		})
		wg.Go(func() {
			for range 20 {
				for _, p := range []string{"4", "5"} {
					e.expect(e.get("alpha", fmt.Sprintf("/api/player/competitions/%d/ranking", c), e.token("alpha", "player", p)), 200, "")
				}
				e.expect(e.get("alpha", "/api/organizer/billing", org), 200, "")
				e.expect(e.get("alpha", "/api/organizer/players", org), 200, "")
			}
		})
	}
	wg.Go(func() { e.expect(e.postJSON("alpha", "/api/organizer/players/1/disqualify", org, ""), 200, "") })
	wg.Go(func() {
		e.expect(e.postJSON("alpha", "/api/organizer/players", org, `{"display_names":["N"]}`), 200, "")
	})
	wg.Wait()
	for _, c := range comps {
		e.expect(e.postJSON("alpha", fmt.Sprintf("/api/organizer/competitions/%d/finish", c), org, ""), 200, "")
	}
	a := e.get("alpha", "/api/organizer/billing", org)
	for _, c := range comps {
		if want := fmt.Sprintf(`"competition_id":%d,"title":"C%d","is_finished":true,"scored":2,"viewed":2,"billing":220}`, c, c-comps[0]); !strings.Contains(a.body, want) {
			t.Errorf("the bill of %d is not %s:\n%s", c, want, a.body)
		}
	}
	if !strings.Contains(e.get("alpha", "/api/organizer/players", org).body, `{"id":1,"display_name":"Ann","is_disqualified":true}`) {
		t.Error("the cached players' list missed a disqualification")
	}
}

// BenchmarkVerify compares the verification of a token (RS256, as the reference does it on every request) with a
// token remembered by the cache.
func BenchmarkVerify(b *testing.B) {
	pem, err := os.ReadFile("../../keys/public.pem")
	if err != nil {
		b.Fatal(err)
	}
	app := &App{}
	if app.publicKey, err = jwt.ParseRSAPublicKeyFromPEM(pem); err != nil {
		b.Fatal(err)
	}
	priv, err := os.ReadFile("../../keys/private.pem")
	if err != nil {
		b.Fatal(err)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(priv)
	if err != nil {
		b.Fatal(err)
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "1", "aud": "alpha", "role": "player",
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString(key)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("verified", func(b *testing.B) {
		for b.Loop() {
			app.tokens.reset()
			if _, ok := app.verify(tok, "alpha"); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("remembered", func(b *testing.B) {
		for b.Loop() {
			if _, ok := app.verify(tok, "alpha"); !ok {
				b.Fatal("refused")
			}
		}
	})
}
