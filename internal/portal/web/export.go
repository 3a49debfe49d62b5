package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
)

// ExportVersion is the version of the contest export's shape: it grows
// when a field changes meaning or goes away (new fields keep it).
const ExportVersion = 1

// ExportPage is how many jobs the export reads at a time: each page is a
// short read, so a slow download holds no database connection.
const ExportPage = 50

// The export's sections. Every name and time is as the portal keeps it;
// the credentials (password hashes, session and token hashes, invite
// codes) and the jobs' staff logs are left out. It is staff's archive: it
// holds what only staff see (hidden teams, private clarifications and
// questions as asked, validation runs, the audit log).
type (
	exportContest struct {
		Problem      string          `json:"problem"`
		LoadSeconds  float64         `json:"load_seconds"`
		Ranking      portal.RankRule `json:"ranking"`
		Brackets     []string        `json:"brackets"`
		TeamSize     int             `json:"team_size"`
		LocalTargets bool            `json:"local_targets"`
		// AssignedServers: teams benchmark the servers the organiser gave
		// them (portal.Settings.AssignedServers).
		AssignedServers bool `json:"assigned_servers"`
		// TargetNetworks are the target networks, CIDR.
		TargetNetworks []string `json:"target_networks"`
		MaxAttempts    int      `json:"max_attempts"`
		Seed           uint64   `json:"seed"`
		// ValidationThreshold is in percent (portal.Settings.Threshold).
		ValidationThreshold int            `json:"validation_threshold"`
		Timeline            exportTimeline `json:"timeline"`
		Frozen              bool           `json:"frozen"`
		Revealed            bool           `json:"revealed"`
	}
	exportTimeline struct {
		RegistrationAt *time.Time `json:"registration_at"`
		StartsAt       *time.Time `json:"starts_at"`
		FreezesAt      *time.Time `json:"freezes_at"`
		EndsAt         *time.Time `json:"ends_at"`
		RevealsAt      *time.Time `json:"reveals_at"`
	}
	exportTeam struct {
		ID               int64     `json:"id"`
		Name             string    `json:"name"`
		Bracket          string    `json:"bracket"`
		Hidden           bool      `json:"hidden"`
		ExtraTimeSeconds float64   `json:"extra_time_seconds"`
		Disqualified     bool      `json:"disqualified"`
		DQReason         string    `json:"dq_reason"`
		Target           string    `json:"target"`
		CreatedAt        time.Time `json:"created_at"`
		Members          []string  `json:"members"`
		// Servers are the servers the organiser gave the team.
		Servers []exportServer `json:"servers"`
	}
	exportServer struct {
		ID        int64     `json:"id"`
		URL       string    `json:"url"`
		Label     string    `json:"label"`
		CreatedAt time.Time `json:"created_at"`
	}
	exportAccount struct {
		ID        int64       `json:"id"`
		Login     string      `json:"login"`
		Role      portal.Role `json:"role"`
		TeamID    int64       `json:"team_id,omitempty"`
		CreatedAt time.Time   `json:"created_at"`
		// Name and Email are the team import's, "" when not given.
		Name  string `json:"name"`
		Email string `json:"email"`
	}
	exportToken struct {
		ID         int64      `json:"id"`
		TeamID     int64      `json:"team_id"`
		Name       string     `json:"name"`
		CreatedBy  string     `json:"created_by"`
		CreatedAt  time.Time  `json:"created_at"`
		LastUsedAt *time.Time `json:"last_used_at"`
	}
	exportBoard struct {
		Bracket string           `json:"bracket"`
		Rows    []exportStanding `json:"rows"`
	}
	exportStanding struct {
		apiRow
		Hidden bool `json:"hidden"`
	}
	exportJob struct {
		ID          int64           `json:"id"`
		TeamID      int64           `json:"team_id"`
		Kind        portal.JobKind  `json:"kind"`
		Problem     string          `json:"problem"`
		Target      string          `json:"target"`
		State       portal.JobState `json:"state"`
		Verdict     portal.Verdict  `json:"verdict"`
		Score       *float64        `json:"score"`
		Messages    []string        `json:"messages"`
		ErrorCode   string          `json:"error_code"`
		Error       string          `json:"error"`
		CreatedAt   time.Time       `json:"created_at"`
		StartedAt   *time.Time      `json:"started_at"`
		FinishedAt  *time.Time      `json:"finished_at"`
		Worker      string          `json:"worker"`
		Attempts    int             `json:"attempts"`
		MaxAttempts int             `json:"max_attempts"`
		RerunOf     int64           `json:"rerun_of,omitempty"`
		Result      json.RawMessage `json:"result"`
	}
	exportAnnouncement struct {
		ID   int64     `json:"id"`
		At   time.Time `json:"at"`
		By   string    `json:"by"`
		Text string    `json:"text"`
	}
	// exportClarification is a clarification as staff see it: Original
	// is the question as asked, Question as shown to the teams.
	exportClarification struct {
		ID         int64      `json:"id"`
		TeamID     int64      `json:"team_id"`
		AskedBy    string     `json:"asked_by"`
		AskedAt    time.Time  `json:"asked_at"`
		Original   string     `json:"original"`
		Question   string     `json:"question"`
		Answer     string     `json:"answer"`
		AnsweredAt *time.Time `json:"answered_at"`
		AnsweredBy string     `json:"answered_by"`
		Published  bool       `json:"published"`
	}
	// exportValidation is a team's line of the validation page: its final
	// score beside its latest validation run (job 0: none).
	exportValidation struct {
		TeamID          int64                  `json:"team_id"`
		FinalScore      *float64               `json:"final_score"`
		Job             int64                  `json:"job"`
		ValidationScore *float64               `json:"validation_score"`
		Ratio           float64                `json:"ratio"`
		State           portal.ValidationState `json:"state"`
		Flagged         bool                   `json:"flagged"`
	}
)

