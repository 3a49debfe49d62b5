package portal

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Team servers. In a contest with assigned servers (Settings.AssignedServers)
// the organiser gives each team its servers, and a team's benchmarks hit one
// of its own servers only: a team cannot be scored on another team's app,
// whatever it types. A host is one team's server at most.
const (
	// MaxServerLabel bounds a server's label, in characters.
	MaxServerLabel = 40
)

// Server is a team server the organiser assigned.
type Server struct {
	ID     int64
	TeamID int64
	// URL is the base URL a benchmark of the server hits:
	// http://HOST[:PORT]/ or https://.
	URL string
	// Host is URL's host as TargetHost spells it: no two servers share
	// one.
	Host string
	// Label is the organiser's name for it ("app1"), "" for none.
	Label     string
	CreatedAt time.Time
}

// Name is the server as a person reads it: its label and URL.
func (s Server) Name() string {
	if s.Label == "" {
		return s.URL
	}
	return s.Label + " (" + s.URL + ")"
}

// ParseServer reads a server's address: a host name or an IP address with
// an optional port ("10.1.0.11", "10.1.0.11:8080", "[fd00::11]:8080",
// "app.team1.example"), or an http:// or https:// URL without a path
// ("https://app.team1.example:8443"). port, when not 0, is the port (an
// address with another is refused). The server is checked as a target is
// (CheckTarget with r): an address the contest refuses is no server.
func ParseServer(address string, port int, label string, r TargetRules) (Server, error) {
	address = strings.TrimSpace(address)
	label, err := CheckServerLabel(label)
	if err != nil {
		return Server{}, err
	}
	raw := address
	if !strings.Contains(address, "://") {
		raw = "http://" + address
	}
	u, err := url.Parse(raw)
	if err != nil || address == "" || u.User != nil || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" ||
		u.Fragment != "" || u.Hostname() == "" {
		return Server{}, Errorf(CodeInvalid, "server %q: want a host name or an address, with an optional port", address)
	}
	if port != 0 {
		if port < 0 || port > 65535 || u.Port() != "" && u.Port() != strconv.Itoa(port) {
			return Server{}, Errorf(CodeInvalid, "server %q: a port of 1 to 65535, and only one", address)
		}
		u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(port))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return Server{}, Errorf(CodeInvalid, "server %q: a port of 1 to 65535", address)
		}
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if _, err := CheckTarget(u.String(), r); err != nil {
		return Server{}, err
	}
	host := TargetHost(u)
	hostport := host
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() {
		hostport = "[" + host + "]"
	}
	if u.Port() != "" {
		hostport = net.JoinHostPort(host, u.Port())
	}
	return Server{URL: u.Scheme + "://" + hostport + "/", Host: host, Label: label}, nil
}

// CheckServerLabel returns a label trimmed: at most MaxServerLabel
// characters, none of them control or formatting characters.
func CheckServerLabel(label string) (string, error) {
	label = strings.TrimSpace(label)
	if utf8.RuneCountInString(label) > MaxServerLabel || !utf8.ValidString(label) ||
		strings.ContainsFunc(label, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
		return "", Errorf(CodeInvalid, "a server's label has at most %d characters, none of them control characters", MaxServerLabel)
	}
	return label, nil
}

// NotTeamServerError refuses a benchmark of a target that is none of its
// team's servers, in a contest with assigned servers.
type NotTeamServerError struct {
	Target string
}

func (e *NotTeamServerError) Error() string {
	if e.Target == "" {
		return "your team has not picked one of its servers: pick one on the team page"
	}
	return fmt.Sprintf("%s is not one of your team's servers (the organiser assigns them): pick one on the team page", e.Target)
}

// ErrorCode is CodeConflict.
func (e *NotTeamServerError) ErrorCode() Code { return CodeConflict }

// CheckServerTarget refuses a target that is none of servers' URLs (a
// *NotTeamServerError): with assigned servers, a team's benchmarks hit its
// own servers only.
func CheckServerTarget(target string, servers []Server) error {
	for _, s := range servers {
		if target != "" && s.URL == target {
			return nil
		}
	}
	return &NotTeamServerError{Target: target}
}

// Audited actions of the team servers and the team import.
const (
	// AuditServerAdd and AuditServerRemove: a server given to a team, or
	// taken from it.
	AuditServerAdd    = "server.add"
	AuditServerRemove = "server.remove"
	// AuditImport: teams, accounts and servers made by a team import.
	AuditImport = "teams.import"
	// AuditSignInLink: a new one-time sign-in link made for an account.
	AuditSignInLink = "account.signin-link"
)
