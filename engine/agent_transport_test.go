package engine_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// countConns serves h and counts the connections it accepts and, at most,
// how many were open at once.
func countConns(t *testing.T, h http.Handler) (target *url.URL, accepted, maxOpen *atomic.Int64) {
	accepted, maxOpen = new(atomic.Int64), new(atomic.Int64)
	var open atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			accepted.Add(1)
			n := open.Add(1)
			for {
				m := maxOpen.Load()
				if n <= m || maxOpen.CompareAndSwap(m, n) {
					break
				}
			}
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return mustURL(t, srv.URL+"/"), accepted, maxOpen
}

func TestAgentKeepsConnectionsAlive(t *testing.T) {
	t.Parallel()
	target, accepted, _ := countConns(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	a := engine.NewAgent(target, engine.AgentConfig{}, nil)
	defer a.Close()
	for range 20 {
		if res, err := a.Get(context.Background(), "GET /", "/"); err != nil || string(res.Body) != "ok" {
			t.Fatalf("got %v %v", res, err)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("20 requests one after another opened %d connections, want 1", n)
	}

	// Without keep-alive, every request has a connection of its own.
	target2, accepted2, _ := countConns(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Connection") != "close" {
			t.Error("a request without keep-alive did not say Connection: close")
		}
	}))
	b := engine.NewAgent(target2, engine.AgentConfig{NoKeepAlive: true}, nil)
	for range 3 {
		if _, err := b.Get(context.Background(), "GET /", "/"); err != nil {
			t.Fatal(err)
		}
	}
	if n := accepted2.Load(); n != 3 {
		t.Errorf("3 requests without keep-alive opened %d connections, want 3", n)
	}
}

// TestAgentHoldsAtMostSixConnections: like a browser, a user opens at most
// DefaultMaxConnsPerUser connections to the target; more requests at once
// wait for one.
func TestAgentHoldsAtMostSixConnections(t *testing.T) {
	t.Parallel()
	target, _, maxOpen := countConns(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
		fmt.Fprint(w, "ok")
	}))
	a := engine.NewAgent(target, engine.AgentConfig{}, nil)
	defer a.Close()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := a.Get(context.Background(), "GET /", "/"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := maxOpen.Load(); n > engine.DefaultMaxConnsPerUser || n < 2 {
		t.Errorf("20 requests at once held %d connections, want 2 to %d", n, engine.DefaultMaxConnsPerUser)
	}
}

// TestAgentWaitsForAConnectionWithinTheRequestTimeout: a request that finds
// every connection of its user stuck waits no longer than RequestTimeout.
func TestAgentWaitsForAConnectionWithinTheRequestTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	cfg := engine.AgentConfig{FirstByteTimeout: 5 * time.Second, RequestTimeout: 300 * time.Millisecond}
	a := engine.NewAgent(target, cfg, nil)
	defer a.Close()
	errs := make(chan error, engine.DefaultMaxConnsPerUser+1)
	for range engine.DefaultMaxConnsPerUser + 1 {
		go func() {
			_, err := a.Get(context.Background(), "GET /", "/")
			errs <- err
		}()
	}
	for range engine.DefaultMaxConnsPerUser + 1 {
		var e *engine.Error
		if err := <-errs; !errors.As(err, &e) || e.Class != engine.ClassTimeout || !strings.Contains(e.Message, "no complete response within 300ms") {
			t.Errorf("got %v, want a timeout: no complete response within 300ms", err)
		}
	}
}

