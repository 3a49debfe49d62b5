package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/PuerkitoBio/goquery"
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
	// DefaultIdleConnTimeout closes a keep-alive connection unused this long.
	DefaultIdleConnTimeout = 30 * time.Second
	// DefaultAssetParallelism is how many assets of a page a user fetches at once.
	DefaultAssetParallelism = 4
)

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
	// UserAgent overrides the stable default "tunecon-bench/<version>".
	UserAgent string

	dial Dialer // WithDialer's; nil: the network's
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
	if c.UserAgent == "" {
		c.UserAgent = "tunecon-bench/" + Version
	}
	return c
}

// newTransport builds the one place connection policy is decided.
func newTransport(c AgentConfig) *http.Transport {
	perHost := DefaultMaxConnsPerUser
	maxConns := DefaultMaxConnsPerUser
	if c.Pool == PoolShared {
		perHost, maxConns = 100_000, 0
	}
	dial := c.dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: c.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
	}
	return &http.Transport{
		Proxy:                 nil, // a benchmark never goes through the environment's proxy
		DialContext:           dial,
		ResponseHeaderTimeout: c.FirstByteTimeout,
		TLSHandshakeTimeout:   c.ConnectTimeout,
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: true}, // contest targets often use self-signed certificates
		MaxIdleConnsPerHost:   perHost,
		MaxConnsPerHost:       maxConns,
		IdleConnTimeout:       DefaultIdleConnTimeout,
		DisableKeepAlives:     c.NoKeepAlive,
	}
}

// recorder is what an agent reports requests to.
type recorder interface {
	request(endpoint string, d time.Duration)
	failed(endpoint string, took time.Duration, timeout bool)
}

type nopRecorder struct{}

func (nopRecorder) request(string, time.Duration)      {}
func (nopRecorder) failed(string, time.Duration, bool) {}

// Agent is one virtual user's browser: its own cookie jar and cache, redirects
// left to the scenario, gzip, timeouts, a body size cap, and asset checks
// against the problem's manifest. An Agent is not shared between users.
type Agent struct {
	base     *url.URL
	cfg      AgentConfig
	client   *http.Client
	cache    *cache
	rec      recorder
	manifest Manifest
	clock    Clock
}

// NewAgent returns a standalone agent for base (for tests and tools); inside a
// run use Run.NewAgent, which shares the run's pool and statistics.
func NewAgent(base *url.URL, cfg AgentConfig, manifest Manifest) *Agent {
	cfg = cfg.withDefaults()
	return newAgent(base, cfg, newTransport(cfg), nopRecorder{}, manifest, WallClock)
}

