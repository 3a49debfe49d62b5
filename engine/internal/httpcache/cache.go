// Package httpcache is one user's HTTP cache, as a browser keeps it: fresh
// answers served from memory, stale ones revalidated.
package httpcache

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Cache emulates a browser's HTTP cache for GET: fresh entries (max-age or
// Expires) are served from memory without a request; stale entries with an
// ETag or Last-Modified are revalidated with a conditional request.
type Cache struct {
	mu         sync.Mutex
	maxEntries int
	entries    map[string]*Entry
}

// Entry is a stored response, and the validators of a conditional request
// for it.
type Entry struct {
	Status       int
	Header       http.Header
	Body         []byte
	ETag         string
	LastModified string
	expires      time.Time // zero: must revalidate
}

// New returns an empty cache of up to maxEntries entries; past them it
// starts over, as a small browser cache would evict. Its map is made at the
// first entry, so a user who fetches nothing cacheable pays nothing for it.
func New(maxEntries int) *Cache { return &Cache{maxEntries: maxEntries} }

// Empty reports whether there is nothing to look up.
func (c *Cache) Empty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries) == 0
}

// Lookup returns the entry stored under key, or nil.
func (c *Cache) Lookup(key string) *Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[key]
}

// Fresh reports whether e may be used without asking the server.
func (e *Entry) Fresh(now time.Time) bool {
	return !e.expires.IsZero() && now.Before(e.expires)
}

// Refresh applies a 304's headers: they replace the stored ones of the same
// names (the stored response is what the user sees, with the 304's updates,
// as RFC 9111 has a cache do), and a new max-age restarts freshness.
func (e *Entry) Refresh(h http.Header, now time.Time) {
	merged := e.Header.Clone()
	for k, v := range h {
		if k != "Content-Length" {
			merged[k] = v
		}
	}
	e.Header = merged
	if exp, ok := expiry(h, now); ok {
		e.expires = exp
	}
	if v := h.Get("ETag"); v != "" {
		e.ETag = v
	}
}

// Cacheable reports whether a response carries anything a cache could use.
func Cacheable(h http.Header) bool {
	// The keys are canonical: index the map without canonicalizing them again.
	nonEmpty := func(k string) bool { v := h[k]; return len(v) > 0 && v[0] != "" }
	return nonEmpty("Etag") || nonEmpty("Last-Modified") || nonEmpty("Cache-Control") || nonEmpty("Expires")
}

// Store keeps a 200 response that a browser would keep.
func (c *Cache) Store(key string, status int, h http.Header, body []byte, now time.Time) {
	if status != http.StatusOK {
		return
	}
	cc := strings.ToLower(h.Get("Cache-Control"))
	if strings.Contains(cc, "no-store") {
		return
	}
	e := &Entry{Status: status, Header: h, Body: body, ETag: h.Get("ETag"), LastModified: h.Get("Last-Modified")}
	e.expires, _ = expiry(h, now)
	if strings.Contains(cc, "no-cache") {
		e.expires = time.Time{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.ETag == "" && e.LastModified == "" && e.expires.IsZero() {
		delete(c.entries, key)
		return
	}
	if len(c.entries) >= c.maxEntries {
		clear(c.entries)
	}
	if c.entries == nil {
		c.entries = map[string]*Entry{}
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
