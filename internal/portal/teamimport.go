package portal

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The team import: one CSV file makes a contest's teams, their members'
// accounts (each with a one-time sign-in link) and the servers each team
// owns. Its first line names the columns, in any order:
//
//		team,bracket,members,servers
//		Fast Cats,students,alice:Alice Liddell;bob:bob@example.org,10.1.0.11;app2=10.1.0.12:8080
//
//	  - team: the team's name;
//	  - bracket: its bracket (the column may be left out in a contest without
//	    brackets);
//	  - members: one or more logins separated by ";", each with an optional
//	    ":" and a display name, an e-mail address, or both as
//	    "Name <mail@example.org>";
//	  - servers: none or more addresses separated by ";" (ParseServer), each
//	    with an optional label and "=" before it.
//
// Lines starting with # are comments. The import is all or nothing, and a
// file imported again changes nothing (see store's ImportTeams).
const (
	// MaxImportRows bounds the teams of one file.
	MaxImportRows = 5000
	// MaxDisplayName bounds a member's display name, in characters.
	MaxDisplayName = 64
	// MaxEmail bounds an e-mail address, in bytes.
	MaxEmail = 254
)

// ImportRow is one team of an import file.
type ImportRow struct {
	// Line is the row's line in the file, for its problems.
	Line    int
	Team    string
	Bracket string
	Members []Member
	Servers []Server
}

// Member is an account an import makes: its login and how the organiser
// knows its owner.
type Member struct {
	Login string
	Name  string
	Email string
}

// Import is a file's rows and the problems found reading it; the rows of
// lines with problems are left out.
type Import struct {
	Rows     []ImportRow
	Problems []LineError
}

// LineError is a problem of one line of an import file.
type LineError struct {
	Line    int
	Message string
}

// ImportError refuses an import: every problem found, by line. Nothing of
// the file was applied.
type ImportError struct {
	// Code is CodeInvalid for a problem of the file itself (its form, or
	// what the contest's settings refuse), CodeConflict when it reads well
	// but would change the contest's teams in a way it cannot.
	Code     Code
	Problems []LineError
}

func (e *ImportError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nothing was imported: the file has %d problem(s)", len(e.Problems))
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "; line %d: %s", p.Line, p.Message)
	}
	return b.String()
}

// ErrorCode is e.Code.
func (e *ImportError) ErrorCode() Code { return e.Code }

// NewImportError sorts problems by line into an error of code, nil when
// there are none.
func NewImportError(code Code, problems []LineError) error {
	if len(problems) == 0 {
		return nil
	}
	slices.SortStableFunc(problems, func(a, b LineError) int { return cmp.Compare(a.Line, b.Line) })
	return &ImportError{Code: code, Problems: problems}
}

// ImportReport is what an import did: teams created, updated (given
// members or servers they lacked) and unchanged, the accounts and servers
// it made, and the new accounts' sign-in links, shown this once.
type ImportReport struct {
	TeamsCreated, TeamsUpdated, TeamsUnchanged int
	AccountsCreated, ServersCreated            int
	Links                                      []SignInLink
}

// Summary is the report in one line: "2 created, 0 updated, 1 unchanged".
func (r ImportReport) Summary() string {
	return fmt.Sprintf("teams: %d created, %d updated, %d unchanged; %d accounts and %d servers added",
		r.TeamsCreated, r.TeamsUpdated, r.TeamsUnchanged, r.AccountsCreated, r.ServersCreated)
}

