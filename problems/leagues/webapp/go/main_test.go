package main

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
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
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jmoiron/sqlx"
)

// The fixture: two tenants, alpha (id 1) and beta (id 2), and what is in them.
//
// alpha's players are 1 Ann, 2 Ben, 3 Cid (disqualified), 4 Dee and 5 Eve; competition 10 "Open Cup" runs and
// has no score; competition 11 "Old Cup" finished at 1500 after two uploads: the last (upload 2) has
// Ann 300 (row 1), Ben 500 then 200 (rows 2 and 4, the last counts), Cid 300 (row 3). Visits of 11: Ann at 1200,
// Dee at 1400 and 1600, Eve at 1600 only; so Dee viewed by the finish and Eve did not: billed 3*100 + 1*10.
// beta has player 20 Zed and nothing else. The id generator's next id is 100; every initial visit is before 2000.
const (
	fixtureNextID = 100
	fixtureEnd    = 2000
)

var fixtureInitial = Initial{Tenants: 2, End: fixtureEnd, NextID: fixtureNextID}

type testEnv struct {
	t       *testing.T
	app     *App
	srv     *httptest.Server
	key     *rsa.PrivateKey // the problem's private key
	initial string
}

func TestMain(m *testing.M) {
	log.SetOutput(io.Discard) // the app's progress messages
	os.Exit(m.Run())
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	dir := t.TempDir()
	initial := filepath.Join(dir, "initial")
	if err := os.MkdirAll(filepath.Join(initial, "tenants"), 0o755); err != nil {
		t.Fatal(err)
	}
	execFile(t, filepath.Join(initial, "admin.db"), "../sql/admin.sqlite.sql",
		"INSERT INTO tenant VALUES (1, 'alpha', 'Alpha League', 100, 100), (2, 'beta', 'Beta <&> Cup', 100, 100)",
		"INSERT INTO sqlite_sequence (name, seq) VALUES ('id_generator', 99)",
		"INSERT INTO visit_history VALUES (1, 1, 11, 1200), (4, 1, 11, 1600), (4, 1, 11, 1400), (5, 1, 11, 1600), (2, 1, 10, 1300)")
	execFile(t, filepath.Join(initial, "tenants", "1.db"), "../sql/tenant.sql",
		`INSERT INTO player VALUES (1, 'Ann', 0, 100, 100), (2, 'Ben', 0, 100, 100), (3, 'Cid', 1, 100, 100),
			(4, 'Dee', 0, 100, 100), (5, 'Eve', 0, 100, 100)`,
		"INSERT INTO competition VALUES (10, 'Open Cup', NULL, 0, 200, 200), (11, 'Old Cup', 1500, 2, 300, 1500)",
		`INSERT INTO player_score (competition_id, upload, row_num, player_id, score, created_at) VALUES
			(11, 1, 1, 4, 900, 400), (11, 1, 2, 5, 800, 400),
			(11, 2, 1, 1, 300, 500), (11, 2, 2, 2, 500, 500), (11, 2, 3, 3, 300, 500), (11, 2, 4, 2, 200, 500)`)
	execFile(t, filepath.Join(initial, "tenants", "2.db"), "../sql/tenant.sql",
		"INSERT INTO player VALUES (20, 'Zed', 0, 100, 100)")

	app, err := newApp("..", "sqlite:"+filepath.Join(dir, "work", "admin.db"), initial, "", "../../keys/public.pem")
	if err != nil {
		t.Fatal(err)
	}
	app.initial = fixtureInitial
	srv := httptest.NewServer(app.routes())
	t.Cleanup(func() { srv.Close(); app.db.Close() })
	pem, err := os.ReadFile("../../keys/private.pem")
	if err != nil {
		t.Fatal(err)
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(pem)
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{t: t, app: app, srv: srv, key: key, initial: initial}
}

// execFile makes a SQLite file with a schema file and statements.
func execFile(t *testing.T, path, schemaFile string, statements ...string) {
	t.Helper()
	schema, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlx.Open("sqlite3", "file:"+path)
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

// token signs claims with the problem's key; exp is one hour ahead unless given.
func (e *testEnv) token(aud, role, sub string) string {
	return e.sign(jwt.MapClaims{"sub": sub, "aud": aud, "role": role, "exp": time.Now().Add(time.Hour).Unix()})
}

func (e *testEnv) sign(claims jwt.MapClaims) string {
	e.t.Helper()
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

// json decodes the answer's body.
func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(a.body), &v); err != nil {
		t.Fatalf("status %d, body %q: %v", a.status, a.body, err)
	}
	return v
}

// do sends a request to host (a tenant's name or admin) with the token as the cookie (none if empty).
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
	a := answer{res.StatusCode, res.Header, string(b)}
	if strings.HasPrefix(path, "/api/") || path == "/initialize" {
		if cc := res.Header.Get("Cache-Control"); cc != "private" {
			e.t.Errorf("%s %s %s: Cache-Control %q", method, host, path, cc)
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/json" {
			e.t.Errorf("%s %s %s: Content-Type %q", method, host, path, ct)
		}
	}
	return a
}

