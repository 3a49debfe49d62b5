package web

import (
	"bytes"
	"cmp"
	"context"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yuin/goldmark"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
)

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
}

// noticeFor counts the viewer's notices; a failure is logged and shows
// none (a page never fails for its notice).
func (s *Server) noticeFor(r *http.Request, v viewer) notice {
	if !v.signedIn() {
		return notice{}
	}
	n, err := s.store.NoticesFor(r.Context(), v.ID, v.Admin())
	if err != nil {
		if r.Context().Err() == nil {
			s.cfg.Logger.Warn("counting a viewer's notices", "account", v.ID, "err", err)
		}
		return notice{}
	}
	return notice{Unread: n.Unread, Unanswered: n.Unanswered}
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
	ev.Clarifications, err = s.store.ClarificationsKey(ctx, seen(v))
	return ev, err
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
	s.render(w, r, http.StatusOK, "announcements", v, map[string]any{"Announcements": list, "Latest": latest,
		"Max": portal.MaxAnnouncement})
	return nil
}

// announce is staff's form: an announcement's Markdown.
func (s *Server) announce(w http.ResponseWriter, r *http.Request, v viewer) error {
	if _, err := s.store.Announce(r.Context(), portal.ActorOf(v.Account), r.PostFormValue("text")); err != nil {
		return err
	}
	seeOther(w, r, "/announcements")
	return nil
}

// clarificationView is a clarification as its viewer sees it.
type clarificationView struct {
	portal.Clarification
	Own bool // the viewer's team asked it
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
	s.render(w, r, http.StatusOK, "clarifications", v, map[string]any{"Key": key, "Own": own, "Published": published,
		"All": all, "Canned": portal.CannedAnswers, "MaxQuestion": portal.MaxQuestion, "MaxAnswer": portal.MaxAnswer,
		"MaxOpen": portal.MaxOpenQuestions})
	return nil
}

// ask is a team's question.
func (s *Server) ask(w http.ResponseWriter, r *http.Request, v viewer) error {
	c, err := s.store.Ask(r.Context(), v.Account, r.PostFormValue("question"))
	if err != nil {
		return err
	}
	seeOther(w, r, "/clarifications#c-"+strconv.FormatInt(c.ID, 10))
	return nil
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
	seeOther(w, r, "/clarifications#c-"+strconv.FormatInt(id, 10))
	return nil
}