// exporter writes one JSON object a field at a time, each value with an
// encoder of its own; the first error stops it.
type exporter struct {
	w     io.Writer
	enc   *json.Encoder
	first bool
	err   error
}

func (e *exporter) name(name string) {
	if e.err != nil {
		return
	}
	sep := ",\n"
	if e.first {
		sep, e.first = "{\n", false
	}
	key, _ := json.Marshal(name)
	_, e.err = fmt.Fprintf(e.w, "%s%s: ", sep, key)
}

// field writes "name": value.
func (e *exporter) field(name string, v any) {
	e.name(name)
	if e.err == nil {
		e.err = e.enc.Encode(v)
	}
}

// array writes "name": [...], its elements as each calls emit.
func (e *exporter) array(name string, each func(emit func(any) error) error) {
	e.name(name)
	if e.err != nil {
		return
	}
	n := 0
	emit := func(v any) error {
		sep := ",\n"
		if n == 0 {
			sep = "[\n"
		}
		n++
		if _, err := io.WriteString(e.w, sep); err != nil {
			return err
		}
		return e.enc.Encode(v)
	}
	if e.err = each(emit); e.err != nil {
		return
	}
	end := "]"
	if n == 0 {
		end = "[]"
	}
	_, e.err = io.WriteString(e.w, end)
}

// contestExport is GET /admin/export.json: the whole contest as one JSON
// document, for the archive at the end (allowed at any time): its settings
// and timeline, teams, accounts, API tokens, the live boards, each team's
// validation, every job with its result, the announcements, every
// clarification, and the audit log, ending with "complete": true. It is
// written as it is read (the jobs ExportPage at a time), so it is not one
// snapshot: jobs that end while it is written may be read in either state.
func (s *Server) contestExport(w http.ResponseWriter, r *http.Request, v viewer) error {
	ctx := r.Context()
	d, err := s.readExport(r)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", `attachment; filename="tunecon-contest.json"`)
	e := &exporter{w: w, enc: json.NewEncoder(w), first: true}
	e.field("format", "tunecon-contest")
	e.field("version", ExportVersion)
	e.field("exported_at", now.UTC())
	e.field("contest", exportContestOf(d.contest, now))
	e.array("teams", d.teams)
	e.array("accounts", d.accounts)
	e.array("api_tokens", d.apiTokens)
	e.array("boards", d.boards)
	e.array("validation", d.validation)
	e.array("jobs", func(emit func(any) error) error { return s.exportJobs(ctx, emit) })
	e.array("announcements", d.announcements)
	e.array("clarifications", d.clarifications)
	e.array("audit_log", d.auditLog)
	e.field("complete", true)
	if e.err == nil {
		_, e.err = io.WriteString(w, "}\n")
	}
	if e.err != nil && ctx.Err() == nil {
		s.cfg.Logger.Error("writing the contest export", "err", e.err)
	}
	return nil
}