func (e *testEnv) get(host, path, token string) answer {
	return e.do("GET", host, path, token, nil, "")
}

func (e *testEnv) postJSON(host, path, token, body string) answer {
	return e.do("POST", host, path, token, strings.NewReader(body), "application/json")
}

// upload posts a CSV file as the multipart part "scores".
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

func (e *testEnv) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.app.db.Get(&n, query, args...); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func TestTokens(t *testing.T) {
	e := newTestEnv(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	hour := time.Now().Add(time.Hour).Unix()
	foreign, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "1", "aud": "alpha", "role": "player", "exp": hour}).SignedString(other)
	// The classic confusion: HS256 keyed with the public key's bytes.
	pub, _ := os.ReadFile("../../keys/public.pem")
	hmac, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "1", "aud": "alpha", "role": "player", "exp": hour}).SignedString(pub)
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "1", "aud": "alpha", "role": "player", "exp": hour}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	valid := e.token("alpha", "player", "1")
	tampered := strings.Replace(valid, strings.Split(valid, ".")[1],
		strings.Split(e.token("alpha", "player", "2"), ".")[1], 1)

	for _, c := range []struct {
		name, host, path, token string
		status                  int
	}{
		{"valid", "alpha", "/api/player/competitions", valid, 200},
		{"no token", "alpha", "/api/player/competitions", "", 401},
		{"garbage", "alpha", "/api/player/competitions", "not.a.token", 401},
		{"another key", "alpha", "/api/player/competitions", foreign, 401},
		{"claims swapped under a signature", "alpha", "/api/player/competitions", tampered, 401},
		{"HS256 with the public key", "alpha", "/api/player/competitions", hmac, 401},
		{"alg none", "alpha", "/api/player/competitions", none, 401},
		{"expired", "alpha", "/api/player/competitions", e.sign(jwt.MapClaims{"sub": "1", "aud": "alpha", "role": "player", "exp": time.Now().Add(-time.Minute).Unix()}), 401},
		{"no exp", "alpha", "/api/player/competitions", e.sign(jwt.MapClaims{"sub": "1", "aud": "alpha", "role": "player"}), 401},
		{"no sub", "alpha", "/api/organizer/players", e.sign(jwt.MapClaims{"aud": "alpha", "role": "organizer", "exp": hour}), 401},
		{"unknown role", "alpha", "/api/organizer/players", e.token("alpha", "owner", "me"), 401},
		{"another tenant's token", "alpha", "/api/player/competitions", e.token("beta", "player", "20"), 401},
		{"another tenant's organizer", "beta", "/api/organizer/players", e.token("alpha", "organizer", "me"), 401},
		{"the admin's token on a tenant", "alpha", "/api/organizer/players", e.token("admin", "admin", "root"), 401},
		{"a player of another tenant", "alpha", "/api/player/competitions", e.token("alpha", "player", "20"), 401},
		{"a player that does not exist", "alpha", "/api/player/competitions", e.token("alpha", "player", "999"), 401},
		{"a player id that is no id", "alpha", "/api/player/competitions", e.token("alpha", "player", "01"), 401},
		{"a player as organizer", "alpha", "/api/organizer/players", e.token("alpha", "player", "1"), 403},
		{"an organizer as player", "alpha", "/api/player/competitions", e.token("alpha", "organizer", "me"), 403},
		{"an organizer as admin", "admin", "/api/admin/billing", e.token("admin", "organizer", "me"), 403},
		{"role admin on a tenant", "alpha", "/api/organizer/players", e.token("alpha", "admin", "root"), 403},
		{"a player on the admin host", "admin", "/api/admin/billing", e.token("admin", "player", "1"), 401},
		{"the admin", "admin", "/api/admin/billing", e.token("admin", "admin", "root"), 200},
		{"an organizer", "alpha", "/api/organizer/players", e.token("alpha", "organizer", "me"), 200},
		{"no such tenant", "gamma", "/api/organizer/players", e.token("gamma", "organizer", "me"), 404},
	} {
		t.Run(c.name, func(t *testing.T) {
			if a := e.get(c.host, c.path, c.token); a.status != c.status {
				t.Errorf("status %d (%s), want %d", a.status, a.body, c.status)
			}
		})
	}
}

