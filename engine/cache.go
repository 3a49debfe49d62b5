package engine

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultCacheEntries caps one user's cache; past it the cache starts over,
// as a small browser cache would evict.
const DefaultCacheEntries = 256

// cache emulates a browser's HTTP cache for GET: fresh entries (max-age or
// Expires) are served from memory without a request; stale entries with an
// ETag or Last-Modified are revalidated with a conditional request.
type cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	status       int
	header       http.Header
	body         []byte
	etag         string
	lastModified string
	expires      time.Time // zero: must revalidate
}

// newCache returns an empty cache; its map is made at the first entry, so a
// user who fetches nothing cacheable pays nothing for it.
func newCache() *cache { return &cache{} }

// empty reports whether there is nothing to look up.
func (c *cache) empty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries) == 0
}

func (c *cache) lookup(key string) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[key]
}

func (e *cacheEntry) fresh(now time.Time) bool {
	return !e.expires.IsZero() && now.Before(e.expires)
}

func (e *cacheEntry) addValidators(h http.Header) {
	if e.etag != "" {
		h.Set("If-None-Match", e.etag)
	}
	if e.lastModified != "" {
		h.Set("If-Modified-Since", e.lastModified)
	}
}

// refresh applies a 304's headers: they replace the stored ones of the same
// names (the stored response is what the user sees, with the 304's updates,
// as RFC 9111 has a cache do), and a new max-age restarts freshness.
func (e *cacheEntry) refresh(h http.Header, now time.Time) {
	merged := e.header.Clone()
	for k, v := range h {
		if k != "Content-Length" {
			merged[k] = v
		}
	}
	e.header = merged
	if exp, ok := expiry(h, now); ok {
		e.expires = exp
	}
	if v := h.Get("ETag"); v != "" {
		e.etag = v
	}
}

// cacheable reports whether a response carries anything a cache could use.
func cacheable(h http.Header) bool {
	// The keys are canonical: index the map without canonicalizing them again.
	nonEmpty := func(k string) bool { v := h[k]; return len(v) > 0 && v[0] != "" }
	return nonEmpty("Etag") || nonEmpty("Last-Modified") || nonEmpty("Cache-Control") || nonEmpty("Expires")
}

// store keeps a 200 response that a browser would keep.
func (c *cache) store(key string, status int, h http.Header, body []byte, now time.Time) {
	if status != http.StatusOK {
		return
	}
	cc := strings.ToLower(h.Get("Cache-Control"))
	if strings.Contains(cc, "no-store") {
		return
	}
	e := &cacheEntry{status: status, header: h, body: body, etag: h.Get("ETag"), lastModified: h.Get("Last-Modified")}
	e.expires, _ = expiry(h, now)
	if strings.Contains(cc, "no-cache") {
		e.expires = time.Time{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.etag == "" && e.lastModified == "" && e.expires.IsZero() {
		delete(c.entries, key)
		return
	}
	if len(c.entries) >= DefaultCacheEntries {
		clear(c.entries)
	}
	if c.entries == nil {
		c.entries = map[string]*cacheEntry{}
	}
	c.entries[key] = e
}

// expiry reads max-age (preferred) or Expires.
func expiry(h http.Header, now time.Time) (time.Time, bool) {
	for _, d := range strings.Split(h.Get("Cache-Control"), ",") {
		d = strings.TrimSpace(strings.ToLower(d))
		if v, ok := strings.CutPrefix(d, "max-age="); ok {
			secs, err := strconv.Atoi(strings.Trim(v, `"`))
			if err != nil || secs <= 0 {
				return time.Time{}, true
			}
			return now.Add(time.Duration(secs) * time.Second), true
		}
	}
	if v := h.Get("Expires"); v != "" {
		t, err := http.ParseTime(v)
		if err != nil || !t.After(now) {
			return time.Time{}, true
		}
		return t, true
	}
	return time.Time{}, false
}