// exportData is what the export reads before it writes its first byte
// (all but the jobs): until then an error is the page's.
type exportData struct {
	contest     portal.Contest
	teamList    []portal.Team
	accountList []portal.Account
	serverList  []portal.Server
	tokens      []portal.APIToken
	standings   []portal.Standing
	announced   []portal.Announcement
	clarified   []portal.Clarification
	validations map[int64]portal.Job
	audit       []portal.AuditEntry
}

// readExport reads the export's data, stopping at the first error.
func (s *Server) readExport(r *http.Request) (exportData, error) {
	ctx := r.Context()
	var d exportData
	for _, read := range []func() error{
		func() (err error) { d.contest, err = s.contest(r); return err },
		func() (err error) { d.teamList, err = s.store.Teams(ctx); return err },
		func() (err error) { d.accountList, err = s.store.Accounts(ctx); return err },
		func() (err error) { d.serverList, err = s.store.Servers(ctx); return err },
		func() (err error) { d.tokens, err = s.store.APITokens(ctx, 0); return err },
		func() (err error) {
			d.standings, err = s.store.Leaderboard(ctx, store.BoardOptions{Rule: d.contest.Settings.Rule()})
			return err
		},
		func() (err error) { d.announced, err = s.store.Announcements(ctx); return err },
		func() (err error) { d.clarified, err = s.store.Clarifications(ctx, store.Seen{All: true}); return err },
		func() (err error) { d.validations, err = s.store.LatestValidations(ctx); return err },
		func() (err error) { d.audit, err = s.store.AuditLog(ctx); return err },
	} {
		if err := read(); err != nil {
			return exportData{}, err
		}
	}
	return d, nil
}

// exportContestOf is the contest's section as it stands at now.
func exportContestOf(c portal.Contest, now time.Time) exportContest {
	t := c.Timeline
	return exportContest{Problem: c.Problem, LoadSeconds: c.LoadDuration.Seconds(), Ranking: c.Settings.Rule(),
		Brackets: orEmpty(c.Settings.Brackets), TeamSize: c.Settings.TeamSize(), LocalTargets: c.Settings.LocalTargets,
		AssignedServers: c.Settings.AssignedServers,
		TargetNetworks:  portal.CIDRs(c.Settings.TargetNetworks),
		MaxAttempts:     c.Settings.Attempts(), Seed: c.Settings.Seed, ValidationThreshold: c.Settings.Threshold(), Frozen: c.Frozen(now), Revealed: c.Revealed(now),
		Timeline: exportTimeline{RegistrationAt: timeOrNull(t.RegistrationAt), StartsAt: timeOrNull(t.StartsAt),
			FreezesAt: timeOrNull(t.FreezesAt), EndsAt: timeOrNull(t.EndsAt), RevealsAt: timeOrNull(t.RevealsAt)}}
}

// teams emits the teams, each with its members' logins and its servers.
func (d exportData) teams(emit func(any) error) error {
	members := map[int64][]string{}
	for _, a := range d.accountList {
		if a.TeamID != 0 {
			members[a.TeamID] = append(members[a.TeamID], a.Login)
		}
	}
	servers := map[int64][]exportServer{}
	for _, s := range d.serverList {
		servers[s.TeamID] = append(servers[s.TeamID], exportServer{ID: s.ID, URL: s.URL, Label: s.Label, CreatedAt: s.CreatedAt.UTC()})
	}
	for _, t := range d.teamList {
		err := emit(exportTeam{ID: t.ID, Name: t.Name, Bracket: t.Bracket, Hidden: t.Hidden,
			ExtraTimeSeconds: t.ExtraTime.Seconds(), Disqualified: t.Disqualified, DQReason: t.DQReason,
			Target: t.Target, CreatedAt: t.CreatedAt.UTC(), Members: orEmpty(members[t.ID]), Servers: orEmpty(servers[t.ID])})
		if err != nil {
			return err
		}
	}
	return nil
}

func (d exportData) accounts(emit func(any) error) error {
	for _, a := range d.accountList {
		if err := emit(exportAccount{ID: a.ID, Login: a.Login, Role: a.Role, TeamID: a.TeamID, CreatedAt: a.CreatedAt.UTC(),
			Name: a.Name, Email: a.Email}); err != nil {
			return err
		}
	}
	return nil
}

