package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/tunecon/tunecon/engine/internal/dom"
	"github.com/tunecon/tunecon/engine/internal/httpcache"
	"github.com/tunecon/tunecon/engine/internal/wire"
)

// Defaults of a virtual user's HTTP behaviour.
const (
	// DefaultConnectTimeout bounds establishing a TCP connection.
	DefaultConnectTimeout = 3 * time.Second
	// DefaultFirstByteTimeout bounds the wait for the response headers.
	DefaultFirstByteTimeout = 10 * time.Second
	// DefaultRequestTimeout bounds a whole request, body included.
	DefaultRequestTimeout = 20 * time.Second
	// DefaultMaxBodyBytes caps a response body (after decompression).
	DefaultMaxBodyBytes = 16 << 20
	// DefaultMaxConnsPerUser is how many connections one user may hold to the
	// target, as a browser does per host.
	DefaultMaxConnsPerUser = 6
	// DefaultMaxIdlePerUser is how many of them a user keeps open while it
	// thinks: idle connections cost the benchmarker and the app a file each,
	// and a user between pages needs one.
	DefaultMaxIdlePerUser = 2
	// DefaultIdleConnTimeout: a keep-alive connection unused this long is
	// closed rather than used again.
	DefaultIdleConnTimeout = 30 * time.Second
	// DefaultAssetParallelism is how many assets of a page a user fetches at
	// once.
	DefaultAssetParallelism = 4
)

// DefaultCacheEntries caps one user's cache; past it the cache starts over,
// as a small browser cache would evict.
const DefaultCacheEntries = 256

// Pool says how virtual users share connections.
type Pool int

const (
	// PoolPerUser gives every user its own connections, like separate browsers.
	PoolPerUser Pool = iota
	// PoolShared lets all users share one pool of keep-alive connections.
	PoolShared
)

// AgentConfig is how a virtual user speaks HTTP. The zero value of each field
// means its Default constant, so AgentConfig{} is the browser-like default.
type AgentConfig struct {
	ConnectTimeout   time.Duration
	FirstByteTimeout time.Duration
	RequestTimeout   time.Duration
	MaxBodyBytes     int64
	// NoKeepAlive opens a new connection for every request.
	NoKeepAlive bool
	Pool        Pool
	// NoCache turns off the browser cache emulation.
	NoCache bool
	// MaxIdlePerUser is how many connections a user keeps open while it
	// thinks (0: DefaultMaxIdlePerUser): one for an app whose users make
	// one request at a time, so that the benchmarker's open files carry
	// twice the users.
	MaxIdlePerUser int
	// UserAgent overrides the stable default "tunecon-bench/<version>".
	UserAgent string

	dial    Dialer                                                 // WithDialer's; nil: the network's
	control func(network, address string, c syscall.RawConn) error // WithDialControl's
}

// Dialer opens a connection to the target.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

func (c AgentConfig) withDefaults() AgentConfig {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.ConnectTimeout, DefaultConnectTimeout)
	def(&c.FirstByteTimeout, DefaultFirstByteTimeout)
	def(&c.RequestTimeout, DefaultRequestTimeout)
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxIdlePerUser <= 0 {
		c.MaxIdlePerUser = DefaultMaxIdlePerUser
	}
	if c.UserAgent == "" {
		c.UserAgent = "tunecon-bench/" + Version
	}
	return c
}

// newTransport builds the one place connection policy is decided.
func newTransport(c AgentConfig) *wire.Transport {
	wc := wire.Config{ConnectTimeout: c.ConnectTimeout, FirstByteTimeout: c.FirstByteTimeout,
		RequestTimeout: c.RequestTimeout, MaxBodyBytes: c.MaxBodyBytes, NoKeepAlive: c.NoKeepAlive,
		MaxConns: DefaultMaxConnsPerUser, MaxIdle: c.MaxIdlePerUser, IdleTimeout: DefaultIdleConnTimeout,
		Dial: c.dial, Control: c.control}
	if c.Pool == PoolShared {
		wc.MaxConns, wc.MaxIdle = 0, 100_000
	}
	return wire.New(wc)
}

// recorder is what an agent reports requests to; asset marks a page's
// asset, accounted apart from the scored actions' requests.
type recorder interface {
	begin(endpoint string, asset bool, at time.Time) flight
	request(endpoint string, d time.Duration, asset bool, fl flight)
	failed(endpoint string, took time.Duration, timeout, asset bool, fl flight)
}

