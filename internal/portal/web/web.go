// Package web serves the contest portal's pages: sign-up and sign-in, teams,
// the contest page with its enqueue button, each team's jobs with live
// progress, the leaderboard with its chart (a board per bracket; frozen for all
// but admins from the freeze to the reveal, each team still seeing its own
// latest score), and the admin pages: settings, the timeline with its "now"
// buttons, teams' places and disqualifications, the team import and the teams'
// servers with their members' one-time sign-in links, jobs,
// workers and their quarantine, the audit log and its JSON export, the
// validation runs after the end, and the ceremony. Every admin action goes
// through the store or the queue with the admin as its actor, which record it
// in the audit log in the transaction that makes it.
//
// Staff post announcements (Markdown) and answer the teams' questions,
// privately or published for every team; every page's viewer
// has an unread count, and open pages follow both over server-sent events.
//
// Pages are rendered on the server with html/template (every name and
// message a team types is shown as text) and work without JavaScript; a
// small embedded script adds the live parts, fed by server-sent events. The
// chart library is embedded too: the portal needs no network at run time.
//
// Who may do what is one table, the route table (table): each route names
// the people it serves (anyone, signed in, in a team, admin) and whether it
// is a page or an event stream, and a request from anyone else gets the
// same answer whatever it asks for. A handler returns its error, and fail
// (render.go) turns it into the error page. A team's jobs are found only
// through the team: another team's job id answers 404, as a job that does
// not exist. Contestants' pages are rendered from portal.Job's
// ForContestant view, so no staff log reaches their templates.
//
// The files go by audience: public.go (everyone's pages), auth.go (signing
// up and in), team.go (a contestant's team and questions), jobs.go (a
// team's benchmarks), admin.go, admin_jobs.go and admin_teams.go (staff),
// and live.go (what the live pages are fed: the live state and the event
// streams); web.go (the server and the route table) and render.go (pages
// and errors) are what they share.
//
// Open data: a read-only JSON API under /api/v1/ (api.go) serves the public
// board and its event stream to anyone, and a team's own jobs to the
// bearer of one of its tokens (made on the team page; tokens count only
// there, sessions never do); admins download the whole contest as one JSON
// document (export.go).
package web

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/report"
	"github.com/tunecon/tunecon/kit"
)

//go:embed templates static
var files embed.FS

// Jobs is what the portal asks of the job queue.
type Jobs interface {
	Enqueue(ctx context.Context, teamID int64) (portal.Job, error)
	// Rerun and Cancel are staff's: by is recorded in the audit log.
	Rerun(ctx context.Context, jobID int64, by portal.Actor) (portal.Job, error)
	Cancel(ctx context.Context, jobID int64, by portal.Actor) (portal.Job, error)
}

// Config configures a Server. Store, Jobs and Lookup are required.
type Config struct {
	Store *store.Store
	Jobs  Jobs
	// Lookup finds a problem by name; Problems lists the names an admin may
	// choose from.
	Lookup   func(name string) (kit.Problem, bool)
	Problems []string
	// Now is the clock (time.Now when nil). The store's (store.Options.Now)
	// should be the same: the queue checks the contest's times on it.
	Now func() time.Time
	// Passwords hashes passwords (bcrypt's default cost when zero).
	Passwords portal.Passwords
	// SecureCookies marks the session cookie Secure: set it when the portal
	// is served over HTTPS (by a proxy in front of it).
	SecureCookies bool
	// TrustProxy takes a client's address from the last hop of
	// X-Forwarded-For, for the sign-in limits: set it when the portal is
	// reached only through a proxy that adds that header.
	TrustProxy bool
	// PollEvery is how often the live pages' source reads the database
	// (DefaultPollEvery when zero).
	PollEvery time.Duration
	// SessionTTL is how long a sign-in lasts (portal.DefaultSessionTTL).
	SessionTTL time.Duration
	// Logger receives the portal's errors (discarded when nil).
	Logger *slog.Logger
}

// DefaultPollEvery is how often the live source reads the database: jobs'
// progress reaches it at least once a second, so a viewer sees each report.
const DefaultPollEvery = 500 * time.Millisecond

// Server is the portal's HTTP side.
type Server struct {
	cfg     Config
	store   *store.Store
	pages   map[string]*template.Template
	limiter *limiter
	live    *live
	notices *notices   // announcements' and clarifications' changes (live.go)
	charts  chartCache // the job pages' charts (jobs.go)
	dummy   string     // a password hash for unknown logins
	handler http.Handler

	// apiBoards are the API's board documents, encoded once per change.
	apiBoards apiBoards
}

// New makes a server; Run must run for its live pages to move.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Jobs == nil || cfg.Lookup == nil {
		return nil, errors.New("web: a server needs a store, a queue and a problem lookup")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = DefaultPollEvery
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = portal.DefaultSessionTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, store: cfg.Store, pages: pages, limiter: newLimiter(cfg.Now),
		dummy: cfg.Passwords.DummyHash()}
	s.live = newLive(cfg.Store, cfg.PollEvery, cfg.Now, cfg.Logger, s.boardRow)
	s.notices = newNotices(cfg.Store, cfg.PollEvery, cfg.Logger)
	s.handler = s.routes()
	return s, nil
}