func TestDisqualifiedPlayerIsRefusedEverywhere(t *testing.T) {
	e := newTestEnv(t)
	cid := e.token("alpha", "player", "3")
	for _, path := range []string{"/api/me", "/api/player/competitions", "/api/player/players/1", "/api/player/players/3",
		"/api/player/competitions/11/ranking", "/api/player/competitions/999/ranking", "/api/player/players/999"} {
		e.expect(e.get("alpha", path, cid), 403, `{"error":"disqualified"}`)
	}
	if n := e.count("SELECT COUNT(*) FROM visit_history WHERE player_id = 3"); n != 0 {
		t.Errorf("a disqualified player's ranking read was recorded: %d visits", n)
	}
	// Disqualifying Ben: his next request is refused, and he shows as disqualified.
	ben := e.token("alpha", "player", "2")
	e.expect(e.get("alpha", "/api/player/competitions", ben), 200, "")
	org := e.token("alpha", "organizer", "me")
	e.expect(e.postJSON("alpha", "/api/organizer/players/2/disqualify", org, ""), 200,
		`{"player":{"id":2,"display_name":"Ben","is_disqualified":true}}`)
	e.expect(e.postJSON("alpha", "/api/organizer/players/2/disqualify", org, ""), 200, "")
	e.expect(e.get("alpha", "/api/player/competitions", ben), 403, "")
	e.expect(e.get("alpha", "/api/player/players/2", e.token("alpha", "player", "1")), 200,
		`{"player":{"id":2,"display_name":"Ben","is_disqualified":true},"scores":[{"competition_id":11,"title":"Old Cup","score":200}]}`)
	e.expect(e.postJSON("alpha", "/api/organizer/players/20/disqualify", org, ""), 404, "")
	e.expect(e.postJSON("alpha", "/api/organizer/players/x/disqualify", org, ""), 404, "")
}