// TestAgentSurvivesConnectionsTheServerClosed: a server that closes a
// kept-alive connection without saying so (an idle timeout, a restart) costs
// no error: a GET is sent again on a new connection, and a POST finds the
// connection closed before it is sent.
func TestAgentSurvivesConnectionsTheServerClosed(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	target := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if req.ContentLength > 0 {
			_, _ = br.Discard(int(req.ContentLength))
		}
		served.Add(1)
		// Keep-alive promised, then the connection is closed anyway.
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		time.Sleep(20 * time.Millisecond)
	})
	a := engine.NewAgent(target, engine.AgentConfig{}, nil)
	defer a.Close()
	ctx := context.Background()
	for i := range 4 {
		// The server has closed the last connection.
		time.Sleep(50 * time.Millisecond)
		var res *engine.Response
		var err error
		if i%2 == 0 {
			res, err = a.Get(ctx, "GET /", "/")
		} else {
			res, err = a.PostForm(ctx, "POST /", "/", url.Values{"a": {"1"}})
		}
		if err != nil || string(res.Body) != "ok" {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if n := served.Load(); n != 4 {
		t.Errorf("the server answered %d requests, want 4 (a POST was sent twice?)", n)
	}
}

// TestAgentDropsAConnectionWithBytesPastTheResponse: bytes the server sent
// past a response answer nothing; the connection is not used again.
func TestAgentDropsAConnectionWithBytesPastTheResponse(t *testing.T) {
	t.Parallel()
	var conns atomic.Int64
	target := rawServer(t, func(c net.Conn) {
		conns.Add(1)
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA")
		}
	})
	a := engine.NewAgent(target, engine.AgentConfig{}, nil)
	defer a.Close()
	for range 3 {
		if res, err := a.Get(context.Background(), "GET /", "/"); err != nil || string(res.Body) != "ok" {
			t.Fatalf("got %v %v", res, err)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 requests, want 3", n)
	}
}

// TestAgentCutsOffWhenTheContextEnds: a request waiting for its answer ends
// at once when its context does, as a cut-off, not a timeout.
func TestAgentCutsOffWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	target := neverAnswers(t)
	a := engine.NewAgent(mustURL(t, target), engine.AgentConfig{}, nil)
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := a.Get(ctx, "GET /", "/")
	if took := time.Since(start); took > time.Second {
		t.Errorf("the cut-off took %s", took)
	}
	if !errors.Is(err, engine.ErrCutOff) {
		t.Errorf("got %v, want a cut-off", err)
	}
}

// expiredContext has a deadline in the past but has not ended: a
// context.WithDeadline in the moment before its timer fires.
type expiredContext struct{ context.Context }

func (expiredContext) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// TestAgentCutsOffAtThePhasesDeadline: a connection started just after the
// phase's deadline, before its context says it has ended, fails at once in
// net.Dialer with a timeout; that is a cut-off, not the target's connect
// timeout (it was charged to a correct app once, at the end of a load).
func TestAgentCutsOffAtThePhasesDeadline(t *testing.T) {
	t.Parallel()
	a := engine.NewAgent(serve(t, http.NotFoundHandler()), engine.AgentConfig{}, nil)
	defer a.Close()
	_, err := a.Get(expiredContext{context.Background()}, "GET /", "/")
	var e *engine.Error
	if !errors.As(err, &e) || !errors.Is(err, engine.ErrCutOff) || e.Class == engine.ClassTimeout {
		t.Errorf("got %v (%+v), want a cut-off", err, e)
	}
}

// TestAgentReadsChunkedGzipAndInformationalAnswers covers the framings a
// server chooses: a gzip body written in chunks, and a 103 before the answer.
func TestAgentReadsChunkedGzipAndInformationalAnswers(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("chunked and compressed ", 2000)
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gzip":
			if r.Header.Get("Accept-Encoding") != "gzip" {
				t.Error("no Accept-Encoding: gzip")
			}
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			for i := 0; i < len(long); i += 1000 {
				fmt.Fprint(gz, long[i:min(i+1000, len(long))])
				gz.Flush()
				w.(http.Flusher).Flush()
			}
			gz.Close()
		case "/hints":
			w.Header().Set("Link", "</static/a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			fmt.Fprint(w, "after hints")
		case "/empty-gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
		}
	}))
	a := engine.NewAgent(target, engine.AgentConfig{}, nil)
	defer a.Close()
	res, err := a.Get(context.Background(), "GET /gzip", "/gzip")
	if err != nil || string(res.Body) != long || res.Header.Get("Content-Encoding") != "" {
		t.Errorf("chunked gzip body: %v, %d bytes, Content-Encoding %q", err, len(res.Body), res.Header.Get("Content-Encoding"))
	}
	if res, err := a.Get(context.Background(), "GET /hints", "/hints"); err != nil || res.StatusCode != 200 || string(res.Body) != "after hints" {
		t.Errorf("after a 103: %v %v", res, err)
	}
	if res, err := a.Get(context.Background(), "GET /empty-gzip", "/empty-gzip"); err != nil || res.Body == nil || len(res.Body) != 0 {
		t.Errorf("empty gzip body: %v %v", res, err)
	}
}

