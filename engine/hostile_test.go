package engine_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
)

func neverAnswers(t *testing.T) string {
	return rawServer(t, func(c net.Conn) { _, _ = bufio.NewReader(c).ReadString('!') }).String()
}

func dripsBytes(t *testing.T) string {
	return rawServer(t, func(c net.Conn) {
		_, _ = bufio.NewReader(c).ReadString('\n')
		for _, b := range []byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + strings.Repeat("x", 100)) {
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(time.Second)
		}
	}).String()
}

func dripsBody(t *testing.T) string {
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(200)
		for range 1000 {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Second):
			}
		}
	})).String()
}

func resets(t *testing.T) string {
	return rawServer(t, func(c net.Conn) {
		_, _ = bufio.NewReader(c).ReadString('\n')
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close with RST
		}
	}).String()
}

func endlessBody(t *testing.T) string {
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("endless ", 4096))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})).String()
}

func garbage(t *testing.T) string {
	return rawServer(t, func(c net.Conn) {
		_, _ = bufio.NewReader(c).ReadString('\n')
		_, _ = c.Write([]byte("SSH-2.0-nonsense\r\n\x00\x01\x02 this is not HTTP at all\r\n\r\n"))
	}).String()
}

// hostile targets, with what the agent must say of each under
// agentTimeouts: the class, the code, and the message's words (what
// happened, and the limit it passed).
var hostile = []struct {
	name   string
	target func(t *testing.T) string
	class  engine.Class
	code   string
	msg    string
}{
	{"never accepts a connection", neverAccepts, engine.ClassTimeout, "connect-timeout", "could not connect within 300ms"},
	{"never answers", neverAnswers, engine.ClassTimeout, "timeout", "no response headers within 300ms"},
	{"drips headers a byte a second", dripsBytes, engine.ClassTimeout, "timeout", "no response headers within 300ms"},
	{"drips the body a byte a second", dripsBody, engine.ClassTimeout, "timeout", "no complete response within 700ms"},
	{"resets connections", resets, engine.ClassApplication, "connection", "reset"},
	{"sends an endless body", endlessBody, engine.ClassApplication, "too-large", "larger than"},
	{"sends garbage instead of HTTP", garbage, engine.ClassApplication, "connection", "malformed"},
}

// agentTimeouts are short limits for the agent-level hostile tests.
var agentTimeouts = engine.AgentConfig{
	ConnectTimeout: 300 * time.Millisecond, FirstByteTimeout: 300 * time.Millisecond,
	RequestTimeout: 700 * time.Millisecond, MaxBodyBytes: 1 << 20,
}

// TestAgentClassifiesHostileTargets checks each failure's class and code at
// the agent, with short timeouts.
func TestAgentClassifiesHostileTargets(t *testing.T) {
	t.Parallel()
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			a := engine.NewAgent(mustURL(t, h.target(t)), agentTimeouts, nil)
			defer a.Close()
			start := time.Now()
			_, err := a.Get(context.Background(), "GET /", "/")
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("request took %s", took)
			}
			var e *engine.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *engine.Error", err)
			}
			if e.Class != h.class || e.Code != h.code {
				t.Errorf("got class %s code %s (%v), want %s %s", e.Class, e.Code, e, h.class, h.code)
			}
			if !strings.HasPrefix(e.Error(), "GET /: ") || !strings.Contains(e.Message, h.msg) {
				t.Errorf("message %q does not name the request and say %q", e.Error(), h.msg)
			}
		})
	}
}

