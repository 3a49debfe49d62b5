package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// The read-only JSON API, under /api/v1/. A team's token (portal.APIToken,
// sent as "Authorization: Bearer TOKEN") reads what the team sees in a
// browser: the public leaderboard (frozen as the public's during a freeze)
// with the team's own live line, and the team's own jobs. The board and its
// event stream need no token: they are public, as the leaderboard page is.
// Sessions (cookies) count for nothing here, and tokens for nothing on the
// pages and forms: an admin's browser reads the public board from the API,
// as anyone does.

// The API's limit: at most APIRequests requests (an event stream counts
// once, when it opens) per token within APIWindow; past it, 429 with
// Retry-After. Calls without a token are not limited, as the public pages
// are not.
const (
	APIRequests = 120
	APIWindow   = time.Minute
)

// APIJobsPage and APIMaxJobsPage are the job list's page size: the default
// and the largest ?limit=.
const (
	APIJobsPage    = 20
	APIMaxJobsPage = 100
)

// codeUnauthorized classifies a call without a valid token where one is
// needed: 401.
const codeUnauthorized portal.Code = "unauthorized"

// caller is who calls the API: a team's token, or the public (ID 0).
type caller struct {
	token portal.APIToken
}

// viewer is the caller as the pages' viewer: a member of its team, or
// nobody.
func (c caller) viewer() viewer {
	if c.token.ID == 0 {
		return viewer{}
	}
	return viewer{Account: portal.Account{Role: portal.RoleContestant, TeamID: c.token.TeamID}}
}

// apiHandler is an API route's handler: it answers the caller, or returns
// an error for api to answer (before it has written anything).
type apiHandler = func(http.ResponseWriter, *http.Request, caller) error

// api serves an API route: with needToken, only to a token's bearer; else
// to anyone, the token's team seeing its own line. An error h returns is
// answered by apiFail, the API's one place that turns an error into its
// document.
func (s *Server) api(needToken bool, h apiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		c, err := s.caller(r)
		if err == nil && needToken && c.token.ID == 0 {
			err = portal.Errorf(codeUnauthorized, "this needs a team's API token: Authorization: Bearer TOKEN (made on the team page)")
		}
		if err == nil && c.token.ID != 0 {
			if after, _ := s.limiter.reserve(rule{key: "api:" + strconv.FormatInt(c.token.ID, 10), limit: APIRequests, window: APIWindow}); after > 0 {
				err = &retryError{after: after, what: "API requests with this token"}
			}
		}
		if err == nil {
			err = h(w, r, c)
		}
		if err != nil {
			s.apiFail(w, r, err)
		}
	})
}

// caller reads the request's token: none is the public; one that is
// malformed, unknown or revoked is refused (401), never taken for none.
func (s *Server) caller(r *http.Request) (caller, error) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return caller{}, nil
	}
	scheme, token, _ := strings.Cut(auth, " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return caller{}, portal.Errorf(codeUnauthorized, "want Authorization: Bearer TOKEN")
	}
	t, err := s.store.APITokenByHash(r.Context(), portal.TokenHash(token))
	if portal.ErrorCode(err) == portal.CodeNotFound {
		return caller{}, portal.Errorf(codeUnauthorized, "unknown or revoked token")
	} else if err != nil {
		return caller{}, err
	}
	if s.cfg.Now().Sub(t.LastUsedAt) >= portal.APITokenTouch {
		if err := s.store.TouchAPIToken(r.Context(), t.ID); err != nil {
			s.cfg.Logger.Warn("recording a token's use", "token", t.ID, "err", err)
		}
	}
	return caller{token: t}, nil
}

// apiError is the API's error document.
type apiError struct {
	Error struct {
		Code    portal.Code `json:"code"`
		Message string      `json:"message"`
	} `json:"error"`
}

// apiFail answers with err's status and {"error": {"code", "message"}}.
func (s *Server) apiFail(w http.ResponseWriter, r *http.Request, err error) {
	var doc apiError
	code, msg := s.told(w, r, err)
	doc.Error.Code, doc.Error.Message = portal.ErrorCode(err), msg
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tunecon"`)
	}
	writeJSON(w, code, doc)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// apiNotFound answers the API's paths that are no route: 405 for a method
// other than GET (every route is read-only), 404 otherwise.
func (s *Server) apiNotFound(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		var doc apiError
		doc.Error.Code, doc.Error.Message = "method-not-allowed", "the API is read-only: GET only"
		writeJSON(w, http.StatusMethodNotAllowed, doc)
		return
	}
	s.apiFail(w, r, portal.Errorf(portal.CodeNotFound, "no such API route"))
}

// apiBoard is the leaderboard document of GET /api/v1/leaderboard, and the
// data of the stream's "board" events.
type apiBoard struct {
	// Bracket is the board's ("" for every team); Brackets the contest's.
	Bracket  string      `json:"bracket"`
	Brackets []string    `json:"brackets"`
	Frozen   bool        `json:"frozen"`
	Revealed bool        `json:"revealed"`
	Timeline apiTimeline `json:"timeline"`
	Rows     []apiRow    `json:"rows"`
}

