package web

import (
	"bytes"
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
)

// Team servers, the team import and sign-in links: the organiser's side of
// a contest with assigned servers (portal.Settings.AssignedServers).

// MaxImport is the largest team file the import reads: 600 teams of three
// take about 100 KiB.
const MaxImport = 2 << 20

// pickServer is the team page's choice of which of the team's servers its
// benchmarks hit, in a contest with assigned servers. Another team's
// server, or none, is refused (403); so is a change once the contest is
// over for the team (its validation run measures the server it ended on).
func (s *Server) pickServer(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	if !c.Settings.AssignedServers {
		return portal.Errorf(portal.CodeConflict, "this contest's teams register their own targets: save yours as a URL")
	}
	team, err := s.store.Team(r.Context(), v.TeamID)
	if err == nil {
		err = c.CheckTargetChange(team, s.cfg.Now())
	}
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PostFormValue("server"), 10, 64)
	var srv portal.Server
	if err == nil {
		srv, err = s.store.Server(r.Context(), id)
	}
	if err != nil || srv.TeamID != v.TeamID {
		return portal.Errorf(portal.CodeDenied, "that is not one of your team's servers: pick one of those listed")
	}
	u, err := portal.CheckTarget(srv.URL, c.Settings.Targets())
	if err != nil {
		return err
	}
	host := ""
	if !c.Settings.LocalTargets {
		host = portal.TargetHost(u)
	}
	if err := s.store.SetTarget(r.Context(), v.TeamID, srv.URL, host); err != nil {
		return err
	}
	seeOther(w, r, "/team")
	return nil
}

// serversPage lists every team with its members and servers: the forms
// that give a team a server, take one back, and make a member a new
// sign-in link.
func (s *Server) serversPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	ctx := r.Context()
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	teams, err := s.store.Teams(ctx)
	if err != nil {
		return err
	}
	accounts, err := s.store.Accounts(ctx)
	if err != nil {
		return err
	}
	servers, err := s.store.Servers(ctx)
	if err != nil {
		return err
	}
	members, owned := map[int64][]portal.Account{}, map[int64][]portal.Server{}
	for _, a := range accounts {
		if a.TeamID != 0 {
			members[a.TeamID] = append(members[a.TeamID], a)
		}
	}
	for _, srv := range servers {
		owned[srv.TeamID] = append(owned[srv.TeamID], srv)
	}
	s.render(w, r, http.StatusOK, "admin_servers", v, map[string]any{"Contest": c, "Teams": teams, "Members": members,
		"Servers": owned, "Networks": strings.Join(portal.CIDRs(c.Settings.TargetNetworks), ", ")})
	return nil
}

// addServer gives a team a server: an address, an optional port and label,
// checked against the contest's target rules.
func (s *Server) addServer(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	teamID, _ := strconv.ParseInt(r.PostFormValue("team"), 10, 64) // 0, no team, when not a number
	port := 0
	if p := strings.TrimSpace(r.PostFormValue("port")); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return portal.Errorf(portal.CodeInvalid, "a port is a number, 1 to 65535, not %q", p)
		}
	}
	srv, err := portal.ParseServer(r.PostFormValue("address"), port, r.PostFormValue("label"), c.Settings.Targets())
	if err != nil {
		return err
	}
	if _, err := s.store.AddServer(r.Context(), portal.ActorOf(v.Account), teamID, srv); err != nil {
		return err
	}
	seeOther(w, r, "/admin/servers#team-"+strconv.FormatInt(teamID, 10))
	return nil
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
	seeOther(w, r, "/admin/servers")
	return nil
}

// importPage is the team import's form, with the file's format.
func (s *Server) importPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	s.render(w, r, http.StatusOK, "admin_import", v, nil)
	return nil
}

// importTeams imports a team file (multipart, field "file"): all of it, or
// nothing and every problem by line. What it made is shown once, with the
// new accounts' sign-in links, which the portal cannot show again (it
// keeps their hashes): on the page and as a CSV file to download.
func (s *Server) importTeams(w http.ResponseWriter, r *http.Request, v viewer) error {
	file, _, err := r.FormFile("file")
	if err != nil {
		s.render(w, r, http.StatusBadRequest, "admin_import", v, map[string]any{"Error": "choose a CSV file to import"})
		return nil
	}
	defer file.Close()
	imp, err := portal.ParseImport(io.LimitReader(file, MaxImport))
	if err == nil {
		var report portal.ImportReport
		report, err = s.store.ImportTeams(r.Context(), portal.ActorOf(v.Account), imp, portal.DefaultSignInLinkTTL)
		if err == nil {
			s.showLinks(w, r, v, report.Summary(), report.Links)
			return nil
		}
	}
	if portal.ErrorCode(err) == portal.CodeInternal {
		return err
	}
	data := map[string]any{"Error": err.Error()}
	var ie *portal.ImportError
	if errors.As(err, &ie) {
		data["Error"], data["Problems"] = "Nothing was imported: fix these lines and import the file again.", ie.Problems
	}
	s.render(w, r, status(err), "admin_import", v, data)
	return nil
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
	s.showLinks(w, r, v, "A new sign-in link for "+link.Login+": the ones before it no longer work.", []portal.SignInLink{link})
	return nil
}

// linkView is a sign-in link on the page that shows it once.
type linkView struct {
	portal.SignInLink
	URL string
}

// showLinks shows sign-in links once, with a CSV file of them to download
// (a data: URL: the portal keeps no copy to serve).
func (s *Server) showLinks(w http.ResponseWriter, r *http.Request, v viewer, summary string, links []portal.SignInLink) {
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
	data := map[string]any{"Summary": summary, "Links": views}
	if len(links) > 0 {
		data["CSV"] = template.URL("data:text/csv;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(b.Bytes())) //nolint:gosec // our own CSV, encoded
	}
	s.render(w, r, http.StatusOK, "admin_links", v, data)
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

// signInPage is where a sign-in link leads: a form to choose a password.
// Opening it changes nothing (a mail scanner that follows the link uses
// nothing up); a link used or expired says so.
func (s *Server) signInPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	a, err := s.store.SignInLinkAccount(r.Context(), portal.TokenHash(r.PathValue("token")))
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "signin", v, map[string]any{"Account": a, "Token": r.PathValue("token")})
	return nil
}

// signIn uses a sign-in link: the password chosen becomes the account's,
// the link stops working, and its owner is signed in (as nobody else).
func (s *Server) signIn(w http.ResponseWriter, r *http.Request, v viewer) error {
	token := r.PathValue("token")
	a, err := s.store.SignInLinkAccount(r.Context(), portal.TokenHash(token))
	if err != nil {
		return err
	}
	password := r.PostFormValue("password")
	again := func(msg string) error { // the form again, with what is wrong
		s.render(w, r, http.StatusBadRequest, "signin", v, map[string]any{"Account": a, "Token": token, "Error": msg})
		return nil
	}
	if password != r.PostFormValue("again") {
		return again("the two passwords differ")
	}
	hash, err := s.cfg.Passwords.Hash(password)
	if err != nil {
		return again(err.Error())
	}
	if a, err = s.store.RedeemSignInLink(r.Context(), portal.TokenHash(token), hash); err != nil {
		return err
	}
	if err := s.startSession(w, r, a); err != nil {
		return err
	}
	if v.signedIn() && v.ID != a.ID { // one session at a time
		if err := s.store.DeleteSession(r.Context(), portal.TokenHash(v.token)); err != nil {
			s.cfg.Logger.Warn("ending the session signed in before", "err", err)
		}
	}
	seeOther(w, r, "/team")
	return nil
}
