package httpcache

import (
	"net/http"
	"testing"
	"time"
)

// TestCacheKeepsWhatABrowserKeeps: a max-age answer is fresh until it
// expires, an ETag answer is kept to be revalidated, and a 304 updates the
// stored headers; no-store, other statuses and answers without validators
// are not kept.
func TestCacheKeepsWhatABrowserKeeps(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	c := New(256)
	if !c.Empty() || c.Lookup("a") != nil {
		t.Fatal("a new cache is not empty")
	}
	c.Store("fresh", 200, http.Header{"Cache-Control": {"max-age=60"}}, []byte("f"), now)
	if e := c.Lookup("fresh"); e == nil || !e.Fresh(now.Add(59*time.Second)) || e.Fresh(now.Add(61*time.Second)) {
		t.Errorf("max-age=60: %+v", e)
	}
	c.Store("etag", 200, http.Header{"Etag": {`"v1"`}, "Content-Type": {"text/plain"}}, []byte("e"), now)
	e := c.Lookup("etag")
	if e == nil || e.Fresh(now) || e.ETag != `"v1"` {
		t.Fatalf("an ETag answer: %+v", e)
	}
	e.Refresh(http.Header{"Etag": {`"v2"`}, "Cache-Control": {"max-age=10"}, "Content-Length": {"0"}}, now)
	if e.ETag != `"v2"` || !e.Fresh(now) || e.Header.Get("Content-Type") != "text/plain" ||
		e.Header.Get("Content-Length") != "" || string(e.Body) != "e" {
		t.Errorf("after a 304: %+v", e)
	}
	for key, h := range map[string]http.Header{
		"nostore": {"Cache-Control": {"no-store, max-age=60"}},
		"plain":   {"Content-Type": {"text/plain"}},
	} {
		c.Store(key, 200, h, nil, now)
		if c.Lookup(key) != nil {
			t.Errorf("%s was kept", key)
		}
	}
	c.Store("notfound", 404, http.Header{"Cache-Control": {"max-age=60"}}, nil, now)
	if c.Lookup("notfound") != nil {
		t.Error("a 404 was kept")
	}
	c.Store("fresh", 200, http.Header{}, nil, now)
	if c.Lookup("fresh") != nil {
		t.Error("an answer without validators left the older entry in place")
	}
	if !Cacheable(http.Header{"Last-Modified": {"x"}}) || Cacheable(http.Header{"Etag": {""}}) {
		t.Error("Cacheable")
	}
}

// TestCacheStartsOverWhenFull: past its entries, the cache forgets them all.
func TestCacheStartsOverWhenFull(t *testing.T) {
	t.Parallel()
	now := time.Now()
	c := New(2)
	h := http.Header{"Etag": {`"x"`}}
	for _, k := range []string{"a", "b", "c"} {
		c.Store(k, 200, h, nil, now)
	}
	if c.Lookup("a") != nil || c.Lookup("b") != nil || c.Lookup("c") == nil {
		t.Error("a full cache did not start over")
	}
}