// TestAgentSendsTheScenariosHeadersAndCookies: a scenario's own Cookie
// header and the jar's cookies go in one header, as net/http sends them.
func TestAgentSendsTheScenariosHeadersAndCookies(t *testing.T) {
	t.Parallel()
	got := make(chan http.Header, 2)
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "v 1", Path: "/"})
			return
		}
		got <- r.Header.Clone()
	}))
	a := engine.NewAgent(target, engine.AgentConfig{}, nil)
	defer a.Close()
	ctx := context.Background()
	h := http.Header{"Cookie": {"mine=1"}, "X-Test": {"a", "b"}, "User-Agent": {"ignored"}}
	if _, err := a.Do(ctx, "GET /h", "GET", "/h", h, nil); err != nil {
		t.Fatal(err)
	}
	first := <-got
	if _, err := a.Get(ctx, "GET /login", "/login"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Do(ctx, "GET /h", "GET", "/h", h, nil); err != nil {
		t.Fatal(err)
	}
	second := <-got
	if first.Get("Cookie") != "mine=1" || len(first["X-Test"]) != 2 || !strings.HasPrefix(first.Get("User-Agent"), "tunecon-bench/") {
		t.Errorf("first request's headers: %v", first)
	}
	if c := second["Cookie"]; len(c) != 1 || c[0] != `mine=1; s="v 1"` {
		t.Errorf("cookies sent: %q, want one header `mine=1; s=\"v 1\"`", c)
	}
}

// TestAgentSpeaksTLS: https targets, certificates unchecked, connections
// kept; a target that never completes the handshake is a connect timeout.
func TestAgentSpeaksTLS(t *testing.T) {
	t.Parallel()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Method, " over ", r.Proto)
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	a := engine.NewAgent(mustURL(t, srv.URL+"/"), engine.AgentConfig{}, nil)
	defer a.Close()
	ctx := context.Background()
	for range 3 {
		if res, err := a.Get(ctx, "GET /", "/"); err != nil || string(res.Body) != "GET over HTTP/1.1" {
			t.Fatalf("got %v %v", res, err)
		}
	}
	if res, err := a.PostForm(ctx, "POST /", "/", url.Values{"a": {"1"}}); err != nil || string(res.Body) != "POST over HTTP/1.1" {
		t.Fatalf("got %v %v", res, err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d TLS connections for 4 requests, want 1", n)
	}

	silent := rawServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	silent.Scheme = "https"
	b := engine.NewAgent(silent, agentTimeouts, nil)
	defer b.Close()
	_, err := b.Get(ctx, "GET /", "/")
	var e *engine.Error
	if !errors.As(err, &e) || e.Class != engine.ClassTimeout || e.Code != "connect-timeout" || !strings.Contains(e.Message, "no TLS handshake within 300ms") {
		t.Errorf("got %v, want a connect timeout: no TLS handshake within 300ms", err)
	}
}