// SweepEvery is how often the portal deletes expired sessions.
const SweepEvery = 10 * time.Minute

// Run feeds the live pages, and deletes expired sessions now and then,
// until ctx ends.
func (s *Server) Run(ctx context.Context) {
	go func() {
		t := time.NewTicker(SweepEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := s.store.DeleteExpiredSessions(ctx); err != nil && ctx.Err() == nil {
					s.cfg.Logger.Warn("deleting expired sessions", "err", err)
				}
			}
		}
	}()
	go s.notices.run(ctx)
	s.live.run(ctx)
}

// ServeHTTP serves the portal.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// who a route serves.
type who int

const (
	anyone who = iota
	member     // signed in
	inTeam     // signed in, a contestant in a team
	admin      // signed in as an admin
)

// routes is the portal's every route (the route table's, the static files
// and the API's).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.table() {
		mux.Handle(rt.pattern, s.guard(rt))
	}
	static, _ := fs.Sub(files, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticFiles(static)))
	mux.Handle("GET /static/report.css", chartStyles())

	// The read-only JSON API: tokens, not sessions (api.go).
	mux.Handle("GET /api/v1/leaderboard", s.api(false, s.apiLeaderboard))
	mux.Handle("GET /api/v1/leaderboard/events", s.api(false, s.apiLeaderboardEvents))
	mux.Handle("GET /api/v1/jobs", s.api(true, s.apiJobs))
	mux.Handle("GET /api/v1/jobs/{id}", s.api(true, s.apiJobByID))
	mux.Handle("/api/", http.HandlerFunc(s.apiNotFound))

	// Browsers say where a request comes from (Sec-Fetch-Site, Origin):
	// a form posted from another site is refused before any handler runs.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
	}))
	return headers(cop.Handler(limitBodies(mux)))
}

// handler is a route's handler: it answers the viewer, or returns an error
// for guard to answer (before it has written anything).
type handler = func(http.ResponseWriter, *http.Request, viewer) error

// kind is what a route answers: a page (a form's redirect and a download
// count as pages), or an event stream. A browser sent to sign in first
// follows a page's redirect; an event stream's EventSource would not, so
// the stream is refused instead.
type kind int

const (
	page kind = iota
	events
)

// route is one line of the route table.
type route struct {
	pattern string
	who     who
	kind    kind
	h       handler
}

// table is the route table: each page and form of the portal, whom it
// serves and what it answers.
func (s *Server) table() []route {
	return []route{
		{"GET /{$}", anyone, page, s.contestPage},
		{"GET /manual", anyone, page, s.manualPage},
		{"GET /leaderboard", anyone, page, s.leaderboardPage},
		{"GET /leaderboard/events", anyone, events, s.leaderboardEvents},
		{"GET /leaderboard/history", anyone, page, s.leaderboardHistory},

		{"GET /signup", anyone, page, s.signupPage},
		{"POST /signup", anyone, page, s.signup},
		{"GET /login", anyone, page, s.loginPage},
		{"POST /login", anyone, page, s.login},
		{"POST /logout", anyone, page, s.logout},
		{"GET /signin/{token}", anyone, page, s.signInPage},
		{"POST /signin/{token}", anyone, page, s.signIn},
		{"GET /account", member, page, s.accountPage},
		{"POST /account/password", member, page, s.changePassword},

		{"GET /team", member, page, s.teamPage},
		{"POST /team", member, page, s.createTeam},
		{"POST /team/join", member, page, s.joinTeam},
		{"POST /team/target", inTeam, page, s.setTarget},
		{"POST /team/server", inTeam, page, s.pickServer},
		{"POST /team/tokens", inTeam, page, s.createToken},
		{"POST /team/tokens/{id}/revoke", inTeam, page, s.revokeToken},

		{"GET /announcements", anyone, page, s.announcementsPage},
		{"GET /notices/events", anyone, events, s.noticeEvents},
		{"GET /clarifications", member, page, s.clarificationsPage},
		{"POST /clarifications", inTeam, page, s.ask},

		{"POST /jobs", inTeam, page, s.enqueue},
		{"GET /jobs", inTeam, page, s.jobsPage},
		{"GET /jobs/{id}", inTeam, page, s.jobPage},
		{"GET /jobs/{id}/events", inTeam, events, s.jobEvents},

		{"GET /admin", admin, page, s.adminPage},
		{"POST /admin/contest", admin, page, s.setContest},
		{"POST /admin/timeline", admin, page, s.setTimeline},
		{"POST /admin/timeline/now", admin, page, s.setNow},
		{"GET /admin/teams/{id}", admin, page, s.adminTeamPage},
		{"POST /admin/teams/{id}", admin, page, s.setTeamPlace},
		{"POST /admin/teams/{id}/rename", admin, page, s.renameTeam},
		{"POST /admin/teams/{id}/remove", admin, page, s.removeTeam},
		{"GET /admin/servers", admin, page, s.serversPage},
		{"POST /admin/servers", admin, page, s.addServer},
		{"POST /admin/servers/{id}/remove", admin, page, s.removeServer},
		{"POST /admin/accounts/{id}/signin-link", admin, page, s.newSignInLink},
		{"GET /admin/import", admin, page, s.importPage},
		{"POST /admin/import", admin, page, s.importTeams},
		{"GET /admin/audit", admin, page, s.auditPage},
		{"GET /admin/audit.json", admin, page, s.auditExport},
		{"GET /admin/export.json", admin, page, s.contestExport},
		{"GET /admin/ceremony", admin, page, s.ceremonyPage},
		{"POST /admin/announcements", admin, page, s.announce},
		{"POST /admin/clarifications/{id}", admin, page, s.answer},
		{"POST /admin/clarifications/{id}/claim", admin, page, s.claim},
		{"POST /admin/clarifications/{id}/release", admin, page, s.release},
		{"GET /admin/jobs", admin, page, s.adminJobsPage},
		{"GET /admin/queue.json", admin, page, s.queueJSON},
		{"GET /admin/jobs/{id}", admin, page, s.adminJobPage},
		{"POST /admin/jobs/{id}/rerun", admin, page, s.rerun},
		{"POST /admin/jobs/{id}/cancel", admin, page, s.cancel},
		{"POST /admin/jobs/rerun-errored", admin, page, s.rerunErrored},
		{"GET /admin/validation", admin, page, s.validationPage},
		{"POST /admin/validation", admin, page, s.startValidation},
		{"POST /admin/validation/threshold", admin, page, s.setThreshold},
		{"POST /admin/teams/{id}/disqualify", admin, page, s.disqualify},
		{"POST /admin/teams/{id}/reinstate", admin, page, s.reinstate},
		{"POST /admin/workers/{name}/clear", admin, page, s.clearWorker},

		{"/", anyone, page, s.notFound},
	}
}

