package store_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// importContest is a contest with brackets, teams of 3, assigned servers
// in 10.1.0.0/16.
func importContest(t *testing.T, s *store.Store) {
	t.Helper()
	err := s.SetContest(context.Background(), portal.Contest{Problem: "example", Settings: portal.Settings{
		Brackets: []string{"students", "general"}, MaxTeamSize: 3, AssignedServers: true,
		TargetNetworks: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}})
	if err != nil {
		t.Fatal(err)
	}
}

// parse reads an import file, which must read well.
func parse(t *testing.T, file string) portal.Import {
	t.Helper()
	imp, err := portal.ParseImport(strings.NewReader(file))
	if err != nil || len(imp.Problems) > 0 {
		t.Fatalf("%v, %v", imp.Problems, err)
	}
	return imp
}

const teamsFile = `team,bracket,members,servers
Fast Cats,students,alice:Alice Liddell <alice@example.org>;bob:bob@example.org,10.1.0.11;app2=10.1.0.12:8080
Slow Dogs,general,carol,10.1.0.21
`

// countAudit counts the audit log's entries of an action.
func countAudit(t *testing.T, s *store.Store, action string) int {
	t.Helper()
	entries, err := s.AuditLog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Action == action {
			n++
		}
	}
	return n
}

// TestImportTeams: an import makes the teams, their members' accounts
// (without a password, each with a sign-in link) and their servers, in one
// audit entry; the same file again changes nothing and leaves no entry; a
// file with a member and a server more adds just those.
func TestImportTeams(t *testing.T) { systems.Run(t, testImportTeams) }

func testImportTeams(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clk.Now)
	if _, err := s.ImportTeams(ctx, root, parse(t, teamsFile), time.Hour); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("an import before the contest is set up: %v", err)
	}
	importContest(t, s)
	r, err := s.ImportTeams(ctx, root, parse(t, teamsFile), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if r.TeamsCreated != 2 || r.TeamsUpdated+r.TeamsUnchanged != 0 || r.AccountsCreated != 3 || r.ServersCreated != 3 ||
		len(r.Links) != 3 {
		t.Fatalf("report %+v", r)
	}
	if l := r.Links[0]; l.Team != "Fast Cats" || l.Login != "alice" || l.Name != "Alice Liddell" || l.Email != "alice@example.org" ||
		len(l.Token) != 64 || !l.ExpiresAt.Equal(clk.Now().Add(time.Hour)) {
		t.Errorf("alice's link %+v", l)
	}
	a, hash, err := s.AccountByLogin(ctx, "alice")
	if err != nil || hash != "" || a.Name != "Alice Liddell" || a.Email != "alice@example.org" || a.Role != portal.RoleContestant {
		t.Errorf("alice %+v with hash %q, %v: want no password", a, hash, err)
	}
	team, err := s.Team(ctx, a.TeamID)
	if err != nil || team.Name != "Fast Cats" || team.Bracket != "students" || team.InviteCode == "" || team.Target != "" {
		t.Errorf("alice's team %+v, %v", team, err)
	}
	servers, err := s.TeamServers(ctx, team.ID)
	if err != nil || len(servers) != 2 || servers[0].URL != "http://10.1.0.11/" || servers[1].URL != "http://10.1.0.12:8080/" ||
		servers[1].Label != "app2" || servers[1].Host != "10.1.0.12" {
		t.Errorf("its servers %+v, %v", servers, err)
	}
	if n := countAudit(t, s, portal.AuditImport); n != 1 {
		t.Errorf("%d import entries, want 1", n)
	}

	again, err := s.ImportTeams(ctx, root, parse(t, teamsFile), time.Hour)
	if err != nil || again.TeamsCreated+again.TeamsUpdated != 0 || again.TeamsUnchanged != 2 || again.AccountsCreated != 0 ||
		again.ServersCreated != 0 || len(again.Links) != 0 {
		t.Errorf("the same file again: %+v, %v; want nothing changed", again, err)
	}
	if got := again.Summary(); !strings.HasPrefix(got, "teams: 0 created, 0 updated, 2 unchanged") {
		t.Errorf("summary %q", got)
	}
	if n := countAudit(t, s, portal.AuditImport); n != 1 {
		t.Errorf("%d import entries after an import that changed nothing, want 1", n)
	}

	more := strings.Replace(teamsFile, "carol,10.1.0.21", "carol;dave,10.1.0.21;10.1.0.22", 1)
	r, err = s.ImportTeams(ctx, root, parse(t, more), time.Hour)
	if err != nil || r.TeamsUpdated != 1 || r.TeamsUnchanged != 1 || r.AccountsCreated != 1 || r.ServersCreated != 1 ||
		len(r.Links) != 1 || r.Links[0].Login != "dave" {
		t.Errorf("a member and a server more: %+v, %v", r, err)
	}
}