func TestAnswers(t *testing.T) {
	e := newTestEnv(t)
	org, ann := e.token("alpha", "organizer", "boss"), e.token("alpha", "player", "1")
	for _, c := range []struct {
		host, path, token, want string
	}{
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
		{"alpha", "/api/player/competitions/10/ranking", ann, `{"competition":{"id":10,"title":"Open Cup","is_finished":false},"ranks":[]}`},
		{"alpha", "/api/player/players/4", ann, `{"player":{"id":4,"display_name":"Dee","is_disqualified":false},"scores":[]}`},
		{"alpha", "/api/organizer/billing", org, `{"billing":{"total":310,"competitions":[` +
			`{"competition_id":11,"title":"Old Cup","is_finished":true,"scored":3,"viewed":1,"billing":310},` +
			`{"competition_id":10,"title":"Open Cup","is_finished":false,"scored":0,"viewed":0,"billing":0}]}}`},
		{"admin", "/api/admin/billing", e.token("admin", "admin", "root"), `{"tenants":[{"id":2,"name":"beta","display_name":"Beta <&> Cup","billing":0},` +
			`{"id":1,"name":"alpha","display_name":"Alpha League","billing":310}]}`},
		{"admin", "/api/admin/billing?before=2", e.token("admin", "admin", "root"), `{"tenants":[{"id":1,"name":"alpha","display_name":"Alpha League","billing":310}]}`},
		{"admin", "/api/admin/billing?before=1", e.token("admin", "admin", "root"), `{"tenants":[]}`},
		{"alpha", "/api/me", ann, `{"role":"player","subject":"1","tenant":{"id":1,"name":"alpha","display_name":"Alpha League"},"player":{"id":1,"display_name":"Ann","is_disqualified":false}}`},
		{"alpha", "/api/me", org, `{"role":"organizer","subject":"boss","tenant":{"id":1,"name":"alpha","display_name":"Alpha League"},"player":null}`},
		{"admin", "/api/me", e.token("admin", "admin", "root"), `{"role":"admin","subject":"root","tenant":null,"player":null}`},
	} {
		e.expect(e.get(c.host, c.path, c.token), 200, c.want)
	}
	for _, c := range []struct {
		host, path, token string
		status            int
	}{
		{"alpha", "/api/player/competitions/11/ranking?rank_after=-1", ann, 400},
		{"alpha", "/api/player/competitions/11/ranking?rank_after=x", ann, 400},
		{"alpha", "/api/player/competitions/999/ranking", ann, 404},
		{"alpha", "/api/player/competitions/0/ranking", ann, 404},
		{"alpha", "/api/player/players/20", ann, 404},
		{"admin", "/api/admin/billing?before=x", e.token("admin", "admin", "root"), 400},
		{"alpha", "/api/nothing", ann, 404},
		{"alpha", "/api/player/players", ann, 404},
	} {
		if a := e.get(c.host, c.path, c.token); a.status != c.status {
			t.Errorf("GET %s: %d %s, want %d", c.path, a.status, a.body, c.status)
		}
	}
	e.expect(e.do("DELETE", "alpha", "/api/organizer/players", org, nil, ""), 404, `{"error":"not found"}`)
}

func TestRankingReadsAreVisits(t *testing.T) {
	e := newTestEnv(t)
	before := e.count("SELECT COUNT(*) FROM visit_history")
	ann := e.token("alpha", "player", "1")
	start := time.Now().Unix()
	e.get("alpha", "/api/player/competitions/10/ranking", ann)
	e.get("alpha", "/api/player/competitions/11/ranking?rank_after=1", ann)
	e.get("alpha", "/api/player/competitions/10/ranking", ann)
	e.get("alpha", "/api/player/competitions/999/ranking", ann)             // 404: no visit
	e.get("alpha", "/api/player/competitions/10/ranking?rank_after=x", ann) // 400: no visit
	if n := e.count("SELECT COUNT(*) FROM visit_history WHERE player_id = 1 AND tenant_id = 1 AND created_at >= ?", start); n != 3 ||
		e.count("SELECT COUNT(*) FROM visit_history") != before+3 {
		t.Errorf("%d visits recorded for three reads", n)
	}
}