// TestAgentNamesAVirtualHost: SetHost and a request's own Host header name
// the host while the agent connects to the target; cookies the scenario
// sets (SetCookie) and the target sets go back only to their own host, and
// cached answers are kept per host.
func TestAgentNamesAVirtualHost(t *testing.T) {
	t.Parallel()
	type seen struct{ host, cookie string }
	got := make(chan seen, 16)
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Host, r.Header.Get("Cookie")}
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "from", Value: r.Host, Path: "/"})
		}
		w.Header().Set("Cache-Control", "private, max-age=60")
		fmt.Fprint(w, r.Host)
	}))
	a := engine.NewAgent(target, engine.AgentConfig{}, nil)
	defer a.Close()
	ctx := context.Background()
	get := func(path string, h http.Header) (seen, *engine.Response) {
		t.Helper()
		res, err := a.Do(ctx, "GET "+path, http.MethodGet, path, h, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.FromCache {
			return seen{host: "(cache)"}, res
		}
		return <-got, res
	}

	if s, _ := get("/a", nil); s.host != target.Host || s.cookie != "" || a.Host() != target.Host {
		t.Errorf("without SetHost: %+v, Host() %q; want the target's host %q", s, a.Host(), target.Host)
	}
	a.SetHost("acme.t.localhost")
	a.SetCookie(&http.Cookie{Name: "token", Value: "t1"})
	if s, res := get("/a", nil); s.host != "acme.t.localhost" || s.cookie != "token=t1" || string(res.Body) != "acme.t.localhost" {
		t.Errorf("after SetHost and SetCookie: %+v %q", s, res.Body)
	}
	if s, res := get("/a", nil); s.host != "(cache)" || string(res.Body) != "acme.t.localhost" {
		t.Errorf("a fresh answer of the same host was asked again: %+v %q", s, res.Body)
	}
	if s, _ := get("/set", nil); s.cookie != "token=t1" {
		t.Errorf("/set: %+v", s)
	}
	if s, _ := get("/b", http.Header{"Host": {"other.t.localhost"}}); s.host != "other.t.localhost" || s.cookie != "" {
		t.Errorf("a request's own Host: %+v; want other.t.localhost without acme's cookies", s)
	}
	a.SetHost("other.t.localhost")
	if s, res := get("/a", nil); s.host != "other.t.localhost" || s.cookie != "" || string(res.Body) != "other.t.localhost" {
		t.Errorf("another host got %+v %q; want its own answer, without acme's cookies", s, res.Body)
	}
	a.SetCookie(&http.Cookie{Name: "token", Value: "t2"})
	a.SetHost("acme.t.localhost")
	if s, _ := get("/b", nil); s.cookie != "from=acme.t.localhost; token=t1" && s.cookie != "token=t1; from=acme.t.localhost" {
		t.Errorf("back on acme: cookies %q, want acme's token and the cookie acme's /set set", s.cookie)
	}
	a.SetCookie(&http.Cookie{Name: "token", Value: "t3"})
	if s, _ := get("/c", nil); !strings.Contains(s.cookie, "token=t3") || strings.Contains(s.cookie, "t1") {
		t.Errorf("SetCookie did not replace the cookie of the same name: %q", s.cookie)
	}
	a.ClearCookies()
	a.SetHost("")
	if s, _ := get("/d", nil); s.host != target.Host || s.cookie != "" {
		t.Errorf("after SetHost(\"\") and ClearCookies: %+v", s)
	}
	if _, err := a.Do(ctx, "GET /e", http.MethodGet, "/e", http.Header{"Host": {"bad host"}}, nil); engine.AsError(err).Class != engine.ClassInternal {
		t.Errorf("a Host with a space: %v, want the scenario's own (internal) error", err)
	}
}

// TestAgentKeepsMaxIdlePerUser: after requests side by side, a user keeps
// MaxIdlePerUser connections open (DefaultMaxIdlePerUser when unset) and
// closes the rest.
func TestAgentKeepsMaxIdlePerUser(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ cfg, want int }{{0, engine.DefaultMaxIdlePerUser}, {1, 1}} {
		var open atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(50 * time.Millisecond)
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			switch s {
			case http.StateNew:
				open.Add(1)
			case http.StateClosed, http.StateHijacked:
				open.Add(-1)
			}
		}
		srv.Start()
		a := engine.NewAgent(mustURL(t, srv.URL+"/"), engine.AgentConfig{MaxIdlePerUser: c.cfg}, nil)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if _, err := a.Get(context.Background(), "GET /", "/"); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		deadline := time.Now().Add(2 * time.Second)
		for open.Load() != int64(c.want) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := open.Load(); n != int64(c.want) {
			t.Errorf("MaxIdlePerUser %d: %d connections open after 4 requests at once, want %d", c.cfg, n, c.want)
		}
		a.Close()
		srv.Close()
	}
}