// TestRunEndsOnTimeAgainstHostileTargets runs whole benchmarks: the
// initialize phase meets the hostile target first, and a second run whose
// users meet it in the load phase must also end on time.
func TestRunEndsOnTimeAgainstHostileTargets(t *testing.T) {
	t.Parallel()
	const phase = time.Second
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			target := mustURL(t, h.target(t))
			meta := engine.Meta{Agent: engine.AgentConfig{MaxBodyBytes: 1 << 20}}

			start := time.Now()
			res := engine.New(&probe{meta: meta}, target, fastRun(phase)...).Run(context.Background())
			if took := time.Since(start); took > phase+time.Second {
				t.Errorf("initialize against it took %s", took)
			}
			if res.Passed || len(res.Phases) != 1 || res.Phases[0].Name != engine.PhaseInitialize || res.Phases[0].Passed {
				t.Fatalf("want a failed initialize, got %+v", res.Phases)
			}
			if res.Errors.Internal != 0 {
				t.Errorf("the target's fault was counted as internal: %+v %v", res.Errors, res.Messages)
			}

			// In the load phase: users hit the target; the run must end on
			// time.
			p := &probe{meta: meta, user: func(ctx context.Context, r *engine.Run, u *engine.User) error {
				_, err := u.Get(ctx, "GET /", "/")
				return err
			}}
			start = time.Now()
			res = engine.New(initializer{p}, target, fastRun(phase)...).Run(context.Background())
			if took := time.Since(start); took > 3*phase+time.Second {
				t.Errorf("the run took %s", took)
			}
			if res.Errors.Internal != 0 {
				t.Errorf("internal errors against a hostile target: %v", res.Messages)
			}
			if got := res.Errors.Of(h.class) + res.Errors.CutOff; got == 0 {
				t.Errorf("no %s error or cut-off recorded: %+v", h.class, res.Errors)
			}
		})
	}
}

// TestWatchdogEndsAPhaseThatIgnoresItsDeadline: a scenario that ignores ctx
// is the benchmarker's fault; the run still ends, names the phase, and
// counts an internal error, not a contestant's one.
func TestWatchdogEndsAPhaseThatIgnoresItsDeadline(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	p := initializer{&probe{pre: func(ctx context.Context, r *engine.Run) error { <-block; return nil }}}
	start := time.Now()
	res := engine.New(p, mustURL(t, "http://127.0.0.1:1/"), fastRun(500*time.Millisecond)...).Run(context.Background())
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %s", took)
	}
	pre := res.Phases[len(res.Phases)-1]
	if pre.Name != engine.PhasePreCheck || !pre.Overran || res.Passed || !res.Internal {
		t.Fatalf("want an overrun pre-check and an internal error, got %+v internal=%v", pre, res.Internal)
	}
	if res.Errors.Charged() != 0 {
		t.Errorf("the watchdog's error was charged: %+v", res.Errors)
	}
}

// A request with a limit of its own waits that long, for its headers and
// for its whole, where the agent's limits would have given up; and its
// timeout names that limit.
func TestDoWithinReplacesTheAgentsLimits(t *testing.T) {
	t.Parallel()
	slow := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // headers after 1 s: past the agent's 300 ms and 700 ms
		case <-r.Context().Done():
			return
		case <-time.After(time.Second):
		}
		_, _ = w.Write([]byte("report"))
	})).String()
	a := engine.NewAgent(mustURL(t, slow), agentTimeouts, nil)
	defer a.Close()
	ctx := context.Background()
	if _, err := a.Do(ctx, "GET /", http.MethodGet, "/", nil, nil); err == nil {
		t.Fatal("the agent's own limits let a 1 s answer through")
	}
	res, err := a.DoWithin(ctx, 3*time.Second, "GET /", http.MethodGet, "/", nil, nil)
	if err != nil || string(res.Body) != "report" {
		t.Fatalf("within 3 s: %v, %v", res, err)
	}
	var e *engine.Error
	_, err = a.DoWithin(ctx, 500*time.Millisecond, "GET /", http.MethodGet, "/", nil, nil)
	if !errors.As(err, &e) || e.Class != engine.ClassTimeout || !strings.Contains(e.Message, "within 500ms") {
		t.Errorf("within 500 ms: got %v, want a timeout that names 500ms", err)
	}
	if _, err := a.DoWithin(ctx, 0, "GET /", http.MethodGet, "/", nil, nil); !errors.As(err, &e) || e.Class != engine.ClassInternal {
		t.Errorf("a zero limit: got %v, want the scenario's fault", err)
	}
}
