package web

import (
	"cmp"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
)

// The admin's main page and forms: the contest's settings and timeline,
// announcements and answers, the audit log and the ceremony.

// adminView is the admin page's: the contest with its state, timeline and
// settings' forms, the teams with their members' logins, and the workers.
type adminView struct {
	layout
	Contest         portal.Contest
	State           portal.Phase
	Frozen          bool
	Revealed        bool
	Now             []nowButton
	Started         bool
	Problems        []string
	Rules           []portal.RankRule
	Brackets        string // comma-separated, as the form takes them
	Networks        string // likewise
	MaxLoadSeconds  int
	MaxMembers      int
	MaxSignupLimit  int
	SignupLimit     int // as the form shows it: 0 for none
	MaxExtraMinutes int
	Assigned        bool
	Accounts        int
	Teams           []portal.Team
	Members         map[int64][]string // logins by team
	Workers         []workerView
	NoHealthyWorker bool
}

func (s *Server) adminPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	ro, err := s.roster(r)
	if err != nil {
		return err
	}
	c := ro.contest
	members := map[int64][]string{}
	for team, accounts := range ro.members {
		for _, a := range accounts {
			members[team] = append(members[team], a.Login)
		}
	}
	workers, err := s.workers(r)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	return s.render(w, r, http.StatusOK, "admin", v, &adminView{
		Contest: c, State: c.Phase(now, 0), Frozen: c.Frozen(now), Revealed: c.Revealed(now),
		Problems: s.cfg.Problems, Teams: ro.teams, Members: members, Workers: workers, Accounts: len(ro.accounts),
		Now: nowButtons(c.Timeline, now), Started: c.Problem != "" && c.Started(now), Rules: []portal.RankRule{portal.RankLatest, portal.RankBest},
		Brackets: strings.Join(c.Settings.Brackets, ", "), NoHealthyWorker: !anyHealthy(workers),
		Networks:       strings.Join(portal.CIDRs(c.Settings.TargetNetworks), ", "),
		MaxLoadSeconds: maxLoadSeconds, MaxMembers: portal.MaxMembers, MaxExtraMinutes: maxExtraMinutes,
		MaxSignupLimit: portal.MaxSignupLimit, SignupLimit: formSignupLimit(c.Settings),
		// A contest not set up yet is proposed assigned servers.
		Assigned: c.Settings.AssignedServers || c.Problem == "",
	})
}

// nowButton is one of the timeline's "now" buttons: active when setting
// its event now makes sense (portal.Timeline.CanSetNow), otherwise
// disabled with the reason; Confirm is what it asks first ("" for
// nothing).
type nowButton struct {
	Event   portal.Event
	Label   string
	Refused string
	Confirm string
}

// nowButtons are the timeline's buttons in the contest's state now.
func nowButtons(t portal.Timeline, now time.Time) []nowButton {
	var out []nowButton
	for _, e := range portal.Events() {
		b := nowButton{Event: e, Label: nowLabel(e)}
		if err := t.CanSetNow(e, now); err != nil {
			b.Refused = err.Error()
		}
		switch e {
		case portal.EventEnd:
			b.Confirm = "End the contest now? No team can enqueue a benchmark after it, except those with extra time."
		case portal.EventReveal:
			b.Confirm = "Reveal the final board now? Everyone sees every score, hidden by the freeze until now; it cannot be hidden again."
		}
		out = append(out, b)
	}
	return out
}

// nowLabel is a "now" button's text.
func nowLabel(e portal.Event) string {
	switch e {
	case portal.EventRegistration:
		return "Open registration now"
	case portal.EventStart:
		return "Start now"
	case portal.EventFreeze:
		return "Freeze now"
	case portal.EventEnd:
		return "End now"
	}
	return "Reveal now"
}

// formSignupLimit is the settings' sign-up limit as the form shows it: the
// number, or 0 for none.
func formSignupLimit(s portal.Settings) int {
	if s.SignupLimit < 0 {
		return 0
	}
	return cmp.Or(s.SignupLimit, portal.DefaultSignupLimit)
}

// maxLoadSeconds is the longest load the settings form takes, in seconds
// (its shortest, 1 s, is engine.MinLoadDuration too).
const maxLoadSeconds = int(engine.MaxLoadDuration / time.Second)

