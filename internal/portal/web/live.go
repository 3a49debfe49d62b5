package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
)

// What the live pages are fed: one loop reads the jobs and the boards, and
// another the notices' fingerprint, for every viewer; each open page's
// event stream sends its viewer what changed.

// KeepAliveEvery is how often a quiet event stream sends a comment, so that
// proxies keep it open.
const KeepAliveEvery = 15 * time.Second

// live is what the live pages show, read from the database by one loop for
// every viewer: the active jobs with their progress and queue positions, and
// the leaderboard's boards, read again only when a job has finished, a team
// was added, the contest or a team's place changed, or the freeze began or
// ended. Viewers wait on tick, which is closed and replaced at each read.
type live struct {
	store *store.Store
	every time.Duration
	now   func() time.Time
	log   *slog.Logger

	// row renders a leaderboard line (Server.boardRow).
	row func(s portal.Standing, own, staff, brackets bool) (string, error)

	mu        sync.Mutex
	tick      chan struct{}
	loaded    bool
	jobs      map[int64]portal.Job // queued and running, by id
	positions map[int64]int
	boardKey  string
	boards    *boards // what the leaderboard pages show, built once per change
	pace      pace
	timeline  portal.Timeline // the contest's, for every page's countdown

	// first serializes the builds of the boards asked for before the
	// loop's first read: hundreds of browsers at the start build them once.
	first sync.Mutex
}

// boards are the leaderboard's every board, made once each time they change
// rather than for each of hundreds of viewers.
type boards struct {
	// key is the fingerprint they were built at (boardKey).
	key      string
	timeline portal.Timeline
	// frozen: the public boards stand as they did at the freeze.
	frozen   bool
	revealed bool
	brackets []string
	// staff are the live boards, hidden teams too, by bracket ("": every
	// team); public are what everyone else sees: frozen during a freeze,
	// without hidden teams.
	staff, public map[string]*boardView
	// final is every team's live standing, and points every passed job,
	// by team: a team's own line and chart during a freeze, the ceremony.
	final  []portal.Standing
	own    map[int64]portal.Standing
	points map[int64][][2]float64
}

// boardView is one board in the forms its pages serve.
type boardView struct {
	standings []portal.Standing
	// rows are the table's lines as HTML, plain and as the viewer's own.
	rows, ownRows []string
	index         map[int64]int // team id -> line
	event         []byte        // the "board" event's JSON
	// points are the chart's, by team: at a freeze, those before it.
	points map[int64][][2]float64
}

// view is the board a viewer sees: staff's live one or the public one, of
// a bracket ("" for every team); CodeNotFound for a bracket the contest
// does not have.
func (b *boards) view(bracket string, staff bool) (*boardView, error) {
	m := b.public
	if staff {
		m = b.staff
	}
	v, ok := m[bracket]
	if !ok {
		return nil, portal.Errorf(portal.CodeNotFound, "no bracket %q", bracket)
	}
	return v, nil
}

func newLive(s *store.Store, every time.Duration, now func() time.Time, log *slog.Logger,
	row func(portal.Standing, bool, bool, bool) (string, error)) *live {
	return &live{store: s, every: every, now: now, log: log, row: row, tick: make(chan struct{})}
}

// timeline reads the contest's times and brackets (none before it is set
// up).
func (l *live) contest(ctx context.Context) (portal.Contest, error) {
	c, err := l.store.Contest(ctx)
	if portal.ErrorCode(err) == portal.CodeNotFound {
		return portal.Contest{}, nil
	}
	return c, err
}