// ParseImport reads an import file: its form, each name, login and
// address, and that no team, login or server host is in it twice. What
// depends on the contest (brackets, team size, target networks) is
// CheckImport's; what depends on the teams it has, the store's.
func ParseImport(r io.Reader) (Import, error) {
	cr := csv.NewReader(r)
	cr.Comment, cr.FieldsPerRecord, cr.TrimLeadingSpace = '#', -1, true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return Import{}, Errorf(CodeInvalid, "the file is empty: its first line names the columns (team,bracket,members,servers)")
	}
	if err != nil {
		return Import{}, Errorf(CodeInvalid, "the file is not CSV: %v", err)
	}
	cols, problems := importHeader(header)
	imp := Import{Problems: problems}
	if len(problems) > 0 {
		return imp, nil
	}
	seen := newImportSeen()
	for records := 0; ; records++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line := 0
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.Line
			}
			imp.Problems = append(imp.Problems, LineError{line, fmt.Sprintf("not CSV: %v", errors.Unwrap(err))})
			return imp, nil // the lines after may be read wrong
		}
		line, _ := cr.FieldPos(0)
		if records >= MaxImportRows {
			imp.Problems = append(imp.Problems, LineError{line, fmt.Sprintf("a file has at most %d teams", MaxImportRows)})
			return imp, nil
		}
		if strings.TrimSpace(strings.Join(rec, "")) == "" {
			continue
		}
		row, bad := importRow(line, rec, len(header), cols)
		bad = append(bad, seen.add(row)...)
		if len(bad) > 0 {
			imp.Problems = append(imp.Problems, bad...)
			continue
		}
		imp.Rows = append(imp.Rows, row)
	}
	return imp, nil
}

// importHeader reads the first line: each column's index, by name.
func importHeader(header []string) (map[string]int, []LineError) {
	cols := map[string]int{}
	var problems []LineError
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if !slices.Contains([]string{"team", "bracket", "members", "servers"}, name) {
			problems = append(problems, LineError{1, fmt.Sprintf("no column %q: the columns are team, bracket, members and servers", h)})
			continue
		}
		if _, dup := cols[name]; dup {
			problems = append(problems, LineError{1, fmt.Sprintf("the column %q twice", name)})
		}
		cols[name] = i
	}
	for _, name := range []string{"team", "members", "servers"} {
		if _, ok := cols[name]; !ok && len(problems) == 0 {
			problems = append(problems, LineError{1, fmt.Sprintf("no column %q: the first line names the columns (team,bracket,members,servers)", name)})
		}
	}
	return cols, problems
}

// importRow reads one line of the file.
func importRow(line int, rec []string, width int, cols map[string]int) (ImportRow, []LineError) {
	row := ImportRow{Line: line}
	var bad []LineError
	problem := func(format string, args ...any) { bad = append(bad, LineError{line, fmt.Sprintf(format, args...)}) }
	if len(rec) != width {
		problem("%d fields, the first line has %d", len(rec), width)
		return row, bad
	}
	field := func(name string) string {
		if i, ok := cols[name]; ok {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var err error
	if row.Team, err = CheckTeamName(field("team")); err != nil {
		problem("%v", err)
	}
	row.Bracket = field("bracket")
	for item := range strings.SplitSeq(field("members"), ";") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		m, err := ParseMember(item)
		if err != nil {
			problem("member %q: %v", item, err)
			continue
		}
		row.Members = append(row.Members, m)
	}
	if len(row.Members) == 0 && len(bad) == 0 {
		problem("team %q has no members: list their logins, separated by ;", row.Team)
	}
	for item := range strings.SplitSeq(field("servers"), ";") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		label, address, labelled := strings.Cut(item, "=")
		if !labelled {
			label, address = "", item
		}
		// The contest's rules come later (CheckImport): here only the form.
		srv, err := ParseServer(address, 0, label, TargetRules{Local: true})
		if err != nil {
			problem("%v", err)
			continue
		}
		row.Servers = append(row.Servers, srv)
	}
	return row, bad
}

// importSeen is what the rows before had: no team, login or host twice
// (nor two teams whose names look alike, NameKey).
type importSeen struct {
	teams, logins, hosts map[string]int
}

func newImportSeen() *importSeen {
	return &importSeen{teams: map[string]int{}, logins: map[string]int{}, hosts: map[string]int{}}
}