type nopRecorder struct{}

func (nopRecorder) begin(string, bool, time.Time) flight             { return noFlight }
func (nopRecorder) request(string, time.Duration, bool, flight)      {}
func (nopRecorder) failed(string, time.Duration, bool, bool, flight) {}

// Agent is one virtual user's browser: its own cookie jar and cache, redirects
// left to the scenario, gzip, timeouts, a body size cap, and asset checks
// against the problem's manifest. An Agent is not shared between users, but
// it may run requests concurrently (as FetchAssets does).
type Agent struct {
	base     *url.URL
	cfg      AgentConfig
	tr       *wire.Transport
	jar      atomic.Pointer[cookiejar.Jar] // made at the first cookie
	cache    *httpcache.Cache
	rec      recorder
	manifest Manifest
	clock    Clock
	skew     *skew                  // learns the target's clock from Dates; nil during the load
	host     atomic.Pointer[string] // SetHost's; nil: the target's
	links    atomic.Pointer[linksMemo]
	inspect  atomic.Pointer[Check] // Inspect's; nil: none
}

// NewAgent returns a standalone agent for base (for tests and tools); inside a
// run use Run.NewAgent, which shares the run's pool and statistics.
func NewAgent(base *url.URL, cfg AgentConfig, manifest Manifest) *Agent {
	cfg = cfg.withDefaults()
	return newAgent(base, cfg, newTransport(cfg), nopRecorder{}, manifest, SteadyClock())
}

func newAgent(base *url.URL, cfg AgentConfig, tr *wire.Transport, rec recorder, manifest Manifest, clock Clock) *Agent {
	a := &Agent{base: base, cfg: cfg, tr: tr, rec: rec, manifest: manifest, clock: clock}
	if !cfg.NoCache {
		a.cache = httpcache.New(DefaultCacheEntries)
	}
	return a
}

// ClearCookies forgets every cookie, as a browser does when its user
// clears them: a session that ends without signing out leaves none behind
// for the agent's next session.
func (a *Agent) ClearCookies() { a.jar.Store(nil) }

// SetHost makes the agent's requests name host (a name, with or without a
// port) in their Host header while still connecting to the target, as a
// browser does for a name that resolves to the target's address: a virtual
// host, such as a tenant's "acme.t.localhost". Cookies and cached answers
// are kept per host, as a browser keeps them per site. "" goes back to the
// target's own host. A request's own "Host" header outranks it.
func (a *Agent) SetHost(host string) {
	if host == "" {
		a.host.Store(nil)
		return
	}
	a.host.Store(&host)
}

// Inspect makes the agent pass every answer the app gives it to check
// before anyone reads it: whatever its status, a page's assets included, a
// 304 with the cached body it confirms. An answer the agent's own cache gives
// without a request is not passed again. The check's failure is the request's
// error. Scenarios scan with it for what the viewer may not see, wherever an
// app might put it (an error page, a hidden element, a comment). nil stops
// the inspection.
func (a *Agent) Inspect(check Check) {
	if check == nil {
		a.inspect.Store(nil)
		return
	}
	a.inspect.Store(&check)
}

// Host is the host the agent's requests name: SetHost's, or the target's.
func (a *Agent) Host() string {
	if h := a.host.Load(); h != nil {
		return *h
	}
	return a.base.Host
}

// SetCookie keeps c in the agent's jar for its current host (SetHost's, or
// the target's), as if a page of that host had set it: the agent sends it
// with every later request to that host that c's Path and Secure allow,
// until ClearCookies or an answer replaces it. A scenario gives a user a
// credential it made itself (a signed token) this way.
func (a *Agent) SetCookie(c *http.Cookie) {
	u := a.base
	if h := a.host.Load(); h != nil {
		u = &url.URL{Scheme: a.base.Scheme, Host: *h, Path: "/"}
	}
	a.jarFor().SetCookies(u, []*http.Cookie{c})
}

// Close releases the agent's idle connections.
func (a *Agent) Close() { a.tr.CloseIdleConnections() }

// Base is the target's base URL.
func (a *Agent) Base() *url.URL { return a.base }

