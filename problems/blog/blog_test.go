package blog_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/launch"
	"github.com/tunecon/tunecon/problems/blog"
)

// startApp builds and starts a blog app on its own SQLite file.
func startApp(t *testing.T, lang string) *url.URL {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the reference app: not in -short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	app, err := blog.Serve(context.Background(), launch.Config{
		Lang: lang, Addr: "127.0.0.1:0", Root: root, Log: &syncWriter{w: &log},
		DB: "sqlite:" + filepath.Join(t.TempDir(), "blog.db"),
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Stop(ctx); err != nil {
			t.Errorf("stopping the app: %v", err)
		}
	})
	u, _ := url.Parse(app.URL + "/")
	return u
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func bench(t *testing.T, target *url.URL, load time.Duration) *engine.Result {
	t.Helper()
	var staff bytes.Buffer
	res := engine.New(blog.NewScenario(), target, engine.WithLoadDuration(load), engine.WithSeed(20261120),
		engine.WithStaffLog(&syncWriter{w: &staff})).Run(context.Background())
	var sum strings.Builder
	_ = res.WriteSummary(&sum)
	t.Logf("result:\n%s", sum.String())
	if t.Failed() || os.Getenv("TUNECON_STAFF") != "" {
		t.Logf("staff log:\n%s", staff.String())
	}
	return res
}

// proxy sits between the benchmarker and a correct app and adds one defect.
type proxy struct {
	app      *url.URL
	requests atomic.Int64
	// intercept may answer a request itself (n counts requests from 1).
	intercept func(w http.ResponseWriter, r *http.Request, n int64) bool
	// rewrite may change an answer from the app.
	rewrite func(r *http.Request, n int64, status int, h http.Header, body []byte) []byte
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := p.requests.Add(1)
	if p.intercept != nil && p.intercept(w, r, n) {
		return
	}
	body, _ := io.ReadAll(r.Body)
	out, _ := http.NewRequestWithContext(r.Context(), r.Method, p.app.ResolveReference(&url.URL{Path: r.URL.Path, RawQuery: r.URL.RawQuery}).String(), bytes.NewReader(body))
	out.Header = r.Header.Clone()
	res, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if p.rewrite != nil {
		data = p.rewrite(r, n, res.StatusCode, res.Header, data)
	}
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(data)
}

func (p *proxy) start(t *testing.T) *url.URL {
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/")
	return u
}

// armed is the request count after which load-phase defects start: the
// pre-check makes fewer requests than this.
const armed = 150

var sidebarRe = regexp.MustCompile(`(?s)<aside id="sidebar">.*?</aside>`)

// TestReferencePassesAndEachDefectFails runs the Go reference app once
// cleanly (it must pass with 0 fails) and then behind proxies that each add
// one defect; the scenario must FAIL every one of them for the right reason.
func TestReferencePassesAndEachDefectFails(t *testing.T) {
	app := startApp(t, "go")
	t.Run("reference passes", func(t *testing.T) {
		res := bench(t, app, 15*time.Second)
		if !res.Passed || res.Errors.Charged() != 0 || res.Breakdown["comment"] == 0 || res.Breakdown["article"] == 0 {
			t.Fatalf("passed=%v errors=%+v breakdown=%v reasons=%q messages=%q", res.Passed, res.Errors, res.Breakdown, res.FailReasons, res.Messages)
		}
	})

	var mu sync.Mutex
	defects := []struct {
		name string
		p    *proxy
		want string // a regexp matched against the fail reasons and messages
	}{
		{"sidebar cached for 3 s", &proxy{rewrite: func() func(*http.Request, int64, int, http.Header, []byte) []byte {
			var cached []byte
			var at time.Time
			return func(r *http.Request, n int64, status int, h http.Header, body []byte) []byte {
				mu.Lock()
				defer mu.Unlock()
				m := sidebarRe.Find(body)
				if m == nil || n < armed {
					return body
				}
				if cached == nil || time.Since(at) > 3*time.Second {
					cached, at = append([]byte(nil), m...), time.Now()
				}
				return sidebarRe.ReplaceAllLiteral(body, cached)
			}
		}()}, "sidebar|is missing|should show by now"},
		{"a comment dropped", &proxy{intercept: func() func(http.ResponseWriter, *http.Request, int64) bool {
			var comments atomic.Int64
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/comments") {
					return false
				}
				if comments.Add(1) != 6 { // the pre-check posts 5 comments
					return false
				}
				id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/articles/"), "/comments")
				http.Redirect(w, r, fmt.Sprintf("/articles/%s#comment-%d", id, 900000000), http.StatusSeeOther)
				return true
			}
		}()}, "comment 900000000 (is missing|should show by now)"},
		{"a byte of the stylesheet changed", &proxy{rewrite: func(r *http.Request, n int64, status int, h http.Header, body []byte) []byte {
			if r.URL.Path == "/static/css/blog.css" && len(body) > 10 {
				body = append([]byte(nil), body...)
				body[10] ^= 1
			}
			return body
		}}, "asset content differs"},
		{"an asset tag removed", &proxy{rewrite: func(r *http.Request, n int64, status int, h http.Header, body []byte) []byte {
			return bytes.ReplaceAll(body, []byte(`<script src="/static/js/blog.js"></script>`), nil)
		}}, "lacks the script tag"},
		{"5% of answers turned into errors", &proxy{intercept: func(w http.ResponseWriter, r *http.Request, n int64) bool {
			if n > armed && n%20 == 0 {
				http.Error(w, "oops", http.StatusInternalServerError)
				return true
			}
			return false
		}}, "error rate"},
		{"whole pages cached for 2 s", &proxy{intercept: func() func(http.ResponseWriter, *http.Request, int64) bool {
			type entry struct {
				body []byte
				h    http.Header
				at   time.Time
			}
			cache := map[string]entry{}
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				if r.Method != http.MethodGet || n < armed || strings.HasPrefix(r.URL.Path, "/static/") {
					return false
				}
				mu.Lock()
				e, ok := cache[r.URL.Path]
				mu.Unlock()
				if !ok || time.Since(e.at) > 2*time.Second {
					res, err := http.Get(app.ResolveReference(&url.URL{Path: r.URL.Path}).String())
					if err != nil {
						return false
					}
					body, _ := io.ReadAll(res.Body)
					res.Body.Close()
					e = entry{body, res.Header, time.Now()}
					mu.Lock()
					cache[r.URL.Path] = e
					mu.Unlock()
				}
				for k, v := range e.h {
					w.Header()[k] = v
				}
				_, _ = w.Write(e.body)
				return true
			}
		}()}, "sidebar|is missing|should show by now"},
	}
	for _, d := range defects {
		t.Run(d.name, func(t *testing.T) {
			d.p.app = app
			res := bench(t, d.p.start(t), 15*time.Second)
			all := strings.Join(append(res.FailReasons, res.Messages...), "\n")
			if res.Passed || !regexp.MustCompile(d.want).MatchString(all) {
				t.Errorf("want a FAIL mentioning %q; passed=%v\n%s", d.want, res.Passed, all)
			}
			if res.Internal {
				t.Errorf("the defect caused an internal error: %s", all)
			}
		})
	}
}