func (s *importSeen) add(row ImportRow) []LineError {
	var bad []LineError
	once := func(m map[string]int, key, what string) {
		if first, ok := m[key]; ok {
			bad = append(bad, LineError{row.Line, fmt.Sprintf("%s is on line %d already", what, first)})
			return
		}
		m[key] = row.Line
	}
	if row.Team != "" {
		once(s.teams, NameKey(row.Team), fmt.Sprintf("the team %q, or one that looks like it,", row.Team))
	}
	for _, m := range row.Members {
		once(s.logins, m.Login, fmt.Sprintf("the login %q", m.Login))
	}
	for _, srv := range row.Servers {
		once(s.hosts, srv.Host, fmt.Sprintf("the server %s", srv.Host))
	}
	return bad
}

// ParseMember reads a member of an import: "login", "login:Display Name",
// "login:mail@example.org" or "login:Display Name <mail@example.org>".
func ParseMember(item string) (Member, error) {
	login, contact, _ := strings.Cut(item, ":")
	login, err := CheckLogin(login)
	if err != nil {
		return Member{}, err
	}
	m := Member{Login: login}
	contact = strings.TrimSpace(contact)
	if strings.ContainsAny(contact, "@<>") {
		addr, err := mail.ParseAddress(contact)
		if err != nil || len(addr.Address) > MaxEmail {
			return Member{}, Errorf(CodeInvalid, "%q is not an e-mail address, nor \"Name <mail@example.org>\"", contact)
		}
		m.Name, m.Email = addr.Name, addr.Address
	} else {
		m.Name = contact
	}
	if m.Name, err = CheckDisplayName(m.Name); err != nil {
		return Member{}, err
	}
	return m, nil
}

// CheckDisplayName returns a display name trimmed: at most MaxDisplayName
// characters, none of them control or formatting characters.
func CheckDisplayName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > MaxDisplayName || !utf8.ValidString(name) ||
		strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
		return "", Errorf(CodeInvalid, "a display name has at most %d characters, none of them control characters", MaxDisplayName)
	}
	return name, nil
}

// CheckImport finds what the contest's settings refuse in an import's
// rows: a bracket it does not have (with brackets a team is in one of
// them, without in none), more members than a team holds, a server its
// target rules refuse.
func CheckImport(rows []ImportRow, s Settings) []LineError {
	var bad []LineError
	for _, row := range rows {
		problem := func(format string, args ...any) {
			bad = append(bad, LineError{row.Line, fmt.Sprintf(format, args...)})
		}
		switch {
		case len(s.Brackets) == 0 && row.Bracket != "":
			problem("this contest has no brackets, and the team %q is in %q", row.Team, row.Bracket)
		case len(s.Brackets) > 0 && !slices.Contains(s.Brackets, row.Bracket):
			problem("the team %q is in no bracket of the contest's (%s)", row.Team, strings.Join(s.Brackets, ", "))
		}
		if len(row.Members) > s.TeamSize() {
			problem("the team %q has %d members, and a team holds %d", row.Team, len(row.Members), s.TeamSize())
		}
		for _, srv := range row.Servers {
			if _, err := CheckTarget(srv.URL, s.Targets()); err != nil {
				problem("%v", err)
			}
		}
	}
	return bad
}

// Sign-in links: an account the import makes has no password; its owner
// follows a one-time link to choose one, and is then signed in.
const (
	// DefaultSignInLinkTTL is how long a sign-in link works.
	DefaultSignInLinkTTL = 14 * 24 * time.Hour
	// SignInPath starts a sign-in link's path: SignInPath + token.
	SignInPath = "/signin/"
)

// SignInLink is a new account's one-time sign-in link, as the organiser
// hands it out. Token is shown once; the portal keeps its hash.
type SignInLink struct {
	Team      string
	Login     string
	Name      string
	Email     string
	Token     string
	ExpiresAt time.Time
}

// Path is the link's path on the portal.
func (l SignInLink) Path() string { return SignInPath + l.Token }
