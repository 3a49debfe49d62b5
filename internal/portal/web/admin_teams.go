package web

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
)

// The admin's teams: their places on the board, disqualification, and the
// organiser's side of a contest with assigned servers (portal.Settings.
// AssignedServers): the teams' servers, the team import and sign-in links.

// setTeamPlace is a team's line on the admin page: its bracket, whether it
// is hidden, its extra time in minutes.
// maxExtraMinutes is the most extra time the team form takes, in minutes.
const maxExtraMinutes = int(portal.MaxExtraTime / time.Minute)

func (s *Server) setTeamPlace(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r, "team")
	if err != nil {
		return err
	}
	mins, _, err := formNumber(r, "extra_minutes", 0, maxExtraMinutes, "the extra time, in minutes,")
	if err != nil {
		return err
	}
	extra := time.Duration(mins) * time.Minute
	place := store.TeamPlace{Bracket: r.PostFormValue("bracket"), Hidden: r.PostFormValue("hidden") == "on", ExtraTime: extra}
	if err := s.store.SetTeamPlace(r.Context(), portal.ActorOf(v.Account), id, place); err != nil {
		return err
	}
	return seeOther(w, r, backTo(r, id))
}

// backTo is where a team's form goes back to: the page it names (the
// team's own page), else the team's line on the admin page.
func backTo(r *http.Request, teamID int64) string {
	return cmp.Or(localPath(r.PostFormValue("next")), "/admin#team-"+strconv.FormatInt(teamID, 10))
}

// adminTeamJobs is how many of a team's jobs its admin page lists.
const adminTeamJobs = 20

// adminTeamView is the organiser's page of one team.
type adminTeamView struct {
	layout
	Team            portal.Team
	Brackets        []string
	MaxExtraMinutes int
	MaxTeamName     int
	MaxDQReason     int
	Members         []portal.Account
	Servers         []portal.Server
	Jobs            []portal.Job
	OlderJobs       int
	// Removable: the team has no member and no job (store.RemoveTeam).
	Removable bool
}

// adminTeamPage is one team for the organiser: its members (each with a
// password-reset link), servers, place on the board, jobs and
// disqualification, and its name.
func (s *Server) adminTeamPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r, "team")
	if err != nil {
		return err
	}
	ctx := r.Context()
	team, err := s.store.Team(ctx, id)
	if err != nil {
		return err
	}
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	view := &adminTeamView{Team: team, Brackets: c.Settings.Brackets, MaxExtraMinutes: maxExtraMinutes,
		MaxTeamName: portal.MaxTeamName, MaxDQReason: portal.MaxDQReason}
	if view.Members, err = s.store.TeamMembers(ctx, id); err != nil {
		return err
	}
	if view.Servers, err = s.store.TeamServers(ctx, id); err != nil {
		return err
	}
	if view.Jobs, err = s.store.TeamJobs(ctx, id); err != nil {
		return err
	}
	view.Removable = len(view.Members) == 0 && len(view.Jobs) == 0
	if n := len(view.Jobs); n > adminTeamJobs {
		view.Jobs, view.OlderJobs = view.Jobs[:adminTeamJobs], n-adminTeamJobs
	}
	return s.render(w, r, http.StatusOK, "admin_team", v, view)
}

// renameTeam gives a team a new name (one that does not look like
// another team's).
func (s *Server) renameTeam(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r, "team")
	if err != nil {
		return err
	}
	if err := s.store.RenameTeam(r.Context(), portal.ActorOf(v.Account), id, r.PostFormValue("name")); err != nil {
		return err
	}
	return seeOther(w, r, "/admin/teams/"+strconv.FormatInt(id, 10))
}

// removeTeam removes a team that has no member and no job.
func (s *Server) removeTeam(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r, "team")
	if err != nil {
		return err
	}
	if err := s.store.RemoveTeam(r.Context(), portal.ActorOf(v.Account), id); err != nil {
		return err
	}
	return seeOther(w, r, "/admin#teams")
}

// disqualify disqualifies a team with a reason, or changes the reason.
func (s *Server) disqualify(w http.ResponseWriter, r *http.Request, v viewer) error {
	return s.setDisqualified(w, r, v, true)
}

// reinstate lifts a team's disqualification.
func (s *Server) reinstate(w http.ResponseWriter, r *http.Request, v viewer) error {
	return s.setDisqualified(w, r, v, false)
}

func (s *Server) setDisqualified(w http.ResponseWriter, r *http.Request, v viewer, dq bool) error {
	id, err := pathID(r, "team")
	if err != nil {
		return err
	}
	if err := s.store.SetDisqualified(r.Context(), portal.ActorOf(v.Account), id, dq, r.PostFormValue("reason")); err != nil {
		return err
	}
	return seeOther(w, r, backTo(r, id))
}

// MaxImport is the largest team file the import reads: 600 teams of three
// take about 100 KiB.
const MaxImport = 2 << 20

// roster is the contest, every team and every account, and the accounts by
// team (in the order of Accounts): what the admin's pages list.
type roster struct {
	contest  portal.Contest
	teams    []portal.Team
	accounts []portal.Account
	members  map[int64][]portal.Account
}

func (s *Server) roster(r *http.Request) (roster, error) {
	ctx := r.Context()
	ro := roster{members: map[int64][]portal.Account{}}
	var err error
	if ro.contest, err = s.contest(r); err != nil {
		return ro, err
	}
	if ro.teams, err = s.store.Teams(ctx); err != nil {
		return ro, err
	}
	if ro.accounts, err = s.store.Accounts(ctx); err != nil {
		return ro, err
	}
	for _, a := range ro.accounts {
		if a.TeamID != 0 {
			ro.members[a.TeamID] = append(ro.members[a.TeamID], a)
		}
	}
	return ro, nil
}