func (d exportData) apiTokens(emit func(any) error) error {
	for _, t := range d.tokens {
		err := emit(exportToken{ID: t.ID, TeamID: t.TeamID, Name: t.Name, CreatedBy: t.CreatedBy,
			CreatedAt: t.CreatedAt.UTC(), LastUsedAt: timeOrNull(t.LastUsedAt)})
		if err != nil {
			return err
		}
	}
	return nil
}

// boards emits the boards as they stand now, live (hidden teams marked,
// unranked).
func (d exportData) boards(emit func(any) error) error {
	for _, bracket := range append([]string{""}, d.contest.Settings.Brackets...) {
		board := portal.Board(d.standings, bracket, true)
		rows := make([]exportStanding, len(board))
		for i, st := range board {
			rows[i] = exportStanding{apiRow: rowOf(st), Hidden: st.Hidden}
		}
		if err := emit(exportBoard{Bracket: bracket, Rows: rows}); err != nil {
			return err
		}
	}
	return nil
}

// validation emits each team's validation, in the live board's order, as
// on /admin/validation.
func (d exportData) validation(emit func(any) error) error {
	for _, st := range portal.Board(d.standings, "", true) {
		l := portal.Validate(st, d.validations[st.TeamID], d.contest.Settings.Threshold())
		line := exportValidation{TeamID: st.TeamID, Job: l.Job.ID, Ratio: l.Ratio, State: l.State, Flagged: l.Flagged()}
		if st.Passed {
			score := st.Score
			line.FinalScore = &score
		}
		if l.Job.State == portal.JobFinished {
			score := l.Job.Score
			line.ValidationScore = &score
		}
		if err := emit(line); err != nil {
			return err
		}
	}
	return nil
}

// exportJobs emits every job, reading them ExportPage at a time.
func (s *Server) exportJobs(ctx context.Context, emit func(any) error) error {
	for after := int64(0); ; {
		jobs, err := s.store.JobsAfter(ctx, after, ExportPage)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if err := emit(exportJobOf(j)); err != nil {
				return err
			}
			after = j.ID
		}
		if len(jobs) < ExportPage {
			return nil
		}
	}
}

// announcements emits the announcements, the oldest first.
func (d exportData) announcements(emit func(any) error) error {
	for i := len(d.announced) - 1; i >= 0; i-- {
		a := d.announced[i]
		if err := emit(exportAnnouncement{ID: a.ID, At: a.At.UTC(), By: a.By, Text: a.Text}); err != nil {
			return err
		}
	}
	return nil
}

// clarifications emits every clarification, the oldest first.
func (d exportData) clarifications(emit func(any) error) error {
	for i := len(d.clarified) - 1; i >= 0; i-- {
		cl := d.clarified[i]
		err := emit(exportClarification{ID: cl.ID, TeamID: cl.TeamID, AskedBy: cl.AskedBy, AskedAt: cl.AskedAt.UTC(),
			Original: cl.Original, Question: cl.Question, Answer: cl.Answer, AnsweredAt: timeOrNull(cl.AnsweredAt),
			AnsweredBy: cl.AnsweredBy, Published: cl.Published})
		if err != nil {
			return err
		}
	}
	return nil
}

func (d exportData) auditLog(emit func(any) error) error {
	for _, entry := range d.audit {
		if err := emit(entry); err != nil {
			return err
		}
	}
	return nil
}

func exportJobOf(j portal.Job) exportJob {
	out := exportJob{ID: j.ID, TeamID: j.TeamID, Kind: j.Kind, Problem: j.Problem, Target: j.Target, State: j.State,
		Verdict: j.Verdict, Messages: orEmpty(j.Messages), ErrorCode: j.ErrorCode, Error: j.Error,
		CreatedAt: j.CreatedAt.UTC(), StartedAt: timeOrNull(j.StartedAt), FinishedAt: timeOrNull(j.FinishedAt),
		Worker: j.Worker, Attempts: j.Attempts, MaxAttempts: j.MaxAttempts, RerunOf: j.RerunOf, Result: j.Result}
	if j.State == portal.JobFinished {
		score := j.Score
		out.Score = &score
	}
	if len(out.Result) == 0 {
		out.Result = json.RawMessage("null")
	}
	return out
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