// Response is a fully read answer. Body is never nil for a successful request.
type Response struct {
	Endpoint   string
	Method     string
	URL        *url.URL
	StatusCode int
	Header     http.Header
	Body       []byte
	// Sent and Received are the run clock's times around the request.
	Sent, Received time.Time
	Elapsed        time.Duration
	// FromCache: the agent's cache answered without a request.
	FromCache bool
	// Asset: the answer to a page's asset (FetchAssets), whose body is
	// compared with the manifest's SHA-256 after the inspection.
	Asset bool
	// Revalidated: a 304 answered a conditional request; StatusCode is 200,
	// Body is the cached body and Header the cached headers updated with the
	// 304's.
	Revalidated bool
	root        *html.Node // the parsed body, once parsed
	doc         *goquery.Document
}

// Request names the response's request for messages: "GET /path".
func (r *Response) Request() string { return r.Method + " " + r.URL.RequestURI() }

// Get fetches path (relative to the target) and names it endpoint in
// statistics and messages, e.g. "GET /articles/{id}".
func (a *Agent) Get(ctx context.Context, endpoint, path string) (*Response, error) {
	return a.Do(ctx, endpoint, http.MethodGet, path, nil, nil)
}

// PostForm posts form fields, url-encoded.
func (a *Agent) PostForm(ctx context.Context, endpoint, path string, form url.Values) (*Response, error) {
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	return a.Do(ctx, endpoint, http.MethodPost, path, h, []byte(form.Encode()))
}

// Expect sends a request that must pass checks (such as what cookies an
// answer may set) and then answer status: a GET when form is nil, else a
// POST of form. Scenarios check refusals with it (a wrong password, a page
// for the signed-in only).
func (a *Agent) Expect(ctx context.Context, endpoint, path string, form url.Values, status int, checks ...Check) error {
	var res *Response
	var err error
	if form == nil {
		res, err = a.Get(ctx, endpoint, path)
	} else {
		res, err = a.PostForm(ctx, endpoint, path, form)
	}
	if err != nil {
		return err
	}
	return res.Check(append(checks, Status(status))...)
}

// Do sends one request. Errors are *Error values: timeouts are ClassTimeout,
// transport failures and oversized bodies ClassApplication, and a request cut
// off because ctx ended wraps ErrCutOff.
func (a *Agent) Do(ctx context.Context, endpoint, method, path string, header http.Header, body []byte) (*Response, error) {
	return a.do(ctx, endpoint, method, path, header, body, false, 0)
}

// DoWithin is Do with a time limit of its own, in place of the agent's
// FirstByteTimeout and RequestTimeout: for a request the scenario's rules
// allow longer, such as a report.
func (a *Agent) DoWithin(ctx context.Context, limit time.Duration, endpoint, method, path string, header http.Header, body []byte) (*Response, error) {
	if limit <= 0 {
		return nil, Internalf("bad-limit", "a request's own time limit must be positive, got %s", limit)
	}
	return a.do(ctx, endpoint, method, path, header, body, false, limit)
}