// notFound answers a path that is no route.
func (s *Server) notFound(http.ResponseWriter, *http.Request, viewer) error {
	return portal.Errorf(portal.CodeNotFound, "no such page")
}

// MaxForm is the largest request body the portal reads: its forms are a
// few short fields. (The team import's file may be larger: MaxImport.)
const MaxForm = 64 << 10

// limitBodies refuses to read more than MaxForm of any request's body, or
// of the team import's more than MaxImport and its form's fields.
func limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := int64(MaxForm)
		if r.URL.Path == "/admin/import" {
			limit += MaxImport
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// headers adds the headers every answer carries: no framing, no sniffing,
// scripts and styles from the portal only.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// chartStyles serves the style sheet of a run's charts (internal/report's).
func chartStyles() http.Handler {
	css := []byte(report.ChartCSS())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write(css)
	})
}

func staticFiles(root fs.FS) http.Handler {
	fsrv := http.FileServerFS(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}

// viewer is who sent a request: Account.ID 0 for nobody signed in.
type viewer struct {
	portal.Account
	token string // the session's token, to end it
}

func (v viewer) signedIn() bool { return v.ID != 0 }

// guard runs a route's handler for the people it serves; the others get
// the same answer whatever they ask: a sign-in page for nobody, 403 for
// the rest. An error the handler returns is answered by fail, the one
// place that turns an error into its page.
func (s *Server) guard(rt route) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		v, err := s.viewer(r)
		if err == nil {
			err = s.serve(rw, r, rt, v)
		}
		if err != nil {
			s.fail(rw, r, v, err)
		}
	})
}

// serve runs the route's handler if v is one of the people it serves. Of
// the others, one who asks for a page (GET) is redirected where it can
// help (nobody to the sign-in, a contestant without a team to the team
// page); anything else, an event stream included, is refused.
func (s *Server) serve(rw http.ResponseWriter, r *http.Request, rt route, v viewer) error {
	w, getPage := rt.who, rt.kind == page && r.Method == http.MethodGet
	switch {
	case w == anyone:
	case !v.signedIn():
		if getPage {
			return seeOther(rw, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()))
		}
		return portal.Errorf(portal.CodeDenied, "sign in first")
	case w == inTeam && !v.Admin() && v.TeamID == 0 && getPage:
		return seeOther(rw, r, "/team") // a team first
	case w == admin && !v.Admin(), w == inTeam && (v.Admin() || v.TeamID == 0):
		return portal.Errorf(portal.CodeDenied, "this page is not for you")
	}
	return rt.h(rw, r, v)
}

// contest reads the contest; a portal whose admin has not set one up yet
// has a contest with no problem.
func (s *Server) contest(r *http.Request) (portal.Contest, error) {
	c, err := s.store.Contest(r.Context())
	if portal.ErrorCode(err) == portal.CodeNotFound {
		return portal.Contest{}, nil
	}
	return c, err
}
