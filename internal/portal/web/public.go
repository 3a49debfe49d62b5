package web

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/kit"
	"github.com/yuin/goldmark"
)

// The pages everyone may read: the contest page, the manual, the
// leaderboard with its chart, and the announcements.

// contestView is the contest page's: the contest and its state, and for a
// team member the team's own state, active job and end.
type contestView struct {
	layout
	Contest      portal.Contest
	Problem      *kit.Problem // nil: not in the registry (or none chosen)
	State        portal.Phase
	Frozen       bool
	Revealed     bool
	Registration bool
	// Team is the viewer's (nil: none), with its phase and end, which its
	// extra time moves, and its queued or running job (nil: none).
	Team      *portal.Team
	TeamState portal.Phase
	TeamEnd   time.Time
	// The team's dashboard: its standing, whether it may enqueue (and its
	// active job, with its times), and its last jobs.
	Standing *standingView
	Enqueue  enqueueState
	Times    jobTimes
	Now      time.Time
	Recent   []portal.Job
	announcementsView
}

// standingView is a team's line on the board it sees (frozen during a
// freeze), the number of teams on it, its rank in its bracket, and during a
// freeze its own live line, which only the team sees.
type standingView struct {
	portal.Standing
	Teams                     int
	BracketRank, BracketTeams int
	Frozen                    bool
	Live                      *portal.Standing
}

// DashboardJobs is how many of its last jobs a team's dashboard lists.
const DashboardJobs = 5

// dashboard reads what the contest page shows a team: its standing, its
// active job or whether it may enqueue, and its last jobs.
func (s *Server) dashboard(r *http.Request, c portal.Contest, t portal.Team, data *contestView) error {
	var err error
	if data.Enqueue, err = s.enqueueState(r, t, c); err != nil {
		return err
	}
	if j := data.Enqueue.Active; j != nil {
		data.Times, data.Now = s.live.times(*j, data.Enqueue.Position), s.cfg.Now()
	}
	if data.Recent, err = s.store.RecentTeamJobs(r.Context(), t.ID, DashboardJobs); err != nil {
		return err
	}
	b, err := s.live.current(r.Context())
	if err != nil {
		return err
	}
	board, err := b.view("", false)
	if err != nil {
		return err
	}
	sv := &standingView{Standing: portal.Standing{TeamID: t.ID, Team: t.Name}, Teams: len(board.standings), Frozen: b.frozen}
	if i, ok := board.index[t.ID]; ok {
		sv.Standing = board.standings[i]
	}
	if bv, err := b.view(t.Bracket, false); t.Bracket != "" && err == nil {
		if i, ok := bv.index[t.ID]; ok {
			sv.BracketRank = bv.standings[i].Rank
		}
		sv.BracketTeams = len(bv.standings)
	}
	if own, ok := b.own[t.ID]; ok && b.frozen {
		sv.Live = &own
	}
	data.Standing = sv
	return nil
}

func (s *Server) contestPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	data := &contestView{Contest: c, State: c.Phase(now, 0), Frozen: c.Frozen(now), Revealed: c.Revealed(now),
		Registration: c.RegistrationOpen(now)}
	if p, ok := s.cfg.Lookup(c.Problem); ok {
		data.Problem = &p
	}
	if v.TeamID != 0 {
		t, err := s.store.Team(r.Context(), v.TeamID)
		if err != nil {
			return err
		}
		data.Team, data.TeamState, data.TeamEnd = &t, c.Phase(now, t.ExtraTime), c.EndFor(t.ExtraTime)
		if err := s.dashboard(r, c, t, data); err != nil {
			return err
		}
	}
	if data.Announcements, data.Latest, err = s.announcements(r.Context(), ContestAnnouncements); err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "contest", v, data)
}

// manualView is the manual page's: the problem's manual as HTML.
type manualView struct {
	layout
	Manual template.HTML
}

func (s *Server) manualPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	p, ok := s.cfg.Lookup(c.Problem)
	if !ok {
		return portal.Errorf(portal.CodeNotFound, "the contest has no problem yet")
	}
	// goldmark leaves raw HTML out unless told otherwise: the manual's
	// Markdown becomes markup, and nothing else does.
	var b bytes.Buffer
	if err := goldmark.Convert([]byte(p.ManualText()), &b); err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "manual", v, &manualView{Manual: template.HTML(b.String())}) //nolint:gosec // goldmark's safe output
}

// leaderboardView is the leaderboard page's: the board's lines as HTML,
// the contest's state and brackets, the chart's query.
type leaderboardView struct {
	layout
	Rows     template.HTML
	Teams    int
	Frozen   bool
	Revealed bool
	Timeline portal.Timeline
	Brackets []string
	Bracket  string // the board's ("": every team)
	Query    string // "?bracket=..." or ""
	Column   bool   // the bracket column: the board of every bracket
	// Own is the viewer's team's live line during a freeze (nil: none);
	// OwnDQ the reason its team is disqualified ("": it is not).
	Own   *portal.Standing
	OwnDQ string
}