// do is Do; asset marks a page's asset, which the run accounts apart from
// the scored actions' requests; limit, if not 0, is the request's own time
// limit (see DoWithin).
func (a *Agent) do(ctx context.Context, endpoint, method, path string, header http.Header, body []byte, asset bool, limit time.Duration) (*Response, error) {
	u, err := a.resolve(path)
	if err != nil {
		return nil, Internalf("bad-path", "cannot resolve %q: %v", path, err)
	}
	res := &Response{Endpoint: endpoint, Method: method, URL: u, Asset: asset}
	// site is the URL as the user's browser names it: with a virtual host
	// (the request's Host header, or SetHost's), cookies and cached answers
	// belong to that host, not to the address connected to.
	site, host := u, ""
	if h := header.Get("Host"); h != "" {
		host = h
	} else if h := a.host.Load(); h != nil {
		host = *h
	}
	if host != "" && host != u.Host {
		site = &url.URL{Scheme: u.Scheme, Host: host, Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	}
	var entry *httpcache.Entry
	var key string // the cache's key, made only when the cache is used
	if method == http.MethodGet && a.cache != nil && !a.cache.Empty() {
		key = site.String()
		entry = a.cache.Lookup(key)
		if entry != nil && entry.Fresh(a.clock.Now()) {
			res.StatusCode, res.Header, res.Body, res.FromCache = entry.Status, entry.Header, entry.Body, true
			res.Sent, res.Received = a.clock.Now(), a.clock.Now()
			return res, nil
		}
	}
	rq := wire.Request{Method: method, URL: u, Host: host, Header: header, Body: body, UserAgent: a.cfg.UserAgent,
		Timeout: limit}
	if jar := a.jar.Load(); jar != nil {
		rq.Cookie = cookieHeader(jar.Cookies(site))
	}
	if entry != nil {
		rq.IfNoneMatch, rq.IfModifiedSince = entry.ETag, entry.LastModified
	}

	res.Sent = a.clock.Now()
	fl := a.rec.begin(endpoint, asset, res.Sent)
	wr, err := a.tr.RoundTrip(ctx, &rq)
	if err != nil {
		// The scenario's own fault: nothing was sent.
		if re, ok := err.(*wire.RequestError); ok {
			e := Internalf("bad-request", "%s", re.Message)
			e.Request, e.URL = endpoint, u.String()
			return nil, e
		}
		return nil, a.failed(ctx, endpoint, u, err, a.clock.Now().Sub(res.Sent), asset, limit, fl)
	}
	res.Received = a.clock.Now()
	res.Elapsed = res.Received.Sub(res.Sent)
	a.rec.request(endpoint, res.Elapsed, asset, fl)
	if date := wr.Header["Date"]; a.skew != nil && len(date) > 0 {
		a.skew.observe(date[0], res.Sent, res.Received)
	}
	res.StatusCode, res.Header, res.Body = wr.Status, wr.Header, wr.Body
	if _, ok := wr.Header["Set-Cookie"]; ok {
		a.setCookies(site, wr.Header)
	}

	if a.cache != nil && method == http.MethodGet {
		switch {
		case wr.Status == http.StatusNotModified && entry != nil:
			entry.Refresh(wr.Header, a.clock.Now())
			res.StatusCode, res.Header, res.Body, res.Revalidated = entry.Status, entry.Header, entry.Body, true
		case entry != nil || httpcache.Cacheable(wr.Header):
			if key == "" {
				key = site.String()
			}
			a.cache.Store(key, wr.Status, wr.Header, wr.Body, a.clock.Now())
		}
	}
	if check := a.inspect.Load(); check != nil {
		if err := res.Check(*check); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// resolve is base.Parse(path), without parsing the common case: an
// absolute path of plain characters, with or without a plain query.
func (a *Agent) resolve(path string) (*url.URL, error) {
	if p, q, ok := plainPath(path); ok && a.base.Opaque == "" {
		return &url.URL{Scheme: a.base.Scheme, User: a.base.User, Host: a.base.Host, Path: p, RawQuery: q}, nil
	}
	return a.base.Parse(path)
}

// plainPath splits "/a/b?q" when resolving it against any base gives that
// path and query unchanged: no dot segments, no empty segments, no escapes
// in the path, nothing a URL would encode differently.
func plainPath(s string) (path, query string, ok bool) {
	path, query, hasQuery := strings.Cut(s, "?")
	if len(path) == 0 || path[0] != '/' || (hasQuery && query == "") {
		return "", "", false
	}
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '~':
		case c == '/':
			if i+1 < len(path) && (path[i+1] == '/' || path[i+1] == '.') {
				return "", "", false // an empty segment, or one that starts with a dot
			}
		case c == '.' && i > 0 && path[i-1] != '/':
		default:
			return "", "", false
		}
	}
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-_.~=&%+,:@/", c) >= 0:
		default:
			return "", "", false
		}
	}
	return path, query, true
}