// setContest is the admin's settings form: the problem, the load's
// length, the team size, whose targets (assigned servers or self-registered),
// local targets, the ranking rule and the brackets.
// The times have a form of their own (setTimeline).
func (s *Server) setContest(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	problem := r.PostFormValue("problem")
	if !slices.Contains(s.cfg.Problems, problem) {
		return portal.Errorf(portal.CodeInvalid, "no problem %q", problem)
	}
	if problem != c.Problem && c.Problem != "" && c.Started(s.cfg.Now()) && r.PostFormValue("problem_change") != "yes" {
		return portal.Errorf(portal.CodeConflict, "the contest has started: changing the problem from %s to %s "+
			"makes every score so far one of another problem; confirm the change on the admin page", c.Problem, problem)
	}
	load, settings := c.LoadDuration, c.Settings
	if n, set, err := formNumber(r, "load_seconds", 0, maxLoadSeconds, "the load, in seconds (0: the engine's default),"); err != nil {
		return err
	} else if set {
		load = time.Duration(n) * time.Second
	}
	if n, set, err := formNumber(r, "team_size", 1, portal.MaxMembers, "the team size"); err != nil {
		return err
	} else if set {
		settings.MaxTeamSize = n
	}
	if n, set, err := formNumber(r, "signup_limit", 0, portal.MaxSignupLimit, "the sign-ups per address an hour (0: no limit)"); err != nil {
		return err
	} else if set {
		settings.SignupLimit = cmp.Or(n, -1) // the form's 0 is none
	}
	settings.LocalTargets = r.PostFormValue("local_targets") == "on"
	switch targets := r.PostFormValue("targets"); targets {
	case "assigned", "self":
		settings.AssignedServers = targets == "assigned"
	case "": // a form without the choice keeps it
	default:
		return portal.Errorf(portal.CodeInvalid, "targets are assigned or self-registered, not %q", targets)
	}
	if rule := r.PostFormValue("ranking"); rule != "" {
		settings.Ranking = portal.RankRule(rule)
	}
	if r.PostForm.Has("brackets") {
		settings.Brackets = nil
		for b := range strings.SplitSeq(r.PostFormValue("brackets"), ",") {
			if b = strings.TrimSpace(b); b != "" {
				settings.Brackets = append(settings.Brackets, b)
			}
		}
	}
	if r.PostForm.Has("target_networks") {
		if settings.TargetNetworks, err = portal.ParseNetworks(r.PostFormValue("target_networks")); err != nil {
			return err
		}
	}
	if err := s.store.SetSettings(r.Context(), portal.ActorOf(v.Account), problem, load, settings); err != nil {
		return err
	}
	return seeOther(w, r, "/admin")
}

// parseTime reads a time of a form: empty for none, else UTC on a 24-hour
// clock as the form shows it ("2026-12-01 10:00", seconds optional; a "T"
// for the space too) or RFC 3339.
func parseTime(r *http.Request, field string) (time.Time, error) {
	in := strings.TrimSpace(r.PostFormValue(field))
	if in == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, in, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, portal.Errorf(portal.CodeInvalid, "%s: %q is not a time like 2026-12-01T10:00 (UTC)", field, in)
}

// timeFields are the timeline form's fields, by event.
var timeFields = map[portal.Event]string{
	portal.EventRegistration: "registration_at", portal.EventStart: "starts_at", portal.EventFreeze: "freezes_at",
	portal.EventEnd: "ends_at", portal.EventReveal: "reveals_at",
}

// setTimeline is the admin's timeline form: the five times, in UTC. A
// field that shows a time as the form showed it (to the second) keeps the
// time as it is, so saving the form changes only what was edited.
func (s *Server) setTimeline(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.contest(r)
	if err != nil {
		return err
	}
	t := c.Timeline
	for _, e := range portal.Events() {
		at, _ := t.At(e)
		in, err := parseTime(r, timeFields[e])
		if err != nil {
			return err
		}
		if !in.Equal(at.Truncate(time.Second)) {
			*at = in
		}
	}
	if err := s.store.SetTimeline(r.Context(), portal.ActorOf(v.Account), t); err != nil {
		return err
	}
	return seeOther(w, r, "/admin")
}

// setNow is the timeline's buttons: one event (registration, start,
// freeze, end, reveal) now.
func (s *Server) setNow(w http.ResponseWriter, r *http.Request, v viewer) error {
	e := portal.Event(r.PostFormValue("event"))
	if _, err := s.store.SetNow(r.Context(), portal.ActorOf(v.Account), e); err != nil {
		return err
	}
	return seeOther(w, r, "/admin")
}

// auditView is the audit log's page: its entries, the newest first, each
// with its detail in lines for people.
type auditView struct {
	layout
	Entries []auditLine
}

type auditLine struct {
	portal.AuditEntry
	What []string
}

// auditPage lists the admin actions, the newest first.
func (s *Server) auditPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	entries, err := s.store.AuditLog(r.Context())
	if err != nil {
		return err
	}
	slices.Reverse(entries)
	lines := make([]auditLine, len(entries))
	for i, e := range entries {
		lines[i] = auditLine{AuditEntry: e, What: describeDetail(e.Detail)}
	}
	return s.render(w, r, http.StatusOK, "admin_audit", v, &auditView{Entries: lines})
}