func TestScoreUploads(t *testing.T) {
	e := newTestEnv(t)
	org, ann := e.token("alpha", "organizer", "boss"), e.token("alpha", "player", "1")
	ranking := func() string {
		t.Helper()
		a := e.get("alpha", "/api/player/competitions/10/ranking", ann)
		var v struct {
			Ranks []RankJSON `json:"ranks"`
		}
		if err := json.Unmarshal([]byte(a.body), &v); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, r := range v.Ranks {
			parts = append(parts, fmt.Sprintf("%d:%d=%d", r.Rank, r.PlayerID, r.Score))
		}
		return strings.Join(parts, " ")
	}
	// Ties go by the row the score comes from; a player's last row wins, wherever it is.
	e.expect(e.upload("alpha", 10, org, "player_id,score\n1,50\n2,70\n3,60\n1,70\n4,70\n2,10\r\n5,0"), 200, `{"rows":7}`)
	if got := ranking(); got != "1:1=70 2:4=70 3:3=60 4:2=10 5:5=0" {
		t.Errorf("ranking %q", got)
	}
	// Only the last upload counts.
	e.expect(e.upload("alpha", 10, org, "player_id,score\n5,900\n"), 200, `{"rows":1}`)
	if got := ranking(); got != "1:5=900" {
		t.Errorf("after a second upload: %q", got)
	}
	// Bad files change nothing.
	for _, csv := range []string{
		"", "\n", "player_id,score", "player_id, score\n1,1", "score,player_id\n1,1", "player_id,score\n1,1,1",
		"player_id,score\n1,-1", "player_id,score\n1,01", "player_id,score\n01,1", "player_id,score\n1, 1",
		"player_id,score\n1,1000000000", "player_id,score\n20,1", "player_id,score\n999,1", "player_id,score\n\n1,1",
		"player_id,score\n1,1\n\n", "player_id,score\n\"1\",1", "player_id,score\n1,1.5", "player_id,score\n1,\xff",
	} {
		if csv == "player_id,score" {
			continue // valid: the header alone, checked below
		}
		if a := e.upload("alpha", 10, org, csv); a.status != 400 {
			t.Errorf("CSV %q: %d %s, want 400", csv, a.status, a.body)
		}
	}
	if got := ranking(); got != "1:5=900" {
		t.Errorf("after bad uploads: %q", got)
	}
	e.expect(e.do("POST", "alpha", "/api/organizer/competitions/10/scores", org, strings.NewReader("player_id,score\n1,1"), "text/csv"), 400, "")
	e.expect(e.upload("alpha", 10, org, "player_id,score\n1,999999999\n"), 200, `{"rows":1}`)
	// The header alone is a valid upload that empties the ranking.
	e.expect(e.upload("alpha", 10, org, "player_id,score"), 200, `{"rows":0}`)
	if got := ranking(); got != "" {
		t.Errorf("after an empty upload: %q", got)
	}
	e.expect(e.upload("alpha", 11, org, "player_id,score\n1,1\n"), 409, `{"error":"competition finished"}`)
	e.expect(e.upload("alpha", 11, org, "garbage"), 409, "")
	e.expect(e.upload("alpha", 999, org, "player_id,score\n1,1\n"), 404, "")
	e.expect(e.upload("beta", 10, e.token("beta", "organizer", "b"), "player_id,score\n20,1\n"), 404, "")
}

func TestFinishAndBilling(t *testing.T) {
	e := newTestEnv(t)
	org, dee := e.token("alpha", "organizer", "boss"), e.token("alpha", "player", "4")
	e.expect(e.upload("alpha", 10, org, "player_id,score\n1,5\n2,6\n1,7\n"), 200, `{"rows":3}`)
	// Dee reads the ranking before the finish: she counts as a viewer.
	e.expect(e.get("alpha", "/api/player/competitions/10/ranking", dee), 200, "")
	e.expect(e.postJSON("alpha", "/api/organizer/competitions/10/finish", org, ""), 200, `{"competition":{"id":10,"title":"Open Cup","is_finished":true}}`)
	e.expect(e.postJSON("alpha", "/api/organizer/competitions/10/finish", org, ""), 409, "")
	e.expect(e.postJSON("alpha", "/api/organizer/competitions/999/finish", org, ""), 404, "")
	// Eve's visit a second after the finish does not count (written directly: the app's clock moves by seconds).
	var finished int64
	tdb, _ := e.app.tenantDB(1)
	tdb.Get(&finished, "SELECT finished_at FROM competition WHERE id = 10")
	tdb.Close()
	e.app.db.MustExec("INSERT INTO visit_history VALUES (5, 1, 10, ?)", finished+1)
	want := `{"billing":{"total":520,"competitions":[` +
		`{"competition_id":11,"title":"Old Cup","is_finished":true,"scored":3,"viewed":1,"billing":310},` +
		`{"competition_id":10,"title":"Open Cup","is_finished":true,"scored":2,"viewed":1,"billing":210}]}}`
	e.expect(e.get("alpha", "/api/organizer/billing", org), 200, want)
	e.expect(e.get("admin", "/api/admin/billing?before=2", e.token("admin", "admin", "root")), 200,
		`{"tenants":[{"id":1,"name":"alpha","display_name":"Alpha League","billing":520}]}`)
	// A visit at the second of the finish counts.
	e.app.db.MustExec("INSERT INTO visit_history VALUES (5, 1, 10, ?)", finished)
	if a := e.get("alpha", "/api/organizer/billing", org); !strings.Contains(a.body, `"total":530`) {
		t.Errorf("a visit at the finish's second did not count: %s", a.body)
	}
}