// cookieHeader is the Cookie header of the jar's cookies for a request.
func cookieHeader(cookies []*http.Cookie) string {
	switch len(cookies) {
	case 0:
		return ""
	case 1:
		return cookies[0].String()
	}
	var b strings.Builder
	for i, c := range cookies {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// setCookies keeps a response's cookies in the agent's jar, made at the
// first cookie.
func (a *Agent) setCookies(u *url.URL, h http.Header) {
	cookies := (&http.Response{Header: h}).Cookies()
	if len(cookies) == 0 {
		return
	}
	a.jarFor().SetCookies(u, cookies)
}

// jarFor returns the agent's jar, made at the first cookie.
func (a *Agent) jarFor() *cookiejar.Jar {
	jar := a.jar.Load()
	if jar == nil {
		jar, _ = cookiejar.New(nil) // never fails without options
		if !a.jar.CompareAndSwap(nil, jar) {
			jar = a.jar.Load()
		}
	}
	return jar
}

// failed classifies a request's transport error and records it.
func (a *Agent) failed(ctx context.Context, endpoint string, u *url.URL, err error, took time.Duration, asset bool, limit time.Duration, fl flight) *Error {
	e := a.classify(ctx, endpoint, u, err, took, limit)
	a.rec.failed(endpoint, took, e.Class == ClassTimeout, asset, fl)
	return e
}

// classify turns a transport error into an *Error, in plain language: what
// happened, and the limit it passed. The message is the same for every
// request that failed the same way (contestants see each distinct message
// once, with a count); the staff log's detail adds how long this request took.
// ctx is the caller's context: its end cuts the request off; own, if not 0,
// is the request's own time limit.
func (a *Agent) classify(ctx context.Context, endpoint string, u *url.URL, err error, took, own time.Duration) *Error {
	e := &Error{Request: endpoint, URL: u.String(), Class: ClassApplication, Code: "connection",
		Detail: fmt.Errorf("after %s: %w", took.Round(time.Millisecond), err)}
	var we *wire.Error
	stage, limit := wire.StageHeaders, wire.LimitNone
	if errors.As(err, &we) {
		stage, limit = we.Stage, we.Limit
	}
	switch {
	case ctx.Err() != nil, we != nil && we.CutOff:
		e.Code, e.Message, e.Detail = "cut-off", "cut off by the end of the phase", fmt.Errorf("%w: %v", ErrCutOff, err)
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		// Out of file descriptors while dialling: the benchmarker's own
		// limit, not the app's fault.
		e.Class, e.Code = ClassInternal, "open-files"
		e.Message = "the benchmarker ran out of open files (raise its ulimit -n, or lower the users)"
	case errors.Is(err, wire.ErrBodyTooLarge):
		e.Code, e.Message = "too-large", fmt.Sprintf("response body larger than %d bytes", a.cfg.MaxBodyBytes)
	case limit == wire.LimitConnect:
		e.Class, e.Code = ClassTimeout, "connect-timeout"
		e.Message = fmt.Sprintf("could not connect within %s (is the target's listen queue full?)", a.cfg.ConnectTimeout)
	case limit == wire.LimitTLS:
		e.Class, e.Code = ClassTimeout, "connect-timeout"
		e.Message = fmt.Sprintf("no TLS handshake within %s", a.cfg.ConnectTimeout)
	case limit == wire.LimitHeaders:
		e.Class, e.Code = ClassTimeout, "timeout"
		e.Message = fmt.Sprintf("no response headers within %s", cmp.Or(own, a.cfg.FirstByteTimeout))
	case limit == wire.LimitWhole:
		e.Class, e.Code = ClassTimeout, "timeout"
		e.Message = fmt.Sprintf("no complete response within %s", cmp.Or(own, a.cfg.RequestTimeout))
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Message = "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		e.Message = "connection reset by the target"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		if stage == wire.StageBody {
			e.Message = "connection closed before the response body was complete"
		} else {
			e.Message = "connection closed without a response"
		}
	case wire.IsMalformed(err):
		e.Message = "malformed HTTP response"
	default:
		e.Message = "request failed: " + shortError(err)
	}
	return e
}

// shortError strips Go's "Get \"url\": " prefixes from a transport error.
func shortError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// Location returns the response's Location header resolved against its URL.
func (r *Response) Location() (*url.URL, error) {
	loc := r.Header.Get("Location")
	if loc == "" {
		return nil, &Error{Code: "redirect", Request: r.Endpoint, Message: fmt.Sprintf("expected a Location header with status %d", r.StatusCode)}
	}
	u, err := r.URL.Parse(loc)
	if err != nil {
		return nil, &Error{Code: "redirect", Request: r.Endpoint, Message: fmt.Sprintf("invalid Location header %q", loc)}
	}
	return u, nil
}

// Document parses the body as HTML once and returns it.
func (r *Response) Document() (*goquery.Document, error) {
	if r.doc != nil {
		return r.doc, nil
	}
	root, err := r.node()
	if err != nil {
		return nil, err
	}
	doc := goquery.NewDocumentFromNode(root)
	doc.Url = r.URL
	r.doc = doc
	return doc, nil
}

// node parses the body as HTML once and returns its document node; the
// checks that need no goquery selection read it directly.
func (r *Response) node() (*html.Node, error) {
	if r.root != nil {
		return r.root, nil
	}
	root, err := dom.Parse(r.Body)
	if err != nil {
		return nil, &Error{Code: "html", Request: r.Endpoint, Message: "response is not parseable HTML", Detail: err}
	}
	r.root = root
	return root, nil
}