// describeDetail is an audit entry's detail in lines for people: "field:
// before → after" for each change, "key: value" otherwise.
func describeDetail(detail json.RawMessage) []string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(detail, &fields); err != nil {
		return []string{string(detail)}
	}
	show := func(raw json.RawMessage) string {
		var s string
		if string(raw) == "null" {
			return "unset"
		}
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		// A change is {"before": ..., "after": ...}, either of them null.
		var c map[string]json.RawMessage
		_ = json.Unmarshal(fields[k], &c)
		before, hasBefore := c["before"]
		after, hasAfter := c["after"]
		if len(c) == 2 && hasBefore && hasAfter {
			out = append(out, k+": "+show(before)+" → "+show(after))
		} else {
			out = append(out, k+": "+show(fields[k]))
		}
	}
	return out
}

// auditExport is the audit log as a JSON file, oldest first.
func (s *Server) auditExport(w http.ResponseWriter, r *http.Request, v viewer) error {
	entries, err := s.store.AuditLog(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", `attachment; filename="tunecon-audit.json"`)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(entries)
	return nil
}

// ceremonyView is the ceremony's page: the final board's lines, the last
// Shown of Total shown, and the queries that show one more and all.
type ceremonyView struct {
	layout
	Lines        []ceremonyLine
	Shown, Total int
	Bracket      string
	Brackets     []string
	Next, All    string
}

type ceremonyLine struct {
	portal.Standing
	Shown bool
}

// ceremonyPage reveals the final board (live, without hidden teams) team by
// team from the bottom: ?shown=N shows the last N lines, and its button
// shows one more. It changes nothing: the public board is revealed by the
// timeline's reveal.
func (s *Server) ceremonyPage(w http.ResponseWriter, r *http.Request, v viewer) error {
	b, err := s.live.current(r.Context())
	if err != nil {
		return err
	}
	bracket := r.URL.Query().Get("bracket")
	if _, err := b.view(bracket, true); err != nil {
		return err
	}
	board := portal.Board(b.final, bracket, false)
	shown, _ := strconv.Atoi(r.URL.Query().Get("shown"))
	shown = max(0, min(shown, len(board)))
	lines := make([]ceremonyLine, len(board))
	for i, st := range board {
		lines[i] = ceremonyLine{Standing: st, Shown: i >= len(board)-shown}
	}
	next := url.Values{"shown": {strconv.Itoa(shown + 1)}}
	all := url.Values{"shown": {strconv.Itoa(len(board))}}
	if bracket != "" {
		next.Set("bracket", bracket)
		all.Set("bracket", bracket)
	}
	return s.render(w, r, http.StatusOK, "admin_ceremony", v, &ceremonyView{Lines: lines, Shown: shown, Total: len(board),
		Bracket: bracket, Brackets: b.brackets, Next: "?" + next.Encode(), All: "?" + all.Encode()})
}

// announce is staff's form: an announcement's Markdown.
func (s *Server) announce(w http.ResponseWriter, r *http.Request, v viewer) error {
	if _, err := s.store.Announce(r.Context(), portal.ActorOf(v.Account), r.PostFormValue("text")); err != nil {
		return err
	}
	return seeOther(w, r, "/announcements")
}

// answer is staff's form on a clarification: the answer (typed, or one of
// the canned answers when none is typed), the question's text as shown,
// and whether to publish it to every team.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r, "clarification")
	if err != nil {
		return err
	}
	text := r.PostFormValue("answer")
	if canned := r.PostFormValue("canned"); strings.TrimSpace(text) == "" && canned != "" {
		if !slices.Contains(portal.CannedAnswers, canned) {
			return portal.Errorf(portal.CodeInvalid, "no canned answer %q", canned)
		}
		text = canned
	}
	a := store.Answer{Question: r.PostFormValue("question"), Answer: text, Publish: r.PostFormValue("publish") == "on"}
	if _, err := s.store.AnswerClarification(r.Context(), portal.ActorOf(v.Account), id, a); err != nil {
		return err
	}
	return seeOther(w, r, "/clarifications#c-"+strconv.FormatInt(id, 10))
}

// claim claims a waiting question for the viewer, who then alone answers
// it.
func (s *Server) claim(w http.ResponseWriter, r *http.Request, v viewer) error {
	return s.setClaim(w, r, v, true)
}

// release gives the viewer's claim of a question up.
func (s *Server) release(w http.ResponseWriter, r *http.Request, v viewer) error {
	return s.setClaim(w, r, v, false)
}

func (s *Server) setClaim(w http.ResponseWriter, r *http.Request, v viewer, claim bool) error {
	id, err := pathID(r, "clarification")
	if err != nil {
		return err
	}
	if err := s.store.ClaimClarification(r.Context(), portal.ActorOf(v.Account), id, claim); err != nil {
		return err
	}
	return seeOther(w, r, "/clarifications#c-"+strconv.FormatInt(id, 10))
}