func TestOrganizerWrites(t *testing.T) {
	e := newTestEnv(t)
	org := e.token("alpha", "organizer", "boss")
	e.expect(e.postJSON("alpha", "/api/organizer/players", org, `{"display_names":["Fay","Gus \"G\" <x>"]}`), 200,
		`{"players":[{"id":100,"display_name":"Fay","is_disqualified":false},{"id":101,"display_name":"Gus \"G\" <x>","is_disqualified":false}]}`)
	e.expect(e.postJSON("beta", "/api/organizer/competitions", e.token("beta", "organizer", "b"), `{"title":"Beta Open"}`), 200,
		`{"competition":{"id":102,"title":"Beta Open","is_finished":false}}`)
	e.expect(e.postJSON("alpha", "/api/organizer/players", org, `{"display_names":["日本語の名前"]}`), 200,
		`{"players":[{"id":103,"display_name":"日本語の名前","is_disqualified":false}]}`)
	e.expect(e.get("alpha", "/api/player/players/101", e.token("alpha", "player", "101")), 200,
		`{"player":{"id":101,"display_name":"Gus \"G\" <x>","is_disqualified":false},"scores":[]}`)
	long := strings.Repeat("é", maxName+1)
	for _, body := range []string{``, `{`, `[]`, `{"display_names":[]}`, `{"display_names":"x"}`, `{"display_names":[""]}`,
		`{"display_names":["a\tb"]}`, `{"display_names":["` + long + `"]}`, `{"display_names":[1]}`, `{"names":["x"]}`,
		`{"display_names":["ok","` + "\x7f" + `"]}`, "{\"display_names\":[\"\xff\"]}",
		`{"display_names":[` + strings.TrimSuffix(strings.Repeat(`"x",`, maxNewPlayers+1), ",") + `]}`} {
		if a := e.postJSON("alpha", "/api/organizer/players", org, body); a.status != 400 {
			t.Errorf("players %q: %d, want 400", body, a.status)
		}
	}
	for _, body := range []string{``, `{}`, `{"title":""}`, `{"title":null}`, `{"title":"` + strings.Repeat("x", maxTitle+1) + `"}`} {
		if a := e.postJSON("alpha", "/api/organizer/competitions", org, body); a.status != 400 {
			t.Errorf("competition %q: %d, want 400", body, a.status)
		}
	}
	if n := e.count("SELECT seq FROM sqlite_sequence WHERE name = 'id_generator'"); n != 103 {
		t.Errorf("bad requests used ids: the generator is at %d", n)
	}
}

