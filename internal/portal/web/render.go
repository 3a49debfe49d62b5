package web

import (
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
)

// Answering a request: a page rendered from its template, or an error's
// page with its status (fail, the one place that turns an error into one).

// status maps an error's class to an HTTP status.
func status(err error) int {
	switch portal.ErrorCode(err) {
	case portal.CodeInvalid:
		return http.StatusBadRequest
	case portal.CodeNotFound:
		return http.StatusNotFound
	case portal.CodeConflict:
		return http.StatusConflict
	case portal.CodeDenied:
		return http.StatusForbidden
	case portal.CodeUnsupported:
		return http.StatusNotImplemented
	case codeTooMany:
		return http.StatusTooManyRequests
	case codeUnauthorized:
		return http.StatusUnauthorized
	}
	return http.StatusInternalServerError
}

// errorView is the error page's.
type errorView struct {
	layout
	Status     int
	StatusText string
	Message    string
}

// fail answers with err's status and an error page.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, v viewer, err error) {
	code, msg := s.told(w, r, err)
	_ = s.render(w, r, code, "error", v, &errorView{Status: code, StatusText: http.StatusText(code), Message: msg})
}

// told is what an error tells the one who asked, on a page or in the
// API: its status and message. The portal's own errors are logged and
// told without their detail; a refusal for too many attempts says when to
// try again (Retry-After).
func (s *Server) told(w http.ResponseWriter, r *http.Request, err error) (code int, msg string) {
	code, msg = status(err), err.Error()
	if code == http.StatusInternalServerError {
		s.cfg.Logger.Error("portal error", "method", r.Method, "path", r.URL.Path, "err", err)
		msg = "the portal had an error; the staff can see it in its log"
	}
	var re *retryError
	if errors.As(err, &re) {
		w.Header().Set("Retry-After", strconv.Itoa(int(re.after.Round(time.Second)/time.Second)+1))
	}
	return code, msg
}

// layout is what every page's layout shows: who is viewing it and the
// viewer's notices. Each page's view embeds it; render fills it.
type layout struct {
	Viewer   viewer
	Notice   notice
	Upcoming *nextEvent // the contest's next event (nil: none ahead)
}

func (l *layout) base() *layout { return l }

// view is a page's data: a struct of its own that embeds layout, so that
// its template reads only what the handler set.
type view interface{ base() *layout }

// render writes a page. It returns nil, the page written, so that a
// handler ends with it; a template's failure is the portal's, logged here
// and answered as a plain 500.
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, page string, v viewer, data view) error {
	t, ok := s.pages[page]
	if !ok {
		panic("web: no page " + page)
	}
	*data.base() = layout{Viewer: v, Notice: s.noticeFor(r, v), Upcoming: s.live.upcoming(s.cfg.Now())}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", data); err != nil {
		s.cfg.Logger.Error("rendering a page", "page", page, "err", err)
		http.Error(w, "the portal could not render this page", http.StatusInternalServerError)
		return nil
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(b.String()))
	return nil
}

// seeOther ends a form post: the browser goes to the page. It returns nil,
// so that a handler ends with it.
func seeOther(w http.ResponseWriter, r *http.Request, to string) error {
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// pathID reads the {id} of a route (a job's, unless what says).
func pathID(r *http.Request, what ...string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		name := "job"
		if len(what) > 0 {
			name = what[0]
		}
		return 0, portal.Errorf(portal.CodeNotFound, "no such %s", name)
	}
	return id, nil
}

// formNumber reads a form's whole number, field, and refuses it outside
// lo..hi before anything is computed from it (a product of an unchecked
// number wraps silently); set is false for an empty field. what names the
// number in the refusal ("the team size").
func formNumber(r *http.Request, field string, lo, hi int, what string) (n int, set bool, err error) {
	in := strings.TrimSpace(r.PostFormValue(field))
	if in == "" {
		return 0, false, nil
	}
	n, err = strconv.Atoi(in)
	if err != nil || n < lo || n > hi {
		return 0, false, portal.Errorf(portal.CodeInvalid, "%s is a whole number from %d to %d, not %q", what, lo, hi, in)
	}
	return n, true, nil
}

func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04:05 UTC")
		},
		// score rounds half away from zero, as the pages' script does
		// (Math.round), so a live update never changes a score's digits.
		"score": func(f float64) string { return strconv.FormatFloat(math.Round(f), 'f', 0, 64) },
		"add":   func(a, b int) int { return a + b },
		// local is a time as the timeline form shows it, in UTC on a
		// 24-hour clock, to the second ("" when unset).
		"local": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04:05")
		},
	}
	entries, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, e := range entries {
		name := strings.TrimSuffix(strings.TrimPrefix(e, "templates/"), ".html")
		if name == "layout" || name == "partials" {
			continue
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/partials.html", e)
		if err != nil {
			return nil, fmt.Errorf("web: page %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}