// buildBoards reads the leaderboard, live and (during a freeze) as it
// stood at the freeze, and the score history, and renders every board.
func (l *live) buildBoards(ctx context.Context, key string, c portal.Contest) (*boards, error) {
	now := l.now()
	rule := c.Settings.Rule()
	all, err := l.store.Leaderboard(ctx, store.BoardOptions{Rule: rule})
	if err != nil {
		return nil, err
	}
	history, err := l.store.ScoreHistory(ctx)
	if err != nil {
		return nil, err
	}
	b := &boards{key: key, timeline: c.Timeline, frozen: c.Frozen(now), revealed: c.Revealed(now),
		brackets: c.Settings.Brackets, staff: map[string]*boardView{}, public: map[string]*boardView{},
		final: portal.Board(all, "", false), own: make(map[int64]portal.Standing, len(all)), points: map[int64][][2]float64{}}
	for _, s := range all {
		b.own[s.TeamID] = s
	}
	frozenPoints := map[int64][][2]float64{}
	for _, p := range history {
		pt := [2]float64{float64(p.At.Unix()), p.Score}
		b.points[p.TeamID] = append(b.points[p.TeamID], pt)
		if p.At.Before(c.FreezesAt) {
			frozenPoints[p.TeamID] = append(frozenPoints[p.TeamID], pt)
		}
	}
	public, publicPoints := all, b.points
	if b.frozen {
		if public, err = l.store.Leaderboard(ctx, store.BoardOptions{Rule: rule, Before: c.FreezesAt}); err != nil {
			return nil, err
		}
		publicPoints = frozenPoints
	}
	withColumn := len(b.brackets) > 0
	for _, bracket := range append([]string{""}, b.brackets...) {
		column := withColumn && bracket == ""
		if b.staff[bracket], err = l.render(portal.Board(all, bracket, true), b.points, true, column); err != nil {
			return nil, err
		}
		if b.public[bracket], err = l.render(portal.Board(public, bracket, false), publicPoints, false, column); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// render makes a board's forms.
func (l *live) render(board []portal.Standing, points map[int64][][2]float64, staff, brackets bool) (*boardView, error) {
	v := &boardView{standings: board, rows: make([]string, len(board)), ownRows: make([]string, len(board)),
		index: make(map[int64]int, len(board)), points: points}
	rows := make([]boardRow, len(board))
	var err error
	for i, b := range board {
		if v.rows[i], err = l.row(b, false, staff, brackets); err != nil {
			return nil, err
		}
		if staff {
			v.ownRows[i] = v.rows[i] // admins are in no team
		} else if v.ownRows[i], err = l.row(b, true, false, brackets); err != nil {
			return nil, err
		}
		v.index[b.TeamID] = i
		rows[i] = boardRow{Rank: b.Rank, TeamID: b.TeamID, Team: b.Team, Passed: b.Passed, Score: b.Score, Runs: b.Runs}
		if brackets {
			rows[i].Bracket = &board[i].Bracket
		}
		if staff && b.Hidden {
			rows[i].Hidden = true
		}
		// A disqualified team is struck on every board; its reason only
		// on staff's (its own members see it on their pages).
		rows[i].DQ = b.Disqualified
		if staff {
			rows[i].DQReason = b.DQReason
		}
	}
	if v.event, err = json.Marshal(rows); err != nil {
		return nil, err
	}
	return v, nil
}

func (l *live) run(ctx context.Context) {
	t := time.NewTicker(l.every)
	defer t.Stop()
	for {
		if err := l.refresh(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn("reading the live pages' state", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// boardKey is the fingerprint of what the boards show: the store's changes
// and, the clock passing the freeze or the reveal, whether they are frozen.
func (l *live) key(ctx context.Context) (string, portal.Contest, error) {
	changes, err := l.store.Changes(ctx)
	if err != nil {
		return "", portal.Contest{}, err
	}
	c, err := l.contest(ctx)
	if err != nil {
		return "", c, err
	}
	now := l.now()
	return fmt.Sprintf("%s/%t/%t", changes, c.Frozen(now), c.Revealed(now)), c, nil
}

func (l *live) refresh(ctx context.Context) error {
	active, err := l.store.Jobs(ctx, portal.JobQueued, portal.JobRunning)
	if err != nil {
		return err
	}
	positions, err := l.store.Positions(ctx)
	if err != nil {
		return err
	}
	key, c, err := l.key(ctx)
	if err != nil {
		return err
	}
	l.mu.Lock()
	b, p := l.boards, l.pace
	l.mu.Unlock()
	rebuilt := b == nil || b.key != key
	if rebuilt {
		if b, err = l.buildBoards(ctx, key, c); err != nil {
			return err
		}
	}
	// The typical job's time changes when a job ends, as the boards do.
	if rebuilt || p.typical == 0 {
		times, err := l.store.RecentJobTimes(ctx, paceJobs)
		if err != nil {
			return err
		}
		p.typical = typicalJob(times, c)
	}
	p.running = 0
	jobs := make(map[int64]portal.Job, len(active))
	for _, j := range active {
		jobs[j.ID] = j.ForContestant()
		if j.State == portal.JobRunning {
			p.running++
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.jobs, l.positions, l.boards, l.boardKey, l.pace, l.loaded = jobs, positions, b, key, p, true
	l.timeline = c.Timeline
	close(l.tick)
	l.tick = make(chan struct{})
	return nil
}

// next is closed at the next read.
func (l *live) next() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tick
}

// job returns an active job as last read, and whether it was active.
func (l *live) job(id int64) (portal.Job, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	j, ok := l.jobs[id]
	return j, ok && l.loaded
}

// pace is what the estimates of a job's times are made of: how long a
// benchmark typically takes (the median of the last paceJobs finished),
// and how many run at once (while some wait, every worker is busy).
type pace struct {
	typical time.Duration
	running int
}

// paceJobs is how many recent jobs the typical job's time is taken from.
const paceJobs = 25

// typicalOverhead is a guess at a job's time besides its load (the checks
// before and after it, the worker's work), until a job has finished.
const typicalOverhead = 15 * time.Second

// typicalJob is the median of times, or a guess from the contest's load
// when there is none.
func typicalJob(times []time.Duration, c portal.Contest) time.Duration {
	if len(times) == 0 {
		return c.Timing().Load + typicalOverhead
	}
	sorted := slices.Clone(times)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

// jobTimes are a job's times as its page shows them: for a running job
// how long it has run and about how long it has left, for a queued one
// about how long before it starts.
type jobTimes struct {
	Started time.Time // zero until it runs
	Elapsed time.Duration
	Left    time.Duration
	Wait    time.Duration // 0: not known (not queued, or no place yet)
	Typical time.Duration
}

// times estimates a job's times from its state and place in the queue.
func (l *live) times(j portal.Job, position int) jobTimes {
	l.mu.Lock()
	p := l.pace
	l.mu.Unlock()
	if p.typical == 0 {
		p.typical = typicalOverhead + engine.DefaultLoadDuration
	}
	t := jobTimes{Typical: p.typical}
	switch {
	case j.State == portal.JobRunning && !j.StartedAt.IsZero():
		t.Started = j.StartedAt
		t.Elapsed = max(0, l.now().Sub(j.StartedAt))
		t.Left = max(0, p.typical-t.Elapsed)
	case j.State == portal.JobQueued && position > 0:
		// The jobs ahead leave the queue as many at a time as run now.
		rounds := (position + max(p.running, 1) - 1) / max(p.running, 1)
		t.Wait = time.Duration(rounds) * p.typical
	}
	return t
}

// Text says the times as the page shows them (portal.js says them the
// same way as they move).
func (t jobTimes) Text() string {
	switch {
	case !t.Started.IsZero() && t.Left >= time.Second/2:
		return clock(t.Elapsed) + " elapsed, about " + clock(t.Left) + " left"
	case !t.Started.IsZero():
		return clock(t.Elapsed) + " elapsed, finishing"
	case t.Wait > 0:
		return "starts in about " + clock(t.Wait)
	}
	return "—"
}

// event is the times as a progress event carries them.
func (t jobTimes) event() (started int64, wait, typical float64) {
	if !t.Started.IsZero() {
		started = t.Started.UnixMilli()
	}
	return started, t.Wait.Seconds(), t.Typical.Seconds()
}

// clock is a duration as minutes and seconds, 1:05.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// upcoming is the contest's next event after now, as last read (nil when
// none is set ahead).
func (l *live) upcoming(now time.Time) *nextEvent {
	l.mu.Lock()
	t := l.timeline
	l.mu.Unlock()
	for _, e := range portal.Events() {
		at, _ := t.At(e)
		if at.After(now) {
			return &nextEvent{What: eventName(e), At: *at, In: at.Sub(now)}
		}
	}
	return nil
}

// nextEvent is the countdown in every page's header.
type nextEvent struct {
	What string
	At   time.Time
	In   time.Duration
}

// eventName says what an event of the timeline is, in the countdown.
func eventName(e portal.Event) string {
	switch e {
	case portal.EventRegistration:
		return "Registration opens"
	case portal.EventStart:
		return "The contest starts"
	case portal.EventFreeze:
		return "The board freezes"
	case portal.EventEnd:
		return "The contest ends"
	}
	return "The final board is out"
}

// Countdown is the time left as the header shows it: 2d 03:04:05, or
// 03:04:05 within a day (portal.js counts it down the same way).
func (n nextEvent) Countdown() string {
	s := int64(n.In.Round(time.Second) / time.Second)
	hms := fmt.Sprintf("%02d:%02d:%02d", s/3600%24, s/60%60, s%60)
	if d := s / 86400; d > 0 {
		return fmt.Sprintf("%dd %s", d, hms)
	}
	return hms
}

func (l *live) position(id int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.positions[id]
}

// current is the boards as last read (read now before the first read).
func (l *live) current(ctx context.Context) (*boards, error) {
	l.mu.Lock()
	b := l.boards
	l.mu.Unlock()
	if b != nil {
		return b, nil
	}
	l.first.Lock()
	defer l.first.Unlock()
	l.mu.Lock()
	b = l.boards
	l.mu.Unlock()
	if b != nil {
		return b, nil
	}
	key, c, err := l.key(ctx)
	if err != nil {
		return nil, err
	}
	if b, err = l.buildBoards(ctx, key, c); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.boards == nil {
		l.boards = b // boardKey stays "": the loop reads them again
	}
	return b, nil
}

// stream is a server-sent event stream.
type stream struct {
	w http.ResponseWriter
	f *http.ResponseController
}

func startStream(w http.ResponseWriter) *stream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx in front: do not hold events back
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, f: http.NewResponseController(w)}
	_ = st.f.Flush() // the headers now: the browser knows the stream is open
	return st
}

func (s *stream) send(event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return s.sendJSON(event, b)
}

// sendJSON sends an event whose data is JSON already (one line).
func (s *stream) sendJSON(event string, data []byte) error {
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", event, data); err != nil {
		return err
	}
	return s.f.Flush()
}

// wait waits for the live state's next read, sending a keep-alive comment
// at each tick of keep meanwhile; false means the stream is over (the
// browser left, or a write failed).
func (s *stream) wait(ctx context.Context, keep *time.Ticker, next <-chan struct{}) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-next:
			return true
		case <-keep.C:
			if _, err := fmt.Fprint(s.w, ": keep-alive\n\n"); err != nil || s.f.Flush() != nil {
				return false
			}
		}
	}
}

// progressEvent is a job's state on its page.
type progressEvent struct {
	State    portal.JobState `json:"state"`
	Position int             `json:"position"`
	// Started is when the job started (Unix milliseconds, 0 before);
	// Wait and Typical are jobTimes' (seconds): the page counts the
	// seconds between events itself.
	Started  int64   `json:"started"`
	Wait     float64 `json:"wait_s"`
	Typical  float64 `json:"typical_s"`
	Phase    string  `json:"phase"`
	Score    float64 `json:"score"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Users    int     `json:"users"`
}

// jobEvents streams a job's progress ("progress" events) until it ends
// ("done", with its final state: the page then loads its result).
func (s *Server) jobEvents(w http.ResponseWriter, r *http.Request, v viewer) error {
	j, err := s.teamJob(r, v)
	if err != nil {
		return err
	}
	st := startStream(w)
	var last progressEvent
	keep := time.NewTicker(KeepAliveEvery)
	defer keep.Stop()
	for first := true; ; first = false {
		next := s.live.next()
		cur, active := s.live.job(j.ID)
		if !active && !first || j.State.Final() {
			fin, err := s.store.Job(r.Context(), j.ID)
			if err != nil {
				// The browser reconnects on its own; a stream that kept
				// asking a failing database would only add to its load.
				if r.Context().Err() == nil {
					s.cfg.Logger.Warn("reading a job for its stream", "job", j.ID, "err", err)
				}
				return nil
			}
			if fin.State.Final() {
				_ = st.send("done", map[string]any{"state": fin.State, "verdict": fin.Verdict, "score": fin.Score})
				return nil
			}
		}
		if active {
			p := cur.Progress
			pos := s.live.position(j.ID)
			ev := progressEvent{State: cur.State, Position: pos, Phase: p.Phase, Score: p.Score,
				Requests: p.Requests, Errors: p.Errors, Users: p.Users}
			ev.Started, ev.Wait, ev.Typical = s.live.times(cur, pos).event()
			if ev != last || first {
				if st.send("progress", ev) != nil {
					return nil
				}
				last = ev
			}
		}
		if !st.wait(r.Context(), keep, next) {
			return nil
		}
	}
}

// boardRow is a leaderboard line in an event.
type boardRow struct {
	Rank   int     `json:"rank"`
	TeamID int64   `json:"team_id"`
	Team   string  `json:"team"`
	Passed bool    `json:"passed"`
	Score  float64 `json:"score"`
	Runs   int     `json:"runs"`
	// Bracket is set on the board of every bracket of a contest that has
	// some; Hidden on staff's board.
	Bracket *string `json:"bracket,omitempty"`
	Hidden  bool    `json:"hidden,omitempty"`
	// DQ marks a disqualified team; DQReason is on staff's board only.
	DQ       bool   `json:"dq,omitempty"`
	DQReason string `json:"dq_reason,omitempty"`
}

// ownLine is a team's own live line, sent to its members during a freeze.
type ownLine struct {
	Passed bool    `json:"passed"`
	Score  float64 `json:"score"`
	Runs   int     `json:"runs"`
}

// boardFor is the boards and the board a request asks for: its bracket
// (?bracket=, "" for every team), live for admins, public for the others.
func (s *Server) boardFor(r *http.Request, v viewer) (*boards, *boardView, error) {
	b, err := s.live.current(r.Context())
	if err != nil {
		return nil, nil, err
	}
	view, err := b.view(r.URL.Query().Get("bracket"), v.Admin())
	return b, view, err
}

// leaderboardEvents streams the viewer's board ("board" events: {frozen,
// rows}) each time it changes, and during a freeze a team member's own
// live line ("own" events) each time it changes.
func (s *Server) leaderboardEvents(w http.ResponseWriter, r *http.Request, v viewer) error {
	bracket := r.URL.Query().Get("bracket")
	if _, _, err := s.boardFor(r, v); err != nil {
		return err
	}
	st := startStream(w)
	keep := time.NewTicker(KeepAliveEvery)
	defer keep.Stop()
	var (
		lastKey   string
		lastEvent []byte
		lastOwn   *ownLine
	)
	for {
		next := s.live.next()
		s.live.mu.Lock()
		b, loaded := s.live.boards, s.live.loaded
		s.live.mu.Unlock()
		if loaded && b.key != lastKey {
			view, err := b.view(bracket, v.Admin())
			if err != nil {
				return nil // the bracket is gone
			}
			// The same board is not sent again: during a freeze a repeat
			// would tell the viewer that some team's job has just ended.
			event := fmt.Appendf(nil, `{"frozen":%t,"rows":%s}`, b.frozen && !v.Admin(), view.event)
			if !bytes.Equal(event, lastEvent) {
				if st.sendJSON("board", event) != nil {
					return nil
				}
				lastEvent = event
			}
			lastKey = b.key
			if own, ok := b.own[v.TeamID]; ok && b.frozen && v.TeamID != 0 {
				line := ownLine{Passed: own.Passed, Score: own.Score, Runs: own.Runs}
				if lastOwn == nil || *lastOwn != line {
					if st.send("own", line) != nil {
						return nil
					}
					lastOwn = &line
				}
			}
		}
		if !st.wait(r.Context(), keep, next) {
			return nil
		}
	}
}

// Announcements and clarifications: staff post announcements (Markdown) that
// every page's viewer is told of; teams ask questions that staff answer,
// privately or for every team. One loop polls the database's fingerprint of
// both (store.NoticeChanges); each open page's stream (/notices/events)
// then sends its viewer's counts and what its lists show, when they change.

// notices is the loop's last reading of the fingerprint. Streams wait on
// tick, which is closed and replaced each time it changes.
type notices struct {
	store *store.Store
	every time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	tick    chan struct{}
	changes store.NoticeChanges
	loaded  bool
}

func newNotices(s *store.Store, every time.Duration, log *slog.Logger) *notices {
	return &notices{store: s, every: every, log: log, tick: make(chan struct{})}
}

func (n *notices) run(ctx context.Context) {
	t := time.NewTicker(n.every)
	defer t.Stop()
	for {
		changes, err := n.store.NoticeChanges(ctx)
		if err != nil && ctx.Err() == nil {
			n.log.Warn("reading the notices' changes", "err", err)
		}
		if err == nil {
			n.mu.Lock()
			if !n.loaded || changes != n.changes {
				n.changes, n.loaded = changes, true
				close(n.tick)
				n.tick = make(chan struct{})
			}
			n.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// current is the fingerprint as last read, and the channel closed when it
// next changes.
func (n *notices) current() (store.NoticeChanges, bool, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.changes, n.loaded, n.tick
}

// notice is what every page's layout shows a signed-in viewer: the unread
// announcements, and to staff the questions waiting for an answer.
type notice struct {
	Unread     int
	Unanswered int
	// Answered counts a team member's team's answered questions: the
	// page's script shows how many of them this browser has not seen on
	// the clarifications page (it keeps the count it saw there).
	Answered int
}

// noticeFor counts the viewer's notices; a failure is logged and shows
// none (a page never fails for its notice).
func (s *Server) noticeFor(r *http.Request, v viewer) notice {
	if !v.signedIn() {
		return notice{}
	}
	n, err := s.store.NoticesFor(r.Context(), v.ID, v.Admin())
	answered := 0
	if err == nil && v.TeamID != 0 && !v.Admin() {
		answered, err = s.store.AnsweredFor(r.Context(), v.TeamID)
	}
	if err != nil {
		if r.Context().Err() == nil {
			s.cfg.Logger.Warn("counting a viewer's notices", "account", v.ID, "err", err)
		}
		return notice{}
	}
	return notice{Unread: n.Unread, Unanswered: n.Unanswered, Answered: answered}
}

// seen is whose clarifications the viewer sees: staff every one, a team
// member the published ones and the team's own, anyone else signed in the
// published ones.
func seen(v viewer) store.Seen { return store.Seen{All: v.Admin(), TeamID: v.TeamID} }

// noticeEvent is the "notices" event: the newest announcement's id, the
// viewer's unread announcements and (staff) unanswered questions, and the
// fingerprint of the clarifications the viewer sees (signed in only).
type noticeEvent struct {
	Latest         int64  `json:"latest"`
	Unread         int    `json:"unread"`
	Unanswered     int    `json:"unanswered"`
	Answered       int    `json:"answered"` // a team member's (notice.Answered)
	Clarifications string `json:"clarifications,omitempty"`
}

// noticeEvents streams the viewer's "notices" event at once and each time
// it changes.
func (s *Server) noticeEvents(w http.ResponseWriter, r *http.Request, v viewer) error {
	st := startStream(w)
	keep := time.NewTicker(KeepAliveEvery)
	defer keep.Stop()
	var (
		last     *noticeEvent
		lastRead store.NoticeChanges
	)
	for first := true; ; first = false {
		changes, loaded, next := s.notices.current()
		if first || loaded && changes != lastRead {
			ev, err := s.noticeEventFor(r.Context(), v)
			if err != nil {
				if r.Context().Err() == nil {
					s.cfg.Logger.Warn("reading a viewer's notices", "account", v.ID, "err", err)
				}
				return nil // the browser reconnects on its own
			}
			if last == nil || *last != ev {
				if st.send("notices", ev) != nil {
					return nil
				}
				last = &ev
			}
			lastRead = changes
		}
		if !st.wait(r.Context(), keep, next) {
			return nil
		}
	}
}

func (s *Server) noticeEventFor(ctx context.Context, v viewer) (noticeEvent, error) {
	changes, err := s.store.NoticeChanges(ctx)
	if err != nil {
		return noticeEvent{}, err
	}
	ev := noticeEvent{Latest: changes.LastAnnouncement}
	if !v.signedIn() {
		return ev, nil
	}
	n, err := s.store.NoticesFor(ctx, v.ID, v.Admin())
	if err != nil {
		return ev, err
	}
	ev.Unread, ev.Unanswered = n.Unread, n.Unanswered
	if v.TeamID != 0 && !v.Admin() {
		if ev.Answered, err = s.store.AnsweredFor(ctx, v.TeamID); err != nil {
			return ev, err
		}
	}
	ev.Clarifications, err = s.store.ClarificationsKey(ctx, seen(v))
	return ev, err
}
