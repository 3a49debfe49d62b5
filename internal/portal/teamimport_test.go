package portal_test

import (
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/tunecon/tunecon/internal/portal"
)

// TestParseServer: a server's address in its forms, written as one base
// URL with its host spelt as TargetHost spells it; what is no address, or
// an address the contest refuses, is refused.
func TestParseServer(t *testing.T) {
	real := portal.TargetRules{Networks: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("fd00::/8")}}
	for _, c := range []struct {
		address string
		port    int
		url     string
		host    string
	}{
		{"10.1.0.11", 0, "http://10.1.0.11/", "10.1.0.11"},
		{" 10.1.0.11:8080 ", 0, "http://10.1.0.11:8080/", "10.1.0.11"},
		{"10.1.0.11", 8080, "http://10.1.0.11:8080/", "10.1.0.11"},
		{"10.1.0.11:8080", 8080, "http://10.1.0.11:8080/", "10.1.0.11"},
		{"HTTPS://10.1.0.11:8443/", 0, "https://10.1.0.11:8443/", "10.1.0.11"},
		{"[fd00::11]:8080", 0, "http://[fd00::11]:8080/", "fd00::11"},
		{"[fd00:0::11]", 0, "http://[fd00::11]/", "fd00::11"},
		{"[::ffff:10.1.0.11]", 0, "http://10.1.0.11/", "10.1.0.11"},
	} {
		s, err := portal.ParseServer(c.address, c.port, "app", real)
		if err != nil || s.URL != c.url || s.Host != c.host || s.Label != "app" {
			t.Errorf("%q port %d: %+v, %v; want %s on %s", c.address, c.port, s, err, c.url, c.host)
		}
	}
	// Names are the contest's too, when local targets are allowed.
	if s, err := portal.ParseServer("App.Team1.Example.", 0, "", portal.TargetRules{Local: true}); err != nil ||
		s.URL != "http://app.team1.example/" || s.Host != "app.team1.example" {
		t.Errorf("a name: %+v, %v", s, err)
	}
	for _, c := range []struct {
		address string
		port    int
		label   string
	}{
		{"", 0, ""}, {"10.1.0.11:8080", 9090, ""}, {"10.1.0.11", 70000, ""}, {"10.1.0.11:0", 0, ""},
		{"http://10.1.0.11/app", 0, ""}, {"http://10.1.0.11/?x=1", 0, ""}, {"http://u:p@10.1.0.11/", 0, ""},
		{"ftp://10.1.0.11/", 0, ""}, {"10.2.0.1", 0, ""}, {"127.0.0.1", 0, ""}, {"169.254.169.254", 0, ""},
		{"100.100.100.200", 0, ""}, {"[fd00:ec2::254]", 0, ""}, {"localhost:8080", 0, ""},
		{"10.1.0.11", 0, "bad\u202elabel"}, {"10.1.0.11", 0, strings.Repeat("x", portal.MaxServerLabel+1)},
	} {
		if s, err := portal.ParseServer(c.address, c.port, c.label, real); portal.ErrorCode(err) != portal.CodeInvalid {
			t.Errorf("%q port %d label %q: %+v, %v; want it refused", c.address, c.port, c.label, s, err)
		}
	}
}

// TestCheckServerTarget: with assigned servers a target is one of the
// team's servers' URLs exactly, or it is refused as a conflict.
func TestCheckServerTarget(t *testing.T) {
	servers := []portal.Server{{URL: "http://10.1.0.11/"}, {URL: "http://10.1.0.12:8080/"}}
	if err := portal.CheckServerTarget("http://10.1.0.12:8080/", servers); err != nil {
		t.Errorf("its own server: %v", err)
	}
	for _, target := range []string{"", "http://10.1.0.13/", "http://10.1.0.12/", "http://10.1.0.11:80/"} {
		err := portal.CheckServerTarget(target, servers)
		var nts *portal.NotTeamServerError
		if !errors.As(err, &nts) || portal.ErrorCode(err) != portal.CodeConflict {
			t.Errorf("%q: %v; want it refused", target, err)
		}
	}
	if err := portal.CheckServerTarget("", nil); err == nil {
		t.Error("no server, no target: let through")
	}
}