// TestImportConflicts: a file that would change the contest's teams in a
// way an import cannot is refused, every problem by line, and nothing of
// it is applied, not even its good rows.
func TestImportConflicts(t *testing.T) { systems.Run(t, testImportConflicts) }

func testImportConflicts(t *testing.T, db storetest.System) {
	ctx := context.Background()
	s := open(t, db.NewDSN(t), nil)
	importContest(t, s)
	if _, err := s.ImportTeams(ctx, root, parse(t, teamsFile), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateAccount(ctx, "erin", "x", portal.RoleContestant); err != nil { // signed up herself
		t.Fatal(err)
	}
	other, err := s.CreateTeam(ctx, "Others", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetTarget(ctx, other.ID, "http://10.1.0.99/", "10.1.0.99"); err != nil {
		t.Fatal(err)
	}
	file := strings.Join([]string{
		"team,bracket,members,servers",
		"Others,students,zed,",                         // 2: Others is in no bracket
		"Slow Dogs,general,carol:Carol,10.1.0.21:8080", // 3: carol's name, the server's port
		"New One,students,bob,10.1.0.11",               // 4: bob and 10.1.0.11 are Fast Cats'
		"New Two,students,erin,10.1.0.99",              // 5: erin has no team; 10.1.0.99 is Others' target
		"Fast Cats,students,frank;gina,",               // 6: 2+2 members, and a team holds 3
		"Good One,students,hank,10.1.0.50",             // 7: fine
	}, "\n")
	// With a line the file cannot have and one the contest refuses, the
	// file is invalid, and the conflicts are reported beside them.
	bad := file + "\nBad,students,Bad Login,10.1.0.60\nFar,students,kim,10.2.0.1" // 8, 9
	_, err = s.ImportTeams(ctx, root, parseLoose(t, bad), time.Hour)
	var ie *portal.ImportError
	if !errors.As(err, &ie) || ie.Code != portal.CodeInvalid {
		t.Fatalf("%v: want an invalid file", err)
	}
	want := map[int]int{2: 1, 3: 2, 4: 2, 5: 2, 6: 1}
	if got := problemLines(ie); !equalCounts(got, map[int]int{2: 1, 3: 2, 4: 2, 5: 2, 6: 1, 8: 1, 9: 1}) {
		t.Errorf("problems by line %v:\n%v", got, ie.Problems)
	}
	// Without them, the file reads well: every conflict, by line.
	_, err = s.ImportTeams(ctx, root, parse(t, file), time.Hour)
	if !errors.As(err, &ie) || ie.Code != portal.CodeConflict || portal.ErrorCode(err) != portal.CodeConflict {
		t.Fatalf("%v: want a conflict", err)
	}
	if got := problemLines(ie); !equalCounts(got, want) {
		t.Errorf("conflicts by line %v, want %v:\n%v", got, want, ie.Problems)
	}
	if _, _, err := s.AccountByLogin(ctx, "hank"); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("hank of a good line was made: %v", err)
	}
	if servers, _ := s.Servers(ctx); len(servers) != 3 {
		t.Errorf("%d servers, want the first import's 3", len(servers))
	}
	if n := countAudit(t, s, portal.AuditImport); n != 1 {
		t.Errorf("%d import entries, want the first import's", n)
	}
}

// parseLoose reads an import file whatever problems it has.
func parseLoose(t *testing.T, file string) portal.Import {
	t.Helper()
	imp, err := portal.ParseImport(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	return imp
}

// problemLines counts an import error's problems by line.
func problemLines(e *portal.ImportError) map[int]int {
	lines := map[int]int{}
	for _, p := range e.Problems {
		lines[p.Line]++
	}
	return lines
}

func equalCounts(a, b map[int]int) bool {
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

// TestImportsAtOnce: the same file imported by two processes at once
// makes each team once; the other import finds them unchanged.
func TestImportsAtOnce(t *testing.T) { systems.Run(t, testImportsAtOnce) }

func testImportsAtOnce(t *testing.T, db storetest.System) {
	ctx := context.Background()
	dsn := db.NewDSN(t)
	importContest(t, open(t, dsn, nil))
	stores := openStores(t, dsn, 2)
	var wg sync.WaitGroup
	reports := make([]portal.ImportReport, 2)
	errs := make([]error, 2)
	for i := range stores {
		wg.Go(func() { reports[i], errs[i] = stores[i].ImportTeams(ctx, root, parse(t, teamsFile), time.Hour) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || reports[0].TeamsCreated+reports[1].TeamsCreated != 2 ||
		reports[0].TeamsUnchanged+reports[1].TeamsUnchanged != 2 {
		t.Errorf("reports %+v, errors %v", reports, errs)
	}
}

// TestServers: a server is one team's, by host, whatever its port or
// spelling; a host another team's target is on is refused too; taking a
// server from its team ends the team's target on it, and frees its host.
func TestServers(t *testing.T) { systems.Run(t, testServers) }

func testServers(t *testing.T, db storetest.System) {
	ctx := context.Background()
	s := open(t, db.NewDSN(t), nil)
	importContest(t, s)
	a, err := s.CreateTeam(ctx, "a", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateTeam(ctx, "b", "")
	if err != nil {
		t.Fatal(err)
	}
	server := func(address string) portal.Server {
		srv, err := portal.ParseServer(address, 0, "", portal.TargetRules{Local: true})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	srv, err := s.AddServer(ctx, root, a.ID, server("10.1.0.11:8080"))
	if err != nil || srv.ID == 0 || srv.TeamID != a.ID {
		t.Fatalf("%+v, %v", srv, err)
	}
	for _, address := range []string{"10.1.0.11", "[::ffff:10.1.0.11]:9000"} {
		// The refusal names the team whose server it is.
		if _, err := s.AddServer(ctx, root, b.ID, server(address)); portal.ErrorCode(err) != portal.CodeConflict ||
			!strings.Contains(err.Error(), `a server of the team "a"`) {
			t.Errorf("team a's host %s for b: %v", address, err)
		}
		if _, err := s.AddServer(ctx, root, a.ID, server(address)); portal.ErrorCode(err) != portal.CodeConflict {
			t.Errorf("the host %s twice for a: %v", address, err)
		}
	}
	if err := s.SetTarget(ctx, b.ID, "http://10.1.0.30/", "10.1.0.30"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddServer(ctx, root, a.ID, server("10.1.0.30")); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("team b's target host for a: %v", err)
	}
	if _, err := s.AddServer(ctx, root, 999, server("10.1.0.31")); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("a server for no team: %v", err)
	}
	if n := countAudit(t, s, portal.AuditServerAdd); n != 1 {
		t.Errorf("%d entries of servers added, want 1", n)
	}

	if err := s.PickServer(ctx, b.ID, srv.ID, srv.Host); portal.ErrorCode(err) != portal.CodeDenied {
		t.Errorf("team a's server picked by b: %v", err)
	}
	if err := s.PickServer(ctx, a.ID, srv.ID, srv.Host); err != nil {
		t.Fatal(err)
	}
	if team, err := s.Team(ctx, a.ID); err != nil || team.Target != srv.URL {
		t.Errorf("team a's target after it picked its server: %q, %v", team.Target, err)
	}
	if err := s.RemoveServer(ctx, root, srv.ID); err != nil {
		t.Fatal(err)
	}
	if team, err := s.Team(ctx, a.ID); err != nil || team.Target != "" {
		t.Errorf("team a's target after its server went: %q, %v", team.Target, err)
	}
	// A pick that comes after the removal, from a page shown before it.
	if err := s.PickServer(ctx, a.ID, srv.ID, srv.Host); portal.ErrorCode(err) != portal.CodeDenied {
		t.Errorf("a removed server picked: %v", err)
	}
	if _, err := s.AddServer(ctx, root, b.ID, server("10.1.0.11")); err != nil {
		t.Errorf("the freed host for b: %v", err)
	}
	if err := s.RemoveServer(ctx, root, srv.ID); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("a server removed twice: %v", err)
	}
	if n := countAudit(t, s, portal.AuditServerRemove); n != 1 {
		t.Errorf("%d entries of servers removed, want 1", n)
	}
}

// TestSignInLinks: a link works once, until it expires; using it sets the
// password and ends the account's sessions. A new link
// ends the ones not used yet; admins get none.
func TestSignInLinks(t *testing.T) { systems.Run(t, testSignInLinks) }

func testSignInLinks(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clk := &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clk.Now)
	importContest(t, s)
	r, err := s.ImportTeams(ctx, root, parse(t, teamsFile), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	alice, bob, carol := r.Links[0], r.Links[1], r.Links[2]
	hash := portal.TokenHash
	if a, err := s.SignInLinkAccount(ctx, hash(alice.Token)); err != nil || a.Login != "alice" {
		t.Errorf("alice's link: %+v, %v", a, err)
	}
	a, err := s.RedeemSignInLink(ctx, hash(alice.Token), "alice-hash")
	if err != nil || a.Login != "alice" {
		t.Fatalf("%+v, %v", a, err)
	}
	if _, h, err := s.AccountByLogin(ctx, "alice"); err != nil || h != "alice-hash" {
		t.Errorf("alice's password hash %q, %v", h, err)
	}
	for what, f := range map[string]func() error{
		"read":     func() error { _, err := s.SignInLinkAccount(ctx, hash(alice.Token)); return err },
		"used":     func() error { _, err := s.RedeemSignInLink(ctx, hash(alice.Token), "other"); return err },
		"made up":  func() error { _, err := s.RedeemSignInLink(ctx, hash("made-up"), "other"); return err },
		"own hash": func() error { _, err := s.RedeemSignInLink(ctx, alice.Token, "other"); return err },
	} {
		if err := f(); portal.ErrorCode(err) != portal.CodeNotFound {
			t.Errorf("alice's link %s again: %v", what, err)
		}
	}
	if _, h, _ := s.AccountByLogin(ctx, "alice"); h != "alice-hash" {
		t.Errorf("a dead link changed alice's password: %q", h)
	}

	// A new link ends bob's first, and his session.
	_, session := portal.NewToken()
	if err := s.CreateSession(ctx, session, mustID(t, s, "bob"), clk.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	bob2, err := s.NewSignInLink(ctx, root, mustID(t, s, "bob"), time.Hour)
	if err != nil || bob2.Login != "bob" || bob2.Team != "Fast Cats" || bob2.Token == bob.Token {
		t.Fatalf("%+v, %v", bob2, err)
	}
	if _, err := s.RedeemSignInLink(ctx, hash(bob.Token), "x"); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("bob's first link after a new one: %v", err)
	}
	if _, err := s.RedeemSignInLink(ctx, hash(bob2.Token), "bob-hash"); err != nil {
		t.Errorf("bob's new link: %v", err)
	}
	if _, err := s.SessionAccount(ctx, session); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("bob's session after his link: %v", err)
	}
	if n := countAudit(t, s, portal.AuditSignInLink); n != 1 {
		t.Errorf("%d entries of links made, want 1", n)
	}

	// Carol's expires.
	if _, err := s.SignInLinkAccount(ctx, hash(carol.Token)); err != nil {
		t.Errorf("carol's link before it expires: %v", err)
	}
	clk.Add(time.Hour)
	if _, err := s.SignInLinkAccount(ctx, hash(carol.Token)); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("an expired link read: %v", err)
	}
	if _, err := s.RedeemSignInLink(ctx, hash(carol.Token), "x"); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("an expired link: %v", err)
	}
	admin, err := s.CreateAccount(ctx, "root", "x", portal.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewSignInLink(ctx, root, admin.ID, time.Hour); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("a link for an admin: %v", err)
	}
}

func mustID(t *testing.T, s *store.Store, login string) int64 {
	t.Helper()
	a, _, err := s.AccountByLogin(context.Background(), login)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}