type apiTimeline struct {
	StartsAt  *time.Time `json:"starts_at"`
	FreezesAt *time.Time `json:"freezes_at"`
	EndsAt    *time.Time `json:"ends_at"`
	RevealsAt *time.Time `json:"reveals_at"`
}

// apiRow is a team's line: Rank 0, Score and ReachedAt null before its
// first passed job; a disqualified team is on the board, without a rank.
type apiRow struct {
	Rank         int        `json:"rank"`
	TeamID       int64      `json:"team_id"`
	Team         string     `json:"team"`
	Bracket      string     `json:"bracket"`
	Score        *float64   `json:"score"`
	ReachedAt    *time.Time `json:"reached_at"`
	Runs         int        `json:"runs"`
	Disqualified bool       `json:"disqualified"`
}

// apiOwn is a token's team's own live line: during a freeze its latest
// score, which the board does not show yet.
type apiOwn struct {
	TeamID    int64      `json:"team_id"`
	Score     *float64   `json:"score"`
	ReachedAt *time.Time `json:"reached_at"`
	Runs      int        `json:"runs"`
}

func timeOrNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func rowOf(st portal.Standing) apiRow {
	row := apiRow{Rank: st.Rank, TeamID: st.TeamID, Team: st.Team, Bracket: st.Bracket, Runs: st.Runs,
		Disqualified: st.Disqualified}
	if st.Passed {
		score := st.Score
		row.Score, row.ReachedAt = &score, timeOrNull(st.ReachedAt)
	}
	return row
}

// apiBoards keeps the board documents of the boards as last built (one per
// bracket), so that hundreds of overlays cost one encoding per change.
type apiBoards struct {
	mu   sync.Mutex
	of   *boards
	docs map[string][]byte
}

// doc is the public board document of a bracket of b.
func (a *apiBoards) doc(b *boards, bracket string) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.of != b {
		a.of, a.docs = b, map[string][]byte{}
	}
	if doc, ok := a.docs[bracket]; ok {
		return doc, nil
	}
	view, err := b.view(bracket, false)
	if err != nil {
		return nil, err
	}
	t := b.timeline
	board := apiBoard{Bracket: bracket, Brackets: b.brackets, Frozen: b.frozen, Revealed: b.revealed,
		Timeline: apiTimeline{StartsAt: timeOrNull(t.StartsAt), FreezesAt: timeOrNull(t.FreezesAt),
			EndsAt: timeOrNull(t.EndsAt), RevealsAt: timeOrNull(t.RevealsAt)},
		Rows: make([]apiRow, len(view.standings))}
	if board.Brackets == nil {
		board.Brackets = []string{}
	}
	for i, st := range view.standings {
		board.Rows[i] = rowOf(st)
	}
	doc, err := json.Marshal(board)
	if err != nil {
		return nil, err
	}
	a.docs[bracket] = doc
	return doc, nil
}

// own is the caller's team's own line in b (nil for the public).
func (c caller) own(b *boards) *apiOwn {
	st, ok := b.own[c.token.TeamID]
	if c.token.ID == 0 || !ok {
		return nil
	}
	row := rowOf(st)
	return &apiOwn{TeamID: st.TeamID, Score: row.Score, ReachedAt: row.ReachedAt, Runs: st.Runs}
}

// apiLeaderboard is GET /api/v1/leaderboard (?bracket=): the public board,
// frozen during a freeze, and with a token the team's own live line
// ("own").
func (s *Server) apiLeaderboard(w http.ResponseWriter, r *http.Request, c caller) error {
	b, err := s.live.current(r.Context())
	if err != nil {
		return err
	}
	doc, err := s.apiBoards.doc(b, r.URL.Query().Get("bracket"))
	if err != nil {
		return err
	}
	if own := c.own(b); own != nil {
		extra, err := json.Marshal(own)
		if err != nil {
			return err
		}
		doc = fmt.Appendf(append([]byte(nil), doc[:len(doc)-1]...), `,"own":%s}`, extra)
	}
	w.Header().Set("Access-Control-Allow-Origin", "*") // public: overlays on other origins read it
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(doc, '\n'))
	return nil
}