// serversView is the servers page's: every team with its members and
// servers, by team, and the contest's target networks.
type serversView struct {
	layout
	Contest  portal.Contest
	Teams    []portal.Team
	Members  map[int64][]portal.Account
	Servers  map[int64][]portal.Server
	Networks string // comma-separated
}

// serversPage lists every team with its members and servers: the forms
// that give a team a server, take one back, and make a member a new
// sign-in link.
func (s *Server) serversPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	ro, err := s.roster(r)
	if err != nil {
		return err
	}
	c := ro.contest
	servers, err := s.store.Servers(r.Context())
	if err != nil {
		return err
	}
	owned := map[int64][]portal.Server{}
	for _, srv := range servers {
		owned[srv.TeamID] = append(owned[srv.TeamID], srv)
	}
	return s.render(w, r, http.StatusOK, "admin_servers", v, &serversView{Contest: c, Teams: ro.teams, Members: ro.members,
		Servers: owned, Networks: strings.Join(portal.CIDRs(c.Settings.TargetNetworks), ", ")})
}

// addServer gives a team a server: an address, an optional port and label,
// checked against the contest's target rules.
func (s *Server) addServer(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	teamID, _ := strconv.ParseInt(r.PostFormValue("team"), 10, 64) // 0, no team, when not a number
	port, _, err := formNumber(r, "port", 1, 65535, "a port")
	if err != nil {
		return err
	}
	srv, err := portal.ParseServer(r.PostFormValue("address"), port, r.PostFormValue("label"), c.Settings.Targets())
	if err != nil {
		return err
	}
	if _, err := s.store.AddServer(r.Context(), portal.ActorOf(v.Account), teamID, srv); err != nil {
		return err
	}
	return seeOther(w, r, "/admin/servers#team-"+strconv.FormatInt(teamID, 10))
}

// removeServer takes a server from its team.
func (s *Server) removeServer(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r, "server")
	if err != nil {
		return err
	}
	if err := s.store.RemoveServer(r.Context(), portal.ActorOf(v.Account), id); err != nil {
		return err
	}
	return seeOther(w, r, "/admin/servers")
}

// importView is the team import's form, with what was wrong with the file
// sent ("": nothing yet), by line when it read.
type importView struct {
	layout
	Error    string
	Problems []portal.LineError
}

// importPage is the team import's form, with the file's format.
func (s *Server) importPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	return s.render(w, r, http.StatusOK, "admin_import", v, &importView{})
}

// importTeams imports a team file (multipart, field "file"): all of it, or
// nothing and every problem by line. What it made is shown once, with the
// new accounts' sign-in links, which the portal cannot show again (it
// keeps their hashes): on the page and as a CSV file to download.
func (s *Server) importTeams(w http.ResponseWriter, r *http.Request, v viewer) error {
	file, _, err := r.FormFile("file")
	if err != nil {
		return s.render(w, r, http.StatusBadRequest, "admin_import", v, &importView{Error: "choose a CSV file to import"})
	}
	defer file.Close()
	imp, err := portal.ParseImport(io.LimitReader(file, MaxImport))
	if err == nil {
		var report portal.ImportReport
		report, err = s.store.ImportTeams(r.Context(), portal.ActorOf(v.Account), imp, portal.DefaultSignInLinkTTL)
		if err == nil {
			return s.showLinks(w, r, v, report.Summary(), report.Links)
		}
	}
	if portal.ErrorCode(err) == portal.CodeInternal {
		return err
	}
	data := &importView{Error: err.Error()}
	var ie *portal.ImportError
	if errors.As(err, &ie) {
		data.Error, data.Problems = "Nothing was imported: fix these lines and import the file again.", ie.Problems
	}
	return s.render(w, r, status(err), "admin_import", v, data)
}

// newSignInLink makes a contestant a new sign-in link (a lost one, a
// forgotten password), shown once.
func (s *Server) newSignInLink(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r, "account")
	if err != nil {
		return err
	}
	link, err := s.store.NewSignInLink(r.Context(), portal.ActorOf(v.Account), id, portal.DefaultSignInLinkTTL)
	if err != nil {
		return err
	}
	return s.showLinks(w, r, v, "A new sign-in link for "+link.Login+": the ones before it no longer work.", []portal.SignInLink{link})
}

// linkView is a sign-in link on the page that shows it once.
type linkView struct {
	portal.SignInLink
	URL string
}

// linksView is the page that shows sign-in links once: what was done, the
// links, and a CSV file of them ("" without links).
type linksView struct {
	layout
	Summary string
	Links   []linkView
	CSV     template.URL
}

// showLinks shows sign-in links once, with a CSV file of them to download
// (a data: URL: the portal keeps no copy to serve).
func (s *Server) showLinks(w http.ResponseWriter, r *http.Request, v viewer, summary string, links []portal.SignInLink) error {
	base := s.baseURL(r)
	views := make([]linkView, len(links))
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	_ = cw.Write([]string{"team", "login", "name", "email", "link", "expires"})
	for i, l := range links {
		views[i] = linkView{SignInLink: l, URL: base + l.Path()}
		_ = cw.Write([]string{l.Team, l.Login, l.Name, l.Email, views[i].URL, l.ExpiresAt.UTC().Format(time.RFC3339)})
	}
	cw.Flush()
	data := &linksView{Summary: summary, Links: views}
	if len(links) > 0 {
		data.CSV = template.URL("data:text/csv;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(b.Bytes())) //nolint:gosec // our own CSV, encoded
	}
	return s.render(w, r, http.StatusOK, "admin_links", v, data)
}

// baseURL is the portal's address as the request reached it, for links
// to hand out: https behind a TLS proxy (Config.SecureCookies).
func (s *Server) baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || s.cfg.SecureCookies {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
