package web

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
)

// KeepAliveEvery is how often a quiet event stream sends a comment, so that
// proxies keep it open.
const KeepAliveEvery = 15 * time.Second

// live is what the live pages show, read from the database by one loop for
// every viewer: the active jobs with their progress and queue positions, and
// the leaderboard, read again only when a job has finished or a team was
// added. Viewers wait on tick, which is closed and replaced at each read.
type live struct {
	store *store.Store
	every time.Duration
	log   *slog.Logger

	// row renders a leaderboard line (own: the viewer's team).
	row func(s portal.Standing, own bool) (string, error)

	mu        sync.Mutex
	tick      chan struct{}
	loaded    bool
	jobs      map[int64]portal.Job // queued and running, by id
	positions map[int64]int
	boardKey  string
	view      *boardView // what the leaderboard pages show, built once per change

	// first serializes the builds of a view asked for before the loop's
	// first read: hundreds of browsers at the start build it once.
	first sync.Mutex
}

// boardView is the leaderboard in the forms its pages serve, made once each
// time it changes rather than for each of hundreds of viewers.
type boardView struct {
	standings []portal.Standing
	// rows are the table's lines as HTML, plain and as the viewer's own.
	rows, ownRows []string
	index         map[int64]int // team id -> line
	event         []byte        // the "board" event's JSON
	points        map[int64][][2]float64
}

func newLive(s *store.Store, every time.Duration, log *slog.Logger, row func(portal.Standing, bool) (string, error)) *live {
	return &live{store: s, every: every, log: log, row: row, tick: make(chan struct{})}
}

// buildView reads the leaderboard and the score history and renders them.
func (l *live) buildView(ctx context.Context) (*boardView, error) {
	board, err := l.store.Leaderboard(ctx)
	if err != nil {
		return nil, err
	}
	history, err := l.store.ScoreHistory(ctx)
	if err != nil {
		return nil, err
	}
	v := &boardView{standings: board, rows: make([]string, len(board)), ownRows: make([]string, len(board)),
		index: make(map[int64]int, len(board)), points: map[int64][][2]float64{}}
	rows := make([]boardRow, len(board))
	for i, b := range board {
		if v.rows[i], err = l.row(b, false); err != nil {
			return nil, err
		}
		if v.ownRows[i], err = l.row(b, true); err != nil {
			return nil, err
		}
		v.index[b.TeamID] = i
		rows[i] = boardRow{Rank: b.Rank, TeamID: b.TeamID, Team: b.Team, Passed: b.Passed, Score: b.Score, Runs: b.Runs}
	}
	if v.event, err = json.Marshal(rows); err != nil {
		return nil, err
	}
	for _, p := range history {
		v.points[p.TeamID] = append(v.points[p.TeamID], [2]float64{float64(p.At.Unix()), p.Score})
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

func (l *live) refresh(ctx context.Context) error {
	active, err := l.store.Jobs(ctx, portal.JobQueued, portal.JobRunning)
	if err != nil {
		return err
	}
	positions, err := l.store.Positions(ctx)
	if err != nil {
		return err
	}
	key, err := l.store.Changes(ctx)
	if err != nil {
		return err
	}
	l.mu.Lock()
	view, boardKey := l.view, l.boardKey
	l.mu.Unlock()
	if key != boardKey || view == nil {
		if view, err = l.buildView(ctx); err != nil {
			return err
		}
	}
	jobs := make(map[int64]portal.Job, len(active))
	for _, j := range active {
		jobs[j.ID] = j.ForContestant()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.jobs, l.positions, l.view, l.boardKey, l.loaded = jobs, positions, view, key, true
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

func (l *live) position(id int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.positions[id]
}

// board is the leaderboard as last read (read now before the first read).
func (l *live) board(ctx context.Context) (*boardView, error) {
	l.mu.Lock()
	view := l.view
	l.mu.Unlock()
	if view != nil {
		return view, nil
	}
	l.first.Lock()
	defer l.first.Unlock()
	l.mu.Lock()
	view = l.view
	l.mu.Unlock()
	if view != nil {
		return view, nil
	}
	view, err := l.buildView(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.view == nil {
		l.view = view // boardKey stays "": the loop reads it again
	}
	return view, nil
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
	Phase    string          `json:"phase"`
	Score    float64         `json:"score"`
	Requests int64           `json:"requests"`
	Errors   int64           `json:"errors"`
	Users    int             `json:"users"`
}

// jobEvents streams a job's progress ("progress" events) until it ends
// ("done", with its final state: the page then loads its result).
func (s *Server) jobEvents(w http.ResponseWriter, r *http.Request, v viewer) {
	j, err := s.teamJob(r, v)
	if err != nil {
		s.fail(w, r, v, err)
		return
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
				return
			}
			if fin.State.Final() {
				_ = st.send("done", map[string]any{"state": fin.State, "verdict": fin.Verdict, "score": fin.Score})
				return
			}
		}
		if active {
			p := cur.Progress
			ev := progressEvent{State: cur.State, Position: s.live.position(j.ID), Phase: p.Phase, Score: p.Score,
				Requests: p.Requests, Errors: p.Errors, Users: p.Users}
			if ev != last || first {
				if st.send("progress", ev) != nil {
					return
				}
				last = ev
			}
		}
		if !st.wait(r.Context(), keep, next) {
			return
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
}

// leaderboardEvents streams the leaderboard ("board" events), each time it
// changes.
func (s *Server) leaderboardEvents(w http.ResponseWriter, r *http.Request, v viewer) {
	st := startStream(w)
	keep := time.NewTicker(KeepAliveEvery)
	defer keep.Stop()
	var lastKey string
	for {
		next := s.live.next()
		s.live.mu.Lock()
		view, key, loaded := s.live.view, s.live.boardKey, s.live.loaded
		s.live.mu.Unlock()
		if loaded && key != lastKey {
			if st.sendJSON("board", view.event) != nil {
				return
			}
			lastKey = key
		}
		if !st.wait(r.Context(), keep, next) {
			return
		}
	}
}

// ChartTeams is how many of the leading teams the score chart draws (the
// viewer's own team is drawn too).
const ChartTeams = 10

// leaderboardHistory is the chart's data: the passed scores over time of
// the leading teams and the viewer's.
func (s *Server) leaderboardHistory(w http.ResponseWriter, r *http.Request, v viewer) {
	view, err := s.live.board(r.Context())
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	type series struct {
		TeamID int64        `json:"team_id"`
		Team   string       `json:"team"`
		Own    bool         `json:"own"`
		Points [][2]float64 `json:"points"` // [unix seconds, score]
	}
	out := []series{}
	for i, b := range view.standings {
		if (i < ChartTeams && b.Passed) || b.TeamID == v.TeamID && v.TeamID != 0 {
			points := view.points[b.TeamID]
			if points == nil {
				points = [][2]float64{}
			}
			out = append(out, series{TeamID: b.TeamID, Team: b.Team, Own: b.TeamID == v.TeamID, Points: points})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"series": out})
}