// TestParseMember: a login with a display name, an e-mail address or both.
func TestParseMember(t *testing.T) {
	for in, want := range map[string]portal.Member{
		"Alice":                    {Login: "alice"},
		"alice:Alice Liddell":      {Login: "alice", Name: "Alice Liddell"},
		"alice: alice@example.org": {Login: "alice", Email: "alice@example.org"},
		"alice:Alice Liddell <alice@example.org>":    {Login: "alice", Name: "Alice Liddell", Email: "alice@example.org"},
		`alice:"Liddell, Alice" <alice@example.org>`: {Login: "alice", Name: "Liddell, Alice", Email: "alice@example.org"},
	} {
		if got, err := portal.ParseMember(in); err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "a", "al ice:Alice", "alice:not@an@address", "alice:Alice <nowhere>",
		"alice:" + strings.Repeat("x", portal.MaxDisplayName+1), "alice:Al\u200bice",
		"alice:" + strings.Repeat("a", portal.MaxEmail) + "@example.org"} {
		if got, err := portal.ParseMember(in); portal.ErrorCode(err) != portal.CodeInvalid {
			t.Errorf("%q: %+v, %v; want it refused", in, got, err)
		}
	}
}

const goodImport = `# teams of the contest
Team,Bracket,Members,Servers
Fast Cats,students,"alice:Alice Liddell <alice@example.org>;bob:bob@example.org",10.1.0.11;app2=10.1.0.12:8080

"Slow Dogs, Inc.",general,carol,
`

// TestParseImport: a file with comments, a blank line, quoted fields and
// the columns in its own spelling reads as its teams.
func TestParseImport(t *testing.T) {
	imp, err := portal.ParseImport(strings.NewReader(goodImport))
	if err != nil || len(imp.Problems) != 0 {
		t.Fatalf("%v, %v", imp.Problems, err)
	}
	want := []portal.ImportRow{
		{Line: 3, Team: "Fast Cats", Bracket: "students",
			Members: []portal.Member{{Login: "alice", Name: "Alice Liddell", Email: "alice@example.org"}, {Login: "bob", Email: "bob@example.org"}},
			Servers: []portal.Server{{URL: "http://10.1.0.11/", Host: "10.1.0.11"}, {URL: "http://10.1.0.12:8080/", Host: "10.1.0.12", Label: "app2"}}},
		{Line: 5, Team: "Slow Dogs, Inc.", Bracket: "general", Members: []portal.Member{{Login: "carol"}}},
	}
	if !reflect.DeepEqual(imp.Rows, want) {
		t.Errorf("rows\n%+v\nwant\n%+v", imp.Rows, want)
	}
	// A spreadsheet's export may start with a byte order mark.
	if imp, err := portal.ParseImport(strings.NewReader("\ufeffservers,members,team\n10.1.0.9,dave,Order\n")); err != nil ||
		len(imp.Problems) != 0 || len(imp.Rows) != 1 || imp.Rows[0].Team != "Order" || imp.Rows[0].Members[0].Login != "dave" {
		t.Errorf("columns in another order: %+v, %v", imp, err)
	}
	var big strings.Builder
	big.WriteString("team,members,servers\n")
	for i := range portal.MaxImportRows {
		fmt.Fprintf(&big, "t%d,member%d,\n", i, i)
	}
	if imp, err := portal.ParseImport(strings.NewReader(big.String())); err != nil || len(imp.Problems) != 0 || len(imp.Rows) != portal.MaxImportRows {
		t.Errorf("%d teams: %d rows, %v, %v", portal.MaxImportRows, len(imp.Rows), imp.Problems, err)
	}
	big.WriteString("one,more,\n")
	if imp, err := portal.ParseImport(strings.NewReader(big.String())); err != nil || len(imp.Problems) != 1 ||
		imp.Problems[0].Line != portal.MaxImportRows+2 {
		t.Errorf("%d teams and one more: %v, %v", portal.MaxImportRows, imp.Problems, err)
	}
}

