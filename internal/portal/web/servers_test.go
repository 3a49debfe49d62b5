package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/web"
	"github.com/tunecon/tunecon/problems/example"
)

// upload posts a file as a multipart form's field "file".
func (st *site) upload(c *http.Client, path, content string) (*http.Response, string) {
	st.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "teams.csv")
	if err != nil {
		st.t.Fatal(err)
	}
	_, _ = io.WriteString(fw, content)
	_ = mw.Close()
	// A large file under the race detector on a busy machine may take
	// longer than the client's usual 10 s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	long := *c
	long.Timeout = 0
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, st.url+path, &body)
	if err != nil {
		st.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := long.Do(req)
	if err != nil {
		st.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// parsed is a page's body as a document.
func parsed(t *testing.T, body string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// assigned switches the site's contest to assigned servers by the admin's
// settings form.
func (st *site) assigned() {
	st.t.Helper()
	if resp := st.post(st.users["admin"], "/admin/contest", url.Values{"problem": {example.Name}, "targets": {"theirs"}}, nil); resp.StatusCode != bad {
		st.t.Errorf("targets neither assigned nor self-registered: %d", resp.StatusCode)
	}
	resp := st.post(st.users["admin"], "/admin/contest", url.Values{"problem": {example.Name}, "targets": {"assigned"}}, nil)
	c, err := st.store.Contest(context.Background())
	if resp.StatusCode != see || err != nil || !c.Settings.AssignedServers {
		st.t.Fatalf("assigned servers: %d, %+v, %v", resp.StatusCode, c.Settings, err)
	}
}

// serverID is the id of the server on host.
func (st *site) serverID(host string) int64 {
	st.t.Helper()
	servers, err := st.store.Servers(context.Background())
	if err != nil {
		st.t.Fatal(err)
	}
	for _, s := range servers {
		if s.Host == host {
			return s.ID
		}
	}
	st.t.Fatalf("no server on %s", host)
	return 0
}

// TestAssignedServers: the admin gives teams servers (a host one team's,
// each checked as a target); a team picks one of its own on its page, and
// nothing else: not a URL, not another team's server, not after the end;
// its benchmark hits the server it picked, and a team whose target is not
// one of its servers cannot enqueue.
func TestAssignedServers(t *testing.T) {
	ctx := context.Background()
	st := newSite(t)
	st.assigned()
	admin, a, b := st.users["admin"], st.users["a"], st.users["b"]
	teamA := strconv.FormatInt(st.jobA.TeamID, 10)
	teamB := strconv.FormatInt(st.teamB.ID, 10)
	for _, c := range []struct {
		form url.Values
		want int
	}{
		{url.Values{"team": {teamA}, "address": {"10.9.8.20"}, "port": {"8080"}, "label": {"app1"}}, see},
		{url.Values{"team": {teamB}, "address": {"10.9.8.21"}}, see},
		{url.Values{"team": {teamB}, "address": {"10.9.8.20"}, "port": {"81"}}, conflict}, // team A's host
		{url.Values{"team": {teamA}, "address": {"127.0.0.1"}}, bad},
		{url.Values{"team": {teamA}, "address": {"10.9.8.22"}, "port": {"99999"}}, bad},
		{url.Values{"team": {teamA}, "address": {"10.9.8.22"}, "port": {"eighty"}}, bad},
		{url.Values{"team": {"999999"}, "address": {"10.9.8.23"}}, notFound},
		{url.Values{"team": {"x"}, "address": {"10.9.8.23"}}, notFound},
	} {
		if resp := st.post(admin, "/admin/servers", c.form, nil); resp.StatusCode != c.want {
			t.Errorf("adding %v: %d, want %d", c.form, resp.StatusCode, c.want)
		}
	}
	own, theirs := st.serverID("10.9.8.20"), st.serverID("10.9.8.21")

	_, body := st.do(a, http.MethodGet, "/team", nil, nil)
	doc := parsed(t, body)
	if doc.Find(`form[action="/team/target"]`).Length() != 0 || doc.Find(`form[action="/team/server"] option`).Text() != "app1 (http://10.9.8.20:8080/)" ||
		strings.Contains(body, "10.9.8.21") {
		t.Errorf("team A's page: its servers only, and no target form:\n%s", body)
	}
	if resp, body := st.do(a, http.MethodPost, "/team/target", url.Values{"target": {"http://10.9.8.20:8080/"}}, nil); resp.StatusCode != conflict ||
		!strings.Contains(body, "assign each team its servers") {
		t.Errorf("a URL typed with assigned servers: %d", resp.StatusCode)
	}
	for _, id := range []string{strconv.FormatInt(theirs, 10), "nonsense", "999999"} {
		if resp, body := st.do(a, http.MethodPost, "/team/server", url.Values{"server": {id}}, nil); resp.StatusCode != denied ||
			!strings.Contains(body, "not one of your team&#39;s servers") {
			t.Errorf("team A picks server %s: %d", id, resp.StatusCode)
		}
	}
	if team, _ := st.store.Team(ctx, st.jobA.TeamID); team.Target != targetA {
		t.Errorf("refused picks changed team A's target to %q", team.Target)
	}
	// A server outside the target networks set since it was given is
	// refused too.
	resp := st.post(admin, "/admin/contest", url.Values{"problem": {example.Name}, "target_networks": {"10.9.9.0/24"}}, nil)
	if resp.StatusCode != see {
		t.Fatalf("setting the networks: %d", resp.StatusCode)
	}
	if resp := st.post(a, "/team/server", url.Values{"server": {strconv.FormatInt(own, 10)}}, nil); resp.StatusCode != bad {
		t.Errorf("team A picks its server outside the networks: %d, want 400", resp.StatusCode)
	}
	if resp := st.post(admin, "/admin/contest", url.Values{"problem": {example.Name}, "target_networks": {""}}, nil); resp.StatusCode != see {
		t.Fatalf("unsetting the networks: %d", resp.StatusCode)
	}
	if resp := st.post(a, "/team/server", url.Values{"server": {strconv.FormatInt(own, 10)}}, nil); resp.StatusCode != see {
		t.Fatalf("team A picks its server: %d", resp.StatusCode)
	}
	if team, _ := st.store.Team(ctx, st.jobA.TeamID); team.Target != "http://10.9.8.20:8080/" {
		t.Errorf("team A's target %q", team.Target)
	}
	resp = st.post(a, "/jobs", url.Values{}, nil)
	if resp.StatusCode != see {
		t.Fatalf("team A enqueues: %d", resp.StatusCode)
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(resp.Header.Get("Location"), "/jobs/"), 10, 64)
	if j, err := st.store.Job(ctx, id); err != nil || j.Target != "http://10.9.8.20:8080/" {
		t.Errorf("team A's job %+v, %v", j, err)
	}
	// Team B's target is the URL it typed before the contest assigned
	// servers: not one of its servers.
	if resp, body := st.do(b, http.MethodPost, "/jobs", url.Values{}, nil); resp.StatusCode != conflict ||
		!strings.Contains(body, "is not one of your team&#39;s servers") {
		t.Errorf("team B enqueues its old target: %d", resp.StatusCode)
	}

	st.now(portal.EventEnd)
	if resp := st.post(a, "/team/server", url.Values{"server": {strconv.FormatInt(own, 10)}}, nil); resp.StatusCode != conflict {
		t.Errorf("a pick after the end: %d, want 409", resp.StatusCode)
	}
	_, body = st.do(admin, http.MethodGet, "/admin/servers", nil, nil)
	if doc := parsed(t, body); doc.Find("#team-"+teamA+" .server").Length() != 1 || doc.Find("#team-"+teamB+" .server").Length() != 1 {
		t.Errorf("the servers page:\n%s", body)
	}
	_, export := st.do(admin, http.MethodGet, "/admin/export.json", nil, nil)
	var doc2 struct {
		Contest struct {
			AssignedServers bool `json:"assigned_servers"`
		} `json:"contest"`
		Teams []struct {
			ID      int64 `json:"id"`
			Servers []struct {
				URL   string `json:"url"`
				Label string `json:"label"`
			} `json:"servers"`
		} `json:"teams"`
	}
	if err := json.Unmarshal([]byte(export), &doc2); err != nil || !doc2.Contest.AssignedServers || len(doc2.Teams) != 2 ||
		len(doc2.Teams[0].Servers) != 1 || doc2.Teams[0].Servers[0].Label != "app1" {
		t.Errorf("the export: %+v, %v", doc2, err)
	}
	if resp := st.post(admin, "/admin/servers/"+strconv.FormatInt(own, 10)+"/remove", url.Values{}, nil); resp.StatusCode != see {
		t.Errorf("removing team A's server: %d", resp.StatusCode)
	}
	if team, _ := st.store.Team(ctx, st.jobA.TeamID); team.Target != "" {
		t.Errorf("team A's target after its server went: %q", team.Target)
	}
}

const webTeams = `team,members,servers
Fast Cats,alice2:Alice Liddell <alice@example.org>;bob2:bob@example.org,10.9.8.40;app2=10.9.8.41:8080
Slow Dogs,carol2:Carol Ng,10.9.8.50
`

// importLinks reads the links of the page an import shows, by login.
func importLinks(t *testing.T, body string) map[string]string {
	t.Helper()
	links := map[string]string{}
	parsed(t, body).Find("a.signin-link").Each(func(_ int, a *goquery.Selection) {
		links[a.AttrOr("data-login", "")] = a.AttrOr("href", "")
	})
	return links
}

// TestImportOverHTTP: an admin uploads a team file; the page shows what it
// made and each new account's sign-in link once, also as a CSV to
// download; the same file again changes nothing; a file with problems
// lists every one by line and changes nothing. Only admins import.
func TestImportOverHTTP(t *testing.T) {
	st := newSite(t)
	st.assigned()
	admin := st.users["admin"]
	for _, who := range []string{"anon", "a", "b"} {
		if resp, _ := st.upload(st.users[who], "/admin/import", webTeams); resp.StatusCode != denied {
			t.Errorf("an import by %s: %d", who, resp.StatusCode)
		}
	}
	resp, body := st.upload(admin, "/admin/import", webTeams)
	if resp.StatusCode != ok || !strings.Contains(body, "teams: 2 created, 0 updated, 0 unchanged; 3 accounts and 3 servers added") {
		t.Fatalf("the import: %d\n%s", resp.StatusCode, body)
	}
	links := importLinks(t, body)
	if len(links) != 3 || !strings.HasPrefix(links["alice2"], st.url+"/signin/") {
		t.Errorf("links %v", links)
	}
	href := parsed(t, body).Find("#links-csv").AttrOr("href", "")
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(href, "data:text/csv;charset=utf-8;base64,"))
	rows, cerr := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil || cerr != nil || len(rows) != 4 || rows[1][1] != "alice2" || rows[1][4] != links["alice2"] || rows[1][3] != "alice@example.org" {
		t.Errorf("the links' CSV %q: %v, %v", raw, err, cerr)
	}
	if n := len(st.auditActions()); n == 0 || st.auditActions()[n-1] != portal.AuditImport {
		t.Errorf("audit %v", st.auditActions())
	}
	resp, body = st.upload(admin, "/admin/import", webTeams)
	if resp.StatusCode != ok || !strings.Contains(body, "teams: 0 created, 0 updated, 2 unchanged") || len(importLinks(t, body)) != 0 {
		t.Errorf("the same file again: %d\n%s", resp.StatusCode, body)
	}
	teams, _ := st.store.Teams(context.Background())
	for name, c := range map[string]struct {
		file string
		want int
		rows []string
	}{
		"bad lines": {"team,members,servers\nok,dave,10.9.8.60\n,erin,10.9.8.61\nx,Bad Login,\n", bad, []string{"3", "4"}},
		"conflicts": {"team,members,servers\nNew,alice2,10.9.8.70\nMore,frank,10.9.8.40\n", conflict, []string{"2", "3"}},
		"no file":   {"", bad, nil},
		"empty":     {"\n", bad, nil},
	} {
		var resp *http.Response
		var body string
		if c.file == "" {
			resp, body = st.do(admin, http.MethodPost, "/admin/import", url.Values{}, nil)
		} else {
			resp, body = st.upload(admin, "/admin/import", c.file)
		}
		var lines []string
		parsed(t, body).Find("#import-problems tbody tr td:first-child").Each(func(_ int, td *goquery.Selection) {
			lines = append(lines, td.Text())
		})
		if resp.StatusCode != c.want || fmt.Sprint(lines) != fmt.Sprint(c.rows) {
			t.Errorf("%s: %d, lines %v; want %d, %v", name, resp.StatusCode, lines, c.want, c.rows)
		}
	}
	if after, _ := st.store.Teams(context.Background()); len(after) != len(teams) {
		t.Errorf("refused imports made teams: %d, then %d", len(teams), len(after))
	}
}

// TestImportOfAContest: a file of 600 teams of three, larger than any
// other form the portal reads, imports in one go.
func TestImportOfAContest(t *testing.T) {
	st := newSite(t)
	var b strings.Builder
	b.WriteString("team,members,servers\n")
	for i := range 600 {
		fmt.Fprintf(&b, "team %d,m%da:Member A <m%da@example.org>;m%db:Member B;m%dc:Member C,app1=10.%d.%d.1;app2=10.%d.%d.2:8080\n",
			i, i, i, i, i, 20+i/200, i%200, 20+i/200, i%200)
	}
	if b.Len() <= 64<<10 {
		t.Fatalf("the file has %d bytes: no larger than a form", b.Len())
	}
	resp, body := st.upload(st.users["admin"], "/admin/import", b.String())
	if resp.StatusCode != ok || !strings.Contains(body, "teams: 600 created") || len(importLinks(t, body)) != 1800 {
		t.Errorf("600 teams: %d, %d links", resp.StatusCode, len(importLinks(t, body)))
	}
}

// TestSignInLink: a member follows the link, chooses a password (twice
// alike, long enough, or the link stays as it was), and is signed in to
// the team; the link then works no more, and the password does. A new
// link from the admin ends the one before; opening a link changes
// nothing.
func TestSignInLink(t *testing.T) {
	st := newSite(t)
	resp, body := st.upload(st.users["admin"], "/admin/import", webTeams)
	if resp.StatusCode != ok {
		t.Fatalf("the import: %d", resp.StatusCode)
	}
	links := importLinks(t, body)
	path := strings.TrimPrefix(links["alice2"], st.url)
	c := st.client()
	for range 2 {
		if resp, body := st.do(c, http.MethodGet, path, nil, nil); resp.StatusCode != ok || !strings.Contains(body, "Welcome, alice2") {
			t.Fatalf("opening the link: %d", resp.StatusCode)
		}
	}
	for _, form := range []url.Values{
		{"password": {"alice2-password"}, "again": {"alice2-passw0rd"}},
		{"password": {"short"}, "again": {"short"}},
	} {
		if resp := st.post(c, path, form, nil); resp.StatusCode != bad {
			t.Errorf("%v: %d, want 400", form, resp.StatusCode)
		}
	}
	resp = st.post(c, path, url.Values{"password": {"alice2-password"}, "again": {"alice2-password"}}, nil)
	if resp.StatusCode != see || resp.Header.Get("Location") != "/team" {
		t.Fatalf("choosing the password: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, body := st.do(c, http.MethodGet, "/team", nil, nil); !strings.Contains(body, "Team Fast Cats") {
		t.Errorf("alice2's team page:\n%s", body)
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		form := url.Values{"password": {"another-password"}, "again": {"another-password"}}
		if resp, _ := st.do(st.client(), method, path, form, nil); resp.StatusCode != notFound {
			t.Errorf("%s of a used link: %d, want 404", method, resp.StatusCode)
		}
	}
	// Carol follows hers in bob's browser: bob's session ends, and the
	// browser is carol's.
	bobCookie := sessionCookie(t, st, st.users["b"])
	carol := strings.TrimPrefix(links["carol2"], st.url)
	if resp := st.post(st.users["b"], carol, url.Values{"password": {"carol2-password"}, "again": {"carol2-password"}}, nil); resp.StatusCode != see {
		t.Fatalf("carol's link in bob's browser: %d", resp.StatusCode)
	}
	if _, err := st.store.SessionAccount(context.Background(), portal.TokenHash(bobCookie)); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("bob's session after carol signed in in his browser: %v", err)
	}
	if _, body := st.do(st.users["b"], http.MethodGet, "/team", nil, nil); !strings.Contains(body, "Team Slow Dogs") {
		t.Errorf("the browser is not carol's")
	}
	if resp := st.post(st.client(), "/login", url.Values{"login": {"alice2"}, "password": {"alice2-password"}}, nil); resp.StatusCode != see {
		t.Errorf("alice2 signs in with her password: %d", resp.StatusCode)
	}
	if resp := st.post(st.client(), "/login", url.Values{"login": {"bob2"}, "password": {""}}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("bob2, who has no password yet, with none: %d", resp.StatusCode)
	}

	// A new link for bob2 ends his first.
	bob, _, err := st.store.AccountByLogin(context.Background(), "bob2")
	if err != nil {
		t.Fatal(err)
	}
	resp, body = st.do(st.users["admin"], http.MethodPost, fmt.Sprintf("/admin/accounts/%d/signin-link", bob.ID), url.Values{}, nil)
	fresh := importLinks(t, body)["bob2"]
	if resp.StatusCode != ok || fresh == "" || fresh == links["bob2"] {
		t.Fatalf("a new link: %d, %q", resp.StatusCode, fresh)
	}
	if resp, _ := st.do(st.client(), http.MethodGet, strings.TrimPrefix(links["bob2"], st.url), nil, nil); resp.StatusCode != notFound {
		t.Errorf("bob2's first link after a new one: %d", resp.StatusCode)
	}
	if resp, _ := st.do(st.client(), http.MethodGet, strings.TrimPrefix(fresh, st.url), nil, nil); resp.StatusCode != ok {
		t.Errorf("bob2's new link: %d", resp.StatusCode)
	}
	root, _, _ := st.store.AccountByLogin(context.Background(), "root")
	if resp := st.post(st.users["admin"], fmt.Sprintf("/admin/accounts/%d/signin-link", root.ID), url.Values{}, nil); resp.StatusCode != bad {
		t.Errorf("a link for an admin: %d", resp.StatusCode)
	}
}

// sessionCookie is the session token a client holds.
func sessionCookie(t *testing.T, st *site, c *http.Client) string {
	t.Helper()
	u, _ := url.Parse(st.url)
	for _, k := range c.Jar.Cookies(u) {
		if k.Name == web.SessionCookie {
			return k.Value
		}
	}
	t.Fatal("no session cookie")
	return ""
}
