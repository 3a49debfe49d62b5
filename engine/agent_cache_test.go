package engine_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tunecon/tunecon/engine"
)

func TestBrowserCache(t *testing.T) {
	t.Parallel()
	var hits, conditional atomic.Int64
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/fresh":
			w.Header().Set("Cache-Control", "max-age=3600")
			fmt.Fprint(w, "fresh body")
		case "/etag":
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				conditional.Add(1)
				w.Header().Set("X-Seen", "304")
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("Content-Type", "text/x-etag")
			w.Header().Set("X-Seen", "200")
			fmt.Fprint(w, "etag body")
		case "/nostore":
			w.Header().Set("Cache-Control", "no-store, max-age=3600")
			fmt.Fprint(w, "never kept")
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			fmt.Fprint(gz, strings.Repeat("zip", 100))
			gz.Close()
		}
	}))
	a := engine.NewAgent(target, engine.AgentConfig{}, nil)
	ctx := context.Background()
	get := func(p string) *engine.Response {
		t.Helper()
		res, err := a.Get(ctx, "GET "+p, p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	get("/fresh")
	if res := get("/fresh"); !res.FromCache || string(res.Body) != "fresh body" || hits.Load() != 1 {
		t.Errorf("a max-age response was not served from memory: fromCache=%v hits=%d", res.FromCache, hits.Load())
	}
	get("/etag")
	if res := get("/etag"); !res.Revalidated || res.StatusCode != 200 || string(res.Body) != "etag body" || conditional.Load() != 1 {
		t.Errorf("an ETag response was not revalidated: %+v conditional=%d", res, conditional.Load())
	} else if ct, seen := res.Header.Get("Content-Type"), res.Header.Get("X-Seen"); ct != "text/x-etag" || seen != "304" {
		t.Errorf("a revalidated response has Content-Type %q and X-Seen %q: want the stored type and the 304's update", ct, seen)
	}
	before := hits.Load()
	get("/nostore")
	if res := get("/nostore"); res.FromCache || hits.Load() != before+2 {
		t.Errorf("a no-store response was cached")
	}
	if res := get("/gzip"); string(res.Body) != strings.Repeat("zip", 100) {
		t.Errorf("gzip body not decoded: %q", res.Body[:10])
	}

	noCache := engine.NewAgent(target, engine.AgentConfig{NoCache: true}, nil)
	before = hits.Load()
	for range 2 {
		if res, _ := noCache.Get(ctx, "GET /fresh", "/fresh"); res.FromCache {
			t.Error("NoCache agent used a cache")
		}
	}
	if hits.Load() != before+2 {
		t.Errorf("NoCache agent skipped requests")
	}
}

// TestInspectSeesEveryAnswer: the inspection reads error pages and 304s,
// its failure is the request's, and an answer from the cache is not read
// twice.
func TestInspectSeesEveryAnswer(t *testing.T) {
	t.Parallel()
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/kept":
			w.Header().Set("Cache-Control", "max-age=3600")
			fmt.Fprint(w, "kept")
		case "/etag":
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			fmt.Fprint(w, "etag")
		default:
			http.Error(w, "not here, but the secret is", http.StatusNotFound)
		}
	}))
	a := engine.NewAgent(target, engine.AgentConfig{}, nil)
	var read []string
	a.Inspect(func(res *engine.Response) error {
		read = append(read, fmt.Sprintf("%d %s", res.StatusCode, res.Body))
		if strings.Contains(string(res.Body), "secret") {
			return engine.Criticalf("leak", "the answer carries the secret")
		}
		return nil
	})
	ctx := context.Background()
	for _, p := range []string{"/kept", "/kept", "/etag", "/etag"} {
		if _, err := a.Get(ctx, "GET "+p, p); err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
	}
	_, err := a.Get(ctx, "GET /missing", "/missing")
	if e := engine.AsError(err); err == nil || e.Class != engine.ClassCritical || e.Request != "GET /missing" {
		t.Errorf("a 404 carrying the secret gave %v", err)
	}
	if want := "200 kept|200 etag|200 etag|404 not here, but the secret is\n"; strings.Join(read, "|") != want {
		t.Errorf("the inspection read %q, want %q", strings.Join(read, "|"), want)
	}
	a.Inspect(nil)
	if _, err := a.Get(ctx, "GET /missing", "/missing"); err != nil {
		t.Errorf("with the inspection stopped: %v", err)
	}
}
