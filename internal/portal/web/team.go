package web

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// A contestant's pages and forms: the team (making or joining one, its
// target or server, its API tokens) and its questions to the staff.

// teamView is the team page's: for a contestant in no team, the forms to
// make or join one; for a member, the team, its members, its target or
// servers, and its API tokens.
type teamView struct {
	layout
	Brackets       []string
	Registration   bool
	RegistrationAt time.Time
	Team           *portal.Team // nil: the viewer is in no team
	Members        []portal.Account
	Assigned       bool // the organisers assign the teams' servers
	Servers        []portal.Server
	Tokens         []portal.APIToken
	MaxTokens      int
}

func (s *Server) teamPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	if v.Admin() {
		return seeOther(w, r, "/admin")
	}
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	data := &teamView{Brackets: c.Settings.Brackets, Registration: c.RegistrationOpen(s.cfg.Now()),
		RegistrationAt: c.RegistrationAt}
	if v.TeamID != 0 {
		t, err := s.store.Team(r.Context(), v.TeamID)
		if err != nil {
			return err
		}
		if data.Members, err = s.store.TeamMembers(r.Context(), v.TeamID); err != nil {
			return err
		}
		data.Team = &t
		if c.Settings.AssignedServers {
			if data.Servers, err = s.store.TeamServers(r.Context(), v.TeamID); err != nil {
				return err
			}
			data.Assigned = true
		}
		if data.Tokens, err = s.store.APITokens(r.Context(), v.TeamID); err != nil {
			return err
		}
		data.MaxTokens = portal.MaxAPITokens
	}
	return s.render(w, r, http.StatusOK, "team", v, data)
}

// registrationOpen refuses what registering does (signing up, making or
// joining a team) before the registration opens.
func (s *Server) registrationOpen(c portal.Contest) error {
	if !c.RegistrationOpen(s.cfg.Now()) {
		return portal.Errorf(portal.CodeConflict, "registration opens at %s", c.RegistrationAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	return nil
}

// registering reads the contest for a form that registers (making or
// joining a team), refused before the registration opens.
func (s *Server) registering(r *http.Request) (portal.Contest, error) {
	c, err := s.contest(r)
	if err == nil {
		err = s.registrationOpen(c)
	}
	return c, err
}

func (s *Server) createTeam(w http.ResponseWriter, r *http.Request, v viewer) error {
	if _, err := s.registering(r); err != nil {
		return err
	}
	if _, err := s.store.CreateTeamFor(r.Context(), v.ID, r.PostFormValue("name"), r.PostFormValue("bracket")); err != nil {
		return err
	}
	return seeOther(w, r, "/team")
}

func (s *Server) joinTeam(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.registering(r)
	if err != nil {
		return err
	}
	invite := strings.ToLower(strings.TrimSpace(r.PostFormValue("invite")))
	if _, err := s.store.JoinTeam(r.Context(), v.ID, invite, c.Settings.TeamSize()); err != nil {
		return err
	}
	return seeOther(w, r, "/team")
}

func (s *Server) setTarget(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	if c.Settings.AssignedServers {
		return portal.Errorf(portal.CodeConflict, "this contest's organisers assign each team its servers: pick one of your team's servers")
	}
	target := strings.TrimSpace(r.PostFormValue("target"))
	u, err := portal.CheckTarget(target, c.Settings.Targets())
	if err != nil {
		return err
	}
	team, err := s.store.Team(r.Context(), v.TeamID)
	if err == nil {
		err = c.CheckTargetChange(team, s.cfg.Now())
	}
	if err != nil {
		return err
	}
	// On one machine every team's app is on the same host; elsewhere a
	// host serves one team, lest a team be scored on another's app.
	host := ""
	if !c.Settings.LocalTargets {
		host = portal.TargetHost(u)
	}
	if err := s.store.SetTarget(r.Context(), v.TeamID, target, host); err != nil {
		return err
	}
	return seeOther(w, r, "/team")
}

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
	if err := s.store.PickServer(r.Context(), v.TeamID, srv.ID, host); err != nil {
		return err
	}
	return seeOther(w, r, "/team")
}

// tokenView is the page that shows a new API token's secret, once.
type tokenView struct {
	layout
	Token  portal.APIToken
	Secret string
}

// createToken makes a read-only API token for the viewer's team and shows
// it, once: the portal keeps only its hash. The page is not cached, and
// reloading it makes no second token (the browser asks before posting
// again; the name must be new anyway).
func (s *Server) createToken(w http.ResponseWriter, r *http.Request, v viewer) error {
	token, hash := portal.NewAPIToken()
	t, err := s.store.CreateAPIToken(r.Context(), v.TeamID, v.Login, r.PostFormValue("name"), hash)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "team_token", v, &tokenView{Token: t, Secret: token})
}

// revokeToken deletes a token of the viewer's team; another team's is not
// found.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r, "token")
	if err != nil {
		return err
	}
	if err := s.store.RevokeAPIToken(r.Context(), v.TeamID, id); err != nil {
		return err
	}
	return seeOther(w, r, "/team#tokens")
}

// clarificationView is a clarification as its viewer sees it.
type clarificationView struct {
	portal.Clarification
	Own bool // the viewer's team asked it
}

// clarificationsView is the clarifications page's: the fingerprint of
// what the viewer sees (the script reloads when it changes), the lists by
// whom they are for, and the forms' limits and canned answers.
type clarificationsView struct {
	layout
	Key                    string
	Own, Published, All    []clarificationView
	Canned                 []string
	MaxQuestion, MaxAnswer int
	MaxOpen                int
}

// clarificationsPage shows a team its own questions with their status and
// the published ones, with the form to ask; staff every question, waiting
// ones first, with the text as asked and the form to answer or publish;
// anyone else signed in the published ones.
func (s *Server) clarificationsPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	ctx := r.Context()
	key, err := s.store.ClarificationsKey(ctx, seen(v))
	if err != nil {
		return err
	}
	list, err := s.store.Clarifications(ctx, seen(v))
	if err != nil {
		return err
	}
	var own, published, all []clarificationView
	for _, c := range list {
		switch {
		case v.Admin():
			all = append(all, clarificationView{Clarification: c})
		case c.TeamID == v.TeamID && v.TeamID != 0:
			own = append(own, clarificationView{Clarification: c.ForTeam(v.TeamID), Own: true})
		case c.Published:
			published = append(published, clarificationView{Clarification: c.ForTeam(v.TeamID)})
		}
	}
	// Staff: the questions waiting first, the oldest of them first.
	slices.SortStableFunc(all, func(a, b clarificationView) int {
		if a.Answered() != b.Answered() {
			if a.Answered() {
				return 1
			}
			return -1
		}
		if !a.Answered() {
			return cmp.Compare(a.ID, b.ID)
		}
		return 0
	})
	return s.render(w, r, http.StatusOK, "clarifications", v, &clarificationsView{Key: key, Own: own, Published: published,
		All: all, Canned: portal.CannedAnswers, MaxQuestion: portal.MaxQuestion, MaxAnswer: portal.MaxAnswer,
		MaxOpen: portal.MaxOpenQuestions})
}

// ask is a team's question.
func (s *Server) ask(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.store.Ask(r.Context(), v.Account, r.PostFormValue("question"))
	if err != nil {
		return err
	}
	return seeOther(w, r, "/clarifications#c-"+strconv.FormatInt(c.ID, 10))
}
