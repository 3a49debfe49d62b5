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

	mu        sync.Mutex
	tick      chan struct{}
	loaded    bool
	jobs      map[int64]portal.Job // queued and running, by id
	positions map[int64]int
	board     []portal.Standing
	boardKey  string
}

func newLive(s *store.Store, every time.Duration, log *slog.Logger) *live {
	return &live{store: s, every: every, log: log, tick: make(chan struct{})}
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
	board, boardKey := l.board, l.boardKey
	l.mu.Unlock()
	if key != boardKey || board == nil {
		if board, err = l.store.Leaderboard(ctx); err != nil {
			return err
		}
	}
	jobs := make(map[int64]portal.Job, len(active))
	for _, j := range active {
		jobs[j.ID] = j.ForContestant()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.jobs, l.positions, l.board, l.boardKey, l.loaded = jobs, positions, board, key, true
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

// leaderboard is the leaderboard as last read (read now before the first).
func (l *live) leaderboard(ctx context.Context) ([]portal.Standing, error) {
	l.mu.Lock()
	board, loaded := l.board, l.loaded
	l.mu.Unlock()
	if loaded {
		return board, nil
	}
	return l.store.Leaderboard(ctx)
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
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", event, b); err != nil {
		return err
	}
	return s.f.Flush()
}

func (s *stream) keepAlive() error {
	if _, err := fmt.Fprint(s.w, ": keep-alive\n\n"); err != nil {
		return err
	}
	return s.f.Flush()
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
			if fin, err := s.store.Job(r.Context(), j.ID); err == nil && fin.State.Final() {
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
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			if st.keepAlive() != nil {
				return
			}
		case <-next:
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
		board, key, loaded := s.live.board, s.live.boardKey, s.live.loaded
		s.live.mu.Unlock()
		if loaded && key != lastKey {
			rows := make([]boardRow, len(board))
			for i, b := range board {
				rows[i] = boardRow{Rank: b.Rank, TeamID: b.TeamID, Team: b.Team, Passed: b.Passed, Score: b.Score, Runs: b.Runs}
			}
			if st.send("board", rows) != nil {
				return
			}
			lastKey = key
		}
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			if st.keepAlive() != nil {
				return
			}
		case <-next:
		}
	}
}

// ChartTeams is how many of the leading teams the score chart draws (the
// viewer's own team is drawn too).
const ChartTeams = 10

// leaderboardHistory is the chart's data: the passed scores over time of
// the leading teams and the viewer's.
func (s *Server) leaderboardHistory(w http.ResponseWriter, r *http.Request, v viewer) {
	board, err := s.live.leaderboard(r.Context())
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	points, err := s.store.ScoreHistory(r.Context())
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
	var out []*series
	byTeam := map[int64]*series{}
	for i, b := range board {
		if (i < ChartTeams && b.Passed) || b.TeamID == v.TeamID && v.TeamID != 0 {
			sr := &series{TeamID: b.TeamID, Team: b.Team, Own: b.TeamID == v.TeamID, Points: [][2]float64{}}
			out = append(out, sr)
			byTeam[b.TeamID] = sr
		}
	}
	for _, p := range points {
		if sr, ok := byTeam[p.TeamID]; ok {
			sr.Points = append(sr.Points, [2]float64{float64(p.At.Unix()), p.Score})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"series": out})
}