func newAgent(base *url.URL, cfg AgentConfig, rt http.RoundTripper, rec recorder, manifest Manifest, clock Clock) *Agent {
	jar, _ := cookiejar.New(nil) // never fails without options
	a := &Agent{base: base, cfg: cfg, rec: rec, manifest: manifest, clock: clock}
	a.client = &http.Client{
		Transport:     rt,
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if !cfg.NoCache {
		a.cache = newCache()
	}
	return a
}

// Close releases the agent's idle connections.
func (a *Agent) Close() { a.client.CloseIdleConnections() }

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
	// Revalidated: a 304 answered a conditional request; StatusCode is 200
	// and Body is the cached body.
	Revalidated bool
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

// Do sends one request. Errors are *Error values: timeouts are ClassTimeout,
// transport failures and oversized bodies ClassApplication, and a request cut
// off because ctx ended wraps ErrCutOff.
func (a *Agent) Do(ctx context.Context, endpoint, method, path string, header http.Header, body []byte) (*Response, error) {
	u, err := a.base.Parse(path)
	if err != nil {
		return nil, Internalf("bad-path", "cannot resolve %q: %v", path, err)
	}
	res := &Response{Endpoint: endpoint, Method: method, URL: u}
	var entry *cacheEntry
	if method == http.MethodGet && a.cache != nil {
		entry = a.cache.lookup(u.String())
		if entry != nil && entry.fresh(a.clock.Now()) {
			res.StatusCode, res.Header, res.Body, res.FromCache = entry.status, entry.header, entry.body, true
			res.Sent, res.Received = a.clock.Now(), a.clock.Now()
			return res, nil
		}
	}
	rctx, cancel := context.WithTimeout(ctx, a.cfg.RequestTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(rctx, method, u.String(), rd)
	if err != nil {
		return nil, Internalf("bad-request", "cannot build request %s %s: %v", method, u, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", a.cfg.UserAgent)
	if entry != nil {
		entry.addValidators(req.Header)
	}

	res.Sent = a.clock.Now()
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, a.failed(ctx, rctx, endpoint, u, err, "headers", a.clock.Now().Sub(res.Sent))
	}
	data, err := readBody(resp.Body, resp.ContentLength, a.cfg.MaxBodyBytes)
	res.Received = a.clock.Now()
	res.Elapsed = res.Received.Sub(res.Sent)
	if err != nil {
		return nil, a.failed(ctx, rctx, endpoint, u, err, "body", res.Elapsed)
	}
	a.rec.request(endpoint, res.Elapsed)
	res.StatusCode, res.Header, res.Body = resp.StatusCode, resp.Header, data

	if a.cache != nil && method == http.MethodGet {
		switch {
		case resp.StatusCode == http.StatusNotModified && entry != nil:
			entry.refresh(resp.Header, a.clock.Now())
			res.StatusCode, res.Body, res.Revalidated = entry.status, entry.body, true
		case entry != nil || cacheable(resp.Header):
			a.cache.store(u.String(), resp.StatusCode, resp.Header, data, a.clock.Now())
		}
	}
	return res, nil
}

// errBodyTooLarge is returned by readBody past the size cap.
var errBodyTooLarge = errors.New("response body too large")

// readBody reads the whole body up to limit bytes and always closes it; a
// known length sizes the buffer once.
func readBody(body io.ReadCloser, length, limit int64) ([]byte, error) {
	defer body.Close()
	var buf bytes.Buffer
	if length > 0 && length <= limit {
		buf.Grow(int(length) + 1) // +1: ReadFrom needs room to see EOF
	}
	_, err := buf.ReadFrom(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", errBodyTooLarge, limit)
	}
	return buf.Bytes(), nil
}

// failed classifies a request's transport error and records it.
func (a *Agent) failed(ctx, rctx context.Context, endpoint string, u *url.URL, err error, stage string, took time.Duration) *Error {
	e := a.classify(ctx, rctx, endpoint, u, err, stage, took)
	a.rec.failed(endpoint, took, e.Class == ClassTimeout)
	return e
}

// classify turns a transport error into an *Error, in plain language: what
// happened, and the limit it passed. The message is the same for every
// request that failed the same way (contestants see each distinct message
// once, with a count); the staff log's detail adds how long this request took.
// ctx is the caller's context, rctx the request's own (with RequestTimeout);
// stage says whether the response headers had come.
func (a *Agent) classify(ctx, rctx context.Context, endpoint string, u *url.URL, err error, stage string, took time.Duration) *Error {
	e := &Error{Request: endpoint, URL: u.String(), Class: ClassApplication, Code: "connection",
		Detail: fmt.Errorf("after %s: %w", took.Round(time.Millisecond), err)}
	var ne net.Error
	var op *net.OpError
	dial := errors.As(err, &op) && op.Op == "dial"
	// Dial and header timeouts also match context.DeadlineExceeded: they are
	// told apart first, by what timed out, not by the error's type alone.
	timedOut := errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
	switch {
	case ctx.Err() != nil:
		e.Code, e.Message, e.Detail = "cut-off", "cut off by the end of the phase", fmt.Errorf("%w: %v", ErrCutOff, err)
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		// Out of file descriptors while dialling: the benchmarker's own
		// limit, not the app's fault.
		e.Class, e.Code = ClassInternal, "open-files"
		e.Message = "the benchmarker ran out of open files (raise its ulimit -n, or lower the users)"
	case errors.Is(err, errBodyTooLarge):
		e.Code, e.Message = "too-large", fmt.Sprintf("response body larger than %d bytes", a.cfg.MaxBodyBytes)
	case timedOut && dial && rctx.Err() == nil:
		e.Class, e.Code = ClassTimeout, "connect-timeout"
		e.Message = fmt.Sprintf("could not connect within %s (is the target's listen queue full?)", a.cfg.ConnectTimeout)
	case timedOut && rctx.Err() == context.DeadlineExceeded:
		e.Class, e.Code = ClassTimeout, "timeout"
		e.Message = fmt.Sprintf("no complete response within %s", a.cfg.RequestTimeout)
	case timedOut && stage == "headers":
		e.Class, e.Code = ClassTimeout, "timeout"
		e.Message = fmt.Sprintf("no response headers within %s", a.cfg.FirstByteTimeout)
	case timedOut:
		e.Class, e.Code = ClassTimeout, "timeout"
		e.Message = fmt.Sprintf("response body not complete within %s", a.cfg.RequestTimeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Message = "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		e.Message = "connection reset by the target"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		if stage == "body" {
			e.Message = "connection closed before the response body was complete"
		} else {
			e.Message = "connection closed without a response"
		}
	case looksMalformed(err):
		e.Message = "malformed HTTP response"
	default:
		e.Message = "request failed: " + shortError(err)
	}
	return e
}

// looksMalformed reports a response that is not valid HTTP; net/http gives
// these no typed errors, so the words of its messages are matched.
func looksMalformed(err error) bool {
	msg := err.Error()
	for _, w := range []string{"malformed", "invalid", "gzip", "bad header", "unsupported transfer encoding"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
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
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		return nil, &Error{Code: "html", Request: r.Endpoint, Message: "response is not parseable HTML", Detail: err}
	}
	doc.Url = r.URL
	r.doc = doc
	return doc, nil
}