// TestParseImportProblems: every bad line is reported with its number,
// all of them, and the rows of good lines are kept apart.
func TestParseImportProblems(t *testing.T) {
	file := strings.Join([]string{
		"team,bracket,members,servers",          // 1
		"ok,,alice,10.1.0.1",                    // 2
		",,bob,10.1.0.2",                        // 3: no name
		"no members,,,10.1.0.3",                 // 4
		"bad login,,Bo b,10.1.0.4",              // 5
		"bad server,,carol,10.1.0.5/app",        // 6
		"ok,,dave,10.1.0.6",                     // 7: team twice
		"twice,,alice;erin,10.1.0.1",            // 8: alice and 10.1.0.1 twice
		"short,,frank",                          // 9: a field short
		"bad mail,,gina:gina@,10.1.0.9;ftp://x", // 10: two problems
		"fine,,hank,",                           // 11
	}, "\n")
	imp, err := portal.ParseImport(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[int]int{}
	for _, p := range imp.Problems {
		lines[p.Line]++
	}
	want := map[int]int{3: 1, 4: 1, 5: 1, 6: 1, 7: 1, 8: 2, 9: 1, 10: 2}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("problems by line %v, want %v:\n%v", lines, want, imp.Problems)
	}
	if len(imp.Rows) != 2 || imp.Rows[0].Line != 2 || imp.Rows[1].Line != 11 {
		t.Errorf("good rows %+v", imp.Rows)
	}
	err = portal.NewImportError(portal.CodeInvalid, imp.Problems)
	var ie *portal.ImportError
	if !errors.As(err, &ie) || portal.ErrorCode(err) != portal.CodeInvalid || !strings.Contains(err.Error(), "line 10: ") ||
		ie.Problems[0].Line != 3 {
		t.Errorf("the import error: %v", err)
	}

	for name, file := range map[string]string{
		"empty":          "",
		"unknown column": "team,members,servers,colour\n",
		"no servers":     "team,members\n",
		"a column twice": "team,members,servers,team\n",
		"not csv":        "team,members,servers\n\"open,alice,\n",
	} {
		imp, err := portal.ParseImport(strings.NewReader(file))
		if err == nil && len(imp.Problems) == 0 {
			t.Errorf("%s: no problem found", name)
		}
	}
}

// TestCheckImport: what the contest's settings refuse, by line.
func TestCheckImport(t *testing.T) {
	rows := []portal.ImportRow{
		{Line: 2, Team: "a", Bracket: "students", Members: []portal.Member{{Login: "a1"}}, Servers: []portal.Server{{URL: "http://10.1.0.1/"}}},
		{Line: 3, Team: "b", Bracket: "pros", Members: []portal.Member{{Login: "b1"}}},
		{Line: 4, Team: "c", Bracket: "students", Members: []portal.Member{{Login: "c1"}, {Login: "c2"}, {Login: "c3"}}},
		{Line: 5, Team: "d", Bracket: "students", Members: []portal.Member{{Login: "d1"}}, Servers: []portal.Server{{URL: "http://10.2.0.1/"}}},
		{Line: 6, Team: "e", Members: []portal.Member{{Login: "e1"}}, Servers: []portal.Server{{URL: "http://127.0.0.1/"}}},
	}
	s := portal.Settings{Brackets: []string{"students"}, MaxTeamSize: 2, TargetNetworks: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}
	lines := map[int]int{}
	for _, p := range portal.CheckImport(rows, s) {
		lines[p.Line]++
	}
	if want := map[int]int{3: 1, 4: 1, 5: 1, 6: 2}; !reflect.DeepEqual(lines, want) {
		t.Errorf("problems by line %v, want %v", lines, want)
	}
	if bad := portal.CheckImport(rows[:1], portal.Settings{}); len(bad) != 1 {
		t.Errorf("a bracket in a contest without: %v", bad)
	}
}