func TestAdminTenants(t *testing.T) {
	e := newTestEnv(t)
	admin := e.token("admin", "admin", "root")
	e.expect(e.postJSON("admin", "/api/admin/tenants", admin, `{"name":"gamma-3","display_name":"Gamma"}`), 200,
		`{"tenant":{"id":3,"name":"gamma-3","display_name":"Gamma","billing":0}}`)
	gamma := e.token("gamma-3", "organizer", "g")
	e.expect(e.get("gamma-3", "/api/organizer/players", gamma), 200, `{"players":[]}`)
	e.expect(e.postJSON("gamma-3", "/api/organizer/players", gamma, `{"display_names":["Hal"]}`), 200, "")
	e.expect(e.postJSON("admin", "/api/admin/tenants", admin, `{"name":"gamma-3","display_name":"Again"}`), 409, "")
	for _, name := range []string{"admin", "Gamma", "a", "-ab", "ab-", "a_b", "1ab", strings.Repeat("a", 64), ""} {
		if a := e.postJSON("admin", "/api/admin/tenants", admin, `{"name":"`+name+`","display_name":"X"}`); a.status != 400 {
			t.Errorf("name %q: %d, want 400", name, a.status)
		}
	}
	e.expect(e.postJSON("admin", "/api/admin/tenants", admin, `{"name":"delta"}`), 400, "")
	e.expect(e.postJSON("alpha", "/api/admin/tenants", e.token("alpha", "organizer", "o"), `{"name":"delta","display_name":"D"}`), 403, "")
	// Paging: the highest ids first, ten at a time.
	for i := 4; i <= 13; i++ {
		e.expect(e.postJSON("admin", "/api/admin/tenants", admin, fmt.Sprintf(`{"name":"t%d","display_name":"T"}`, i)), 200, "")
	}
	ids := func(path string) []int {
		var v struct {
			Tenants []TenantBillingJSON `json:"tenants"`
		}
		json.Unmarshal([]byte(e.get("admin", path, admin).body), &v)
		var out []int
		for _, t := range v.Tenants {
			out = append(out, int(t.ID))
		}
		return out
	}
	if got := fmt.Sprint(ids("/api/admin/billing"), ids("/api/admin/billing?before=4")); got != "[13 12 11 10 9 8 7 6 5 4] [3 2 1]" {
		t.Errorf("pages %s", got)
	}
}

func TestInitialize(t *testing.T) {
	e := newTestEnv(t)
	admin, org := e.token("admin", "admin", "root"), e.token("alpha", "organizer", "boss")
	visits := e.count("SELECT COUNT(*) FROM visit_history")
	e.expect(e.postJSON("admin", "/api/admin/tenants", admin, `{"name":"gamma","display_name":"Gamma"}`), 200, "")
	e.expect(e.postJSON("alpha", "/api/organizer/players", org, `{"display_names":["Fay"]}`), 200, "")
	e.expect(e.upload("alpha", 10, org, "player_id,score\n1,5\n"), 200, "")
	e.expect(e.postJSON("alpha", "/api/organizer/competitions/10/finish", org, ""), 200, "")
	e.get("alpha", "/api/player/competitions/11/ranking", e.token("alpha", "player", "1"))

	e.expect(e.do("POST", "anything", "/initialize", "", nil, ""), 200, `{"lang":"go"}`)
	e.expect(e.get("gamma", "/api/organizer/players", e.token("gamma", "organizer", "g")), 404, "")
	if _, err := os.Stat(e.app.tenantPath(3)); err == nil {
		t.Error("the added tenant's file is still there")
	}
	if n := e.count("SELECT COUNT(*) FROM visit_history"); n != visits {
		t.Errorf("%d visits after /initialize, want %d", n, visits)
	}
	e.expect(e.get("alpha", "/api/organizer/competitions", org), 200,
		`{"competitions":[{"id":11,"title":"Old Cup","is_finished":true},{"id":10,"title":"Open Cup","is_finished":false}]}`)
	e.expect(e.get("alpha", "/api/player/competitions/10/ranking", e.token("alpha", "player", "1")), 200,
		`{"competition":{"id":10,"title":"Open Cup","is_finished":false},"ranks":[]}`)
	// Ids start again where the initial data left them, tenants too.
	e.expect(e.postJSON("alpha", "/api/organizer/players", org, `{"display_names":["Fay"]}`), 200,
		`{"players":[{"id":100,"display_name":"Fay","is_disqualified":false}]}`)
	e.expect(e.postJSON("admin", "/api/admin/tenants", admin, `{"name":"gamma","display_name":"Gamma"}`), 200,
		`{"tenant":{"id":3,"name":"gamma","display_name":"Gamma","billing":0}}`)
}