// leaderboardPage shows the viewer's board (?bracket=) as rendered once per
// change, the viewer's own line marked: the public board, frozen during a
// freeze (with the team's own live score beside it), or for admins the live
// one with a banner saying it is frozen for the others.
func (s *Server) leaderboardPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	b, view, err := s.boardFor(r, v)
	if err != nil {
		return err
	}
	var rows strings.Builder
	own, isOwn := view.index[v.TeamID]
	for i, row := range view.rows {
		if isOwn && i == own && v.TeamID != 0 {
			row = view.ownRows[i]
		}
		rows.WriteString(row)
	}
	bracket := r.URL.Query().Get("bracket")
	query := ""
	if bracket != "" {
		query = "?bracket=" + url.QueryEscape(bracket)
	}
	data := &leaderboardView{Rows: template.HTML(rows.String()), Teams: len(view.rows), //nolint:gosec // rendered by the boardrow template
		Frozen: b.frozen, Revealed: b.revealed, Timeline: b.timeline, Brackets: b.brackets, Bracket: bracket,
		Query: query, Column: len(b.brackets) > 0 && bracket == ""}
	if line, ok := b.own[v.TeamID]; ok && b.frozen && v.TeamID != 0 {
		data.Own = &line
	}
	// The live rows carry no team's reason (they are everyone's); the
	// script keeps the viewer's own from here.
	if isOwn && v.TeamID != 0 && view.standings[own].Disqualified {
		data.OwnDQ = view.standings[own].DQReason
	}
	return s.render(w, r, http.StatusOK, "leaderboard", v, data)
}

// boardRowView is a leaderboard line's, for the page's "boardrow".
type boardRowView struct {
	S                    portal.Standing
	Own, Staff, Brackets bool
}

// boardRow renders one leaderboard line with the page's "boardrow": own
// marks the viewer's team, staff shows hidden teams as such, brackets adds
// the bracket's column (the board of every bracket of a contest that has
// some).
func (s *Server) boardRow(st portal.Standing, own, staff, brackets bool) (string, error) {
	var b strings.Builder
	err := s.pages["leaderboard"].ExecuteTemplate(&b, "boardrow", boardRowView{S: st, Own: own, Staff: staff,
		Brackets: brackets})
	return b.String(), err
}

// ChartTeams is how many of the leading teams the score chart draws (the
// viewer's own team is drawn too).
const ChartTeams = 10

// leaderboardHistory is the chart's data: the passed scores over time of
// the leading teams of the viewer's board and of the viewer's own team.
// During a freeze the others' scores stop at the freeze; the team's own go
// on.
func (s *Server) leaderboardHistory(w http.ResponseWriter, r *http.Request, v viewer) error {
	b, view, err := s.boardFor(r, v)
	if err != nil {
		return err
	}
	type series struct {
		TeamID int64        `json:"team_id"`
		Team   string       `json:"team"`
		Own    bool         `json:"own"`
		Points [][2]float64 `json:"points"` // [unix seconds, score]
	}
	out := []series{}
	for i, st := range view.standings {
		own := st.TeamID == v.TeamID && v.TeamID != 0
		if (i < ChartTeams && st.Passed) || own {
			points := view.points[st.TeamID]
			if own {
				points = b.points[st.TeamID]
			}
			if points == nil {
				points = [][2]float64{}
			}
			out = append(out, series{TeamID: st.TeamID, Team: st.Team, Own: own, Points: points})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"series": out, "frozen": b.frozen && !v.Admin()})
	return nil
}

// announcementView is an announcement with its Markdown rendered.
type announcementView struct {
	portal.Announcement
	HTML template.HTML
}

// markdown renders Markdown as HTML. goldmark leaves raw HTML out and
// dangerous links (javascript: and the like) empty unless told otherwise:
// an announcement's text becomes markup, and nothing else does.
func markdown(text string) (template.HTML, error) {
	var b bytes.Buffer
	if err := goldmark.Convert([]byte(text), &b); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil //nolint:gosec // goldmark's safe output
}

// announcements are the announcements, newest first, rendered; at most
// limit of them (0: all).
func (s *Server) announcements(ctx context.Context, limit int) ([]announcementView, int64, error) {
	list, err := s.store.Announcements(ctx)
	if err != nil {
		return nil, 0, err
	}
	var latest int64
	if len(list) > 0 {
		latest = list[0].ID
	}
	if limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	out := make([]announcementView, len(list))
	for i, a := range list {
		html, err := markdown(a.Text)
		if err != nil {
			return nil, 0, err
		}
		out[i] = announcementView{Announcement: a, HTML: html}
	}
	return out, latest, nil
}

// announcementsView is the announcements' list (the partial
// "announcementlist"): the newest first, and the newest one's id.
type announcementsView struct {
	Announcements []announcementView
	Latest        int64
}

// announcementsPageView is the announcements page's: every announcement,
// and for staff the form's limit.
type announcementsPageView struct {
	layout
	announcementsView
	Max int
}

// ContestAnnouncements is how many of the newest announcements the contest
// page shows.
const ContestAnnouncements = 3

// announcementsPage lists every announcement, the newest first, and marks
// them read for the viewer. Staff post from it.
func (s *Server) announcementsPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	list, latest, err := s.announcements(r.Context(), 0)
	if err != nil {
		return err
	}
	if v.signedIn() && latest > 0 {
		if err := s.store.ReadAnnouncements(r.Context(), v.ID, latest); err != nil {
			return err
		}
	}
	return s.render(w, r, http.StatusOK, "announcements", v, &announcementsPageView{
		announcementsView: announcementsView{Announcements: list, Latest: latest}, Max: portal.MaxAnnouncement})
}