// apiLeaderboardEvents is GET /api/v1/leaderboard/events (?bracket=): a
// "board" event (the document of GET /api/v1/leaderboard, without "own")
// at once and at each change of the board, public and frozen as the public
// board is; with a token, an "own" event each time the team's own line
// changes. A board the same as the last one sent is not sent again: during
// a freeze the live board's changes move nothing here, and tell the stream
// nothing of them either (not even that some team's job ended).
func (s *Server) apiLeaderboardEvents(w http.ResponseWriter, r *http.Request, c caller) error {
	bracket := r.URL.Query().Get("bracket")
	b, err := s.live.current(r.Context())
	if err == nil {
		_, err = b.view(bracket, false)
	}
	if err != nil {
		return err
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	st := startStream(w)
	keep := time.NewTicker(KeepAliveEvery)
	defer keep.Stop()
	var (
		lastKey          string
		lastDoc, lastOwn []byte
	)
	for {
		next := s.live.next()
		s.live.mu.Lock()
		b, loaded := s.live.boards, s.live.loaded
		s.live.mu.Unlock()
		if loaded && b.key != lastKey {
			doc, err := s.apiBoards.doc(b, bracket)
			if err != nil {
				return nil // the bracket is gone
			}
			if !bytes.Equal(doc, lastDoc) {
				if st.sendJSON("board", doc) != nil {
					return nil
				}
				lastDoc = doc
			}
			lastKey = b.key
			if own := c.own(b); own != nil {
				line, _ := json.Marshal(own)
				if !bytes.Equal(line, lastOwn) {
					if st.sendJSON("own", line) != nil {
						return nil
					}
					lastOwn = line
				}
			}
		}
		if !st.wait(r.Context(), keep, next) {
			return nil
		}
	}
}

// apiJob is a job as its team sees it.
type apiJob struct {
	ID      int64           `json:"id"`
	State   portal.JobState `json:"state"`
	Verdict portal.Verdict  `json:"verdict"`
	// Score is a finished job's (null otherwise).
	Score *float64 `json:"score"`
	// Position is a queued job's place in the queue (1: next).
	Position int `json:"position,omitempty"`
	// Progress is a running job's, as its worker last reported it.
	Progress  *apiProgress `json:"progress,omitempty"`
	Messages  []string     `json:"messages"`
	ErrorCode string       `json:"error_code,omitempty"`
	Target    string       `json:"target"`
	Attempts  int          `json:"attempts"`
	RerunOf   int64        `json:"rerun_of,omitempty"`
	CreatedAt time.Time    `json:"created_at"`
	Started   *time.Time   `json:"started_at"`
	Finished  *time.Time   `json:"finished_at"`
	// Result is the engine's result (GET /api/v1/jobs/{id} only).
	Result json.RawMessage `json:"result,omitempty"`
}

type apiProgress struct {
	Phase    string  `json:"phase"`
	Score    float64 `json:"score"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Users    int     `json:"users"`
}

// jobOf is a job of the caller's team (j is ForContestant already).
func (s *Server) jobOf(j portal.Job, withResult bool) apiJob {
	out := apiJob{ID: j.ID, State: j.State, Verdict: j.Verdict, Messages: j.Messages, ErrorCode: j.ErrorCode,
		Target: j.Target, Attempts: j.Attempts, RerunOf: j.RerunOf, CreatedAt: j.CreatedAt.UTC(),
		Started: timeOrNull(j.StartedAt), Finished: timeOrNull(j.FinishedAt)}
	if out.Messages == nil {
		out.Messages = []string{}
	}
	switch j.State {
	case portal.JobFinished:
		score := j.Score
		out.Score = &score
	case portal.JobQueued:
		out.Position = s.live.position(j.ID)
	case portal.JobRunning:
		p := j.Progress
		out.Progress = &apiProgress{Phase: p.Phase, Score: p.Score, Requests: p.Requests, Errors: p.Errors, Users: p.Users}
	}
	if withResult && len(j.Result) > 0 {
		out.Result = j.Result
	}
	return out
}

// apiJobs is GET /api/v1/jobs: the token's team's jobs, the newest first,
// ?limit= at a time (APIJobsPage, at most APIMaxJobsPage), from the job
// before ?before=; "next" is the next page's path (null on the last).
func (s *Server) apiJobs(w http.ResponseWriter, r *http.Request, c caller) error {
	q := r.URL.Query()
	limit, before := APIJobsPage, int64(0)
	if in := q.Get("limit"); in != "" {
		n, err := strconv.Atoi(in)
		if err != nil || n < 1 || n > APIMaxJobsPage {
			return portal.Errorf(portal.CodeInvalid, "limit: 1 to %d jobs", APIMaxJobsPage)
		}
		limit = n
	}
	if in := q.Get("before"); in != "" {
		n, err := strconv.ParseInt(in, 10, 64)
		if err != nil || n < 1 {
			return portal.Errorf(portal.CodeInvalid, "before: a job's id")
		}
		before = n
	}
	jobs, err := s.store.TeamJobsPage(r.Context(), c.token.TeamID, before, limit+1)
	if err != nil {
		return err
	}
	var next *string
	if len(jobs) > limit {
		jobs = jobs[:limit]
		path := "/api/v1/jobs?" + url.Values{"before": {strconv.FormatInt(jobs[limit-1].ID, 10)},
			"limit": {strconv.Itoa(limit)}}.Encode()
		next = &path
	}
	out := make([]apiJob, len(jobs))
	for i, j := range jobs {
		out[i] = s.jobOf(j.ForContestant(), false)
	}
	writeJSON(w, http.StatusOK, map[string]any{"jobs": out, "next": next})
	return nil
}

// apiJobByID is GET /api/v1/jobs/{id}: a job of the token's team with its
// result, read as the job page reads it (teamJob): another team's job, and
// a validation run, are not found, as a job that does not exist.
func (s *Server) apiJobByID(w http.ResponseWriter, r *http.Request, c caller) error {
	j, err := s.teamJob(r, c.viewer())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.jobOf(j, true))
	return nil
}
