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