// TestWritesWaitForTheTenantLock holds a tenant's lock: a write to that tenant and a read of its scores (a
// ranking) wait for it; a read without scores (the competitions) and a write to another tenant do not.
func TestWritesWaitForTheTenantLock(t *testing.T) {
	e := newTestEnv(t)
	unlock, err := e.app.lockTenant(1)
	if err != nil {
		t.Fatal(err)
	}
	write, ranking := make(chan answer, 1), make(chan answer, 1)
	go func() {
		write <- e.postJSON("alpha", "/api/organizer/competitions", e.token("alpha", "organizer", "o"), `{"title":"Locked"}`)
	}()
	go func() {
		ranking <- e.get("alpha", "/api/player/competitions/11/ranking", e.token("alpha", "player", "1"))
	}()
	e.expect(e.get("alpha", "/api/player/competitions", e.token("alpha", "player", "1")), 200, "")
	e.expect(e.postJSON("beta", "/api/organizer/competitions", e.token("beta", "organizer", "b"), `{"title":"Free"}`), 200, "")
	select {
	case a := <-write:
		t.Fatalf("a write went through a held lock: %d %s", a.status, a.body)
	case a := <-ranking:
		t.Fatalf("a ranking was read through a held lock: %d %s", a.status, a.body)
	case <-time.After(300 * time.Millisecond):
	}
	unlock()
	for what, ch := range map[string]chan answer{"write": write, "ranking": ranking} {
		select {
		case a := <-ch:
			e.expect(a, 200, "")
		case <-time.After(10 * time.Second):
			t.Fatalf("the %s did not go on once the lock was released", what)
		}
	}
}

func TestHostLabel(t *testing.T) {
	for host, want := range map[string]string{
		"alpha.t.localhost":      "alpha",
		"alpha.t.localhost:8080": "alpha",
		"ALPHA.t.localhost":      "alpha",
		"admin.t.isucon.example": "admin",
		"localhost:8080":         "localhost",
		"127.0.0.1:8080":         "127",
		"[::1]:8080":             "::1",
	} {
		if got := hostLabel(&http.Request{Host: host}); got != want {
			t.Errorf("hostLabel(%q) = %q, want %q", host, got, want)
		}
	}
}

func TestStatic(t *testing.T) {
	e := newTestEnv(t)
	if a := e.get("alpha", "/", ""); a.status != 200 || !strings.Contains(a.body, "<html") {
		t.Errorf("GET /: %d %.80s", a.status, a.body)
	}
	if a := e.get("alpha", "/static/leagues.js", ""); a.status != 200 {
		t.Errorf("GET /static/leagues.js: %d", a.status)
	}
	for _, p := range []string{"/static/../go/main.go", "/static/", "/static/nothing.js", "/index.html"} {
		if a := e.get("alpha", p, ""); a.status != 404 {
			t.Errorf("GET %s: %d, want 404", p, a.status)
		}
	}
}

// TestStartFromScratch checks the first start: the admin data and the tenants are copied from the initial data,
// and a missing initial directory is explained.
func TestStartFromScratch(t *testing.T) {
	e := newTestEnv(t)
	work := t.TempDir()
	app, err := newApp("..", "sqlite:"+filepath.Join(work, "x.db"), e.initial, "", "../../keys/public.pem")
	if err != nil {
		t.Fatal(err)
	}
	app.db.Close()
	for _, f := range []string{"x.db", "x-tenants/1.db", "x-tenants/2.db"} {
		if _, err := os.Stat(filepath.Join(work, f)); err != nil {
			t.Error(err)
		}
	}
	_, err = newApp("..", "sqlite:"+filepath.Join(work, "y.db"), filepath.Join(work, "missing"), "", "../../keys/public.pem")
	if err == nil || !strings.Contains(err.Error(), "tunecon serve leagues") {
		t.Errorf("a missing initial directory: %v", err)
	}
	if _, err := newApp("..", "postgres://x", e.initial, "", "../../keys/public.pem"); err == nil {
		t.Error("an unknown DSN was accepted")
	}
}
