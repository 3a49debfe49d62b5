package engine_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// probe is a scenario assembled from functions, for tests.
type probe struct {
	meta  engine.Meta
	init  func(ctx context.Context, r *engine.Run) error
	pre   func(ctx context.Context, r *engine.Run) error
	user  func(ctx context.Context, r *engine.Run, u *engine.User) error
	final func(ctx context.Context, r *engine.Run) error
}

func (p *probe) Meta() engine.Meta {
	m := p.meta
	if m.Problem == "" {
		m.Problem, m.Version = "probe", "test"
	}
	if m.Rules.Weights == nil {
		m.Rules.Weights = map[string]float64{"ok": 1}
	}
	return m
}

func (p *probe) PreCheck(ctx context.Context, r *engine.Run) error {
	if p.pre == nil {
		return nil
	}
	return p.pre(ctx, r)
}

func (p *probe) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	if p.user == nil {
		u.Think(ctx, 50*time.Millisecond, 50*time.Millisecond)
		return nil
	}
	return p.user(ctx, r, u)
}

func (p *probe) FinalCheck(ctx context.Context, r *engine.Run) error {
	if p.final == nil {
		return nil
	}
	return p.final(ctx, r)
}

// initializer is a probe that initializes itself (no POST /initialize).
type initializer struct{ *probe }

func (i initializer) Initialize(ctx context.Context, r *engine.Run) error {
	if i.init == nil {
		return nil
	}
	return i.init(ctx, r)
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func serve(t testing.TB, h http.Handler) *url.URL {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return mustURL(t, srv.URL+"/")
}

// rawServer accepts TCP connections on loopback and hands each to handle.
func rawServer(t testing.TB, handle func(net.Conn)) *url.URL {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				select {
				case <-done:
				default:
					handle(c)
				}
			}()
		}
	}()
	return mustURL(t, "http://"+ln.Addr().String()+"/")
}

// fastRun returns options for a run that lasts about a second per phase.
func fastRun(phase time.Duration) []engine.Option {
	return []engine.Option{
		engine.WithInitializeTimeout(phase), engine.WithPreCheckTimeout(phase),
		engine.WithLoadDuration(phase), engine.WithFinalCheckTimeout(phase),
		engine.WithGrace(500 * time.Millisecond), engine.WithSeed(7),
	}
}
