// Package wire is the engine's HTTP/1.1 client: connections kept per host
// as a browser keeps them, each request written and its response read on the
// caller's goroutine with net/http's framing rules and errors, and each
// failure named by how far it got and the time limit it passed.
package wire

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"syscall"
	"time"
)

// Limits of a response's framing, the same as Go's net/http client's.
const (
	// maxHeaderBytes caps the status lines and headers of one response
	// (informational responses included).
	maxHeaderBytes = 10 << 20
	// readBufferSize is a connection's read buffer while it carries a request.
	readBufferSize = 4 << 10
	// tlsFreshReuse is how long an idle TLS connection may carry a request
	// that cannot be retried (a POST): a closed plain connection is seen by
	// peeking at its socket, a TLS one is not, so an older one is replaced.
	tlsFreshReuse = time.Second
)

// Config is a transport's policy. A zero field is no default: the engine
// sets every one, from its AgentConfig and its Default constants.
type Config struct {
	// ConnectTimeout bounds the TCP connection and the TLS handshake.
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds the wait from the request written to the end
	// of the response headers.
	FirstByteTimeout time.Duration
	// RequestTimeout bounds everything, a wait for a free connection
	// included.
	RequestTimeout time.Duration
	// MaxBodyBytes caps a response body (after decompression).
	MaxBodyBytes int64
	// NoKeepAlive opens a new connection for every request.
	NoKeepAlive bool
	// MaxConns caps the connections per host (0: no limit), and MaxIdle
	// those kept open between requests.
	MaxConns, MaxIdle int
	// IdleTimeout: a connection unused this long is closed rather than
	// used again.
	IdleTimeout time.Duration
	// Dial, if not nil, makes the connections in place of the network (an
	// in-memory target's, in tests).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Control vets each connection made to the network, as net.Dialer's.
	Control func(network, address string, c syscall.RawConn) error
}

// Transport is the HTTP/1.1 client behind agents. It keeps what a browser
// keeps (connections per host up to a limit, reused while the server allows)
// and does each request on its caller's goroutine: no reader or writer
// goroutine per connection, and an idle connection holds no buffer, so idle
// users cost little and a request costs few allocations.
//
// Its timeouts are Config's: ConnectTimeout for the TCP connection (and the
// TLS handshake), FirstByteTimeout from the request written to the end of
// the response headers, RequestTimeout for everything (a wait for a free
// connection included). A request on a reused connection that the server had
// closed is retried once on another when that is safe, as net/http does.
type Transport struct {
	cfg     Config
	tlsConf *tls.Config
	bufs    *buffers

	mu    sync.Mutex
	hosts []*hostConns // nearly always one: the target
}

// New returns a transport with c's policy and no connections yet.
func New(c Config) *Transport {
	return &Transport{cfg: c,
		// Contest targets often use self-signed certificates.
		tlsConf: &tls.Config{InsecureSkipVerify: true},
		bufs:    &buffers{}}
}

// PerUser returns a transport with t's policy and its own connections,
// sharing t's TLS configuration and scratch buffers.
func (t *Transport) PerUser() *Transport {
	return &Transport{cfg: t.cfg, tlsConf: t.tlsConf, bufs: t.bufs}
}

// buffers are the scratch memory requests borrow while they run.
type buffers struct {
	readers sync.Pool // *bufio.Reader of readBufferSize
	scratch sync.Pool // *[]byte: request bytes, then header lines
	bodies  sync.Pool // *[]byte: bodies of unknown length
	gzips   sync.Pool // *gzip.Reader
}

func (b *buffers) reader(r io.Reader) *bufio.Reader {
	if br, ok := b.readers.Get().(*bufio.Reader); ok {
		br.Reset(r)
		return br
	}
	return bufio.NewReaderSize(r, readBufferSize)
}

func (b *buffers) putReader(br *bufio.Reader) {
	br.Reset(nil)
	b.readers.Put(br)
}

func (b *buffers) bytes(pool *sync.Pool) *[]byte {
	if p, ok := pool.Get().(*[]byte); ok {
		*p = (*p)[:0]
		return p
	}
	s := make([]byte, 0, 1024)
	return &s
}

// putBytes keeps buffers up to 1 MiB; a larger one was for a rare body.
func (b *buffers) putBytes(pool *sync.Pool, p *[]byte) {
	if cap(*p) <= 1<<20 {
		pool.Put(p)
	}
}

type hostConns struct {
	scheme, host string // as in the URL
	addr         string // host:port to dial
	serverName   string
	idle         []*conn // most recently used last
	open         int     // connections open or being dialed
	// waiting are the requests waiting for a connection; one handed nil
	// may dial one.
	waiting []chan *conn
}

func (t *Transport) hostFor(u *url.URL) *hostConns {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, h := range t.hosts {
		if h.host == u.Host && h.scheme == u.Scheme {
			return h
		}
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	h := &hostConns{scheme: u.Scheme, host: u.Host, addr: net.JoinHostPort(u.Hostname(), port), serverName: u.Hostname()}
	t.hosts = append(t.hosts, h)
	return h
}

// CloseIdleConnections closes the connections no request is using.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	var idle []*conn
	for _, h := range t.hosts {
		idle = append(idle, h.idle...)
		h.open -= len(h.idle)
		clear(h.idle)
		h.idle = h.idle[:0]
	}
	t.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}

// conn is one connection to a host.
type conn struct {
	host   *hostConns
	nc     net.Conn     // what requests are written to and read from
	tcp    *net.TCPConn // the socket under nc, for the liveness probe
	isTLS  bool
	idleAt time.Time
	used   bool // it has carried a request: the next one reuses it

	// The watch on the context of the connection's requests: when it ends,
	// an I/O in flight is interrupted (the request is cut off).
	mu      sync.Mutex
	watched context.Context
	unwatch func() bool
}

// aLongTimeAgo is a deadline that has passed: it interrupts any I/O.
var aLongTimeAgo = time.Unix(1, 0)

// watch makes ctx's end interrupt the connection's I/O. A connection's
// requests nearly always share one context (a user's load phase), so the
// watch is set up once per connection, not once per request.
func (c *conn) watch(ctx context.Context) {
	c.mu.Lock()
	same := c.watched == ctx
	c.mu.Unlock()
	if same {
		return
	}
	if c.unwatch != nil {
		c.unwatch()
	}
	c.mu.Lock()
	c.watched, c.unwatch = ctx, nil
	c.mu.Unlock()
	if ctx.Done() != nil {
		c.unwatch = context.AfterFunc(ctx, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.watched == ctx { // not since reused for another context
				_ = c.nc.SetDeadline(aLongTimeAgo)
			}
		})
	}
}

func (c *conn) close() {
	if c.unwatch != nil {
		c.unwatch()
	}
	_ = c.nc.Close()
}

// Limit names the limit a timed-out request passed.
type Limit int

const (
	LimitNone    Limit = iota // not a timeout
	LimitConnect              // no TCP connection within ConnectTimeout
	LimitTLS                  // no TLS handshake within ConnectTimeout
	LimitHeaders              // no response headers within FirstByteTimeout
	LimitWhole                // no complete response within RequestTimeout
)

// Stage is how far a failed request got.
type Stage int

const (
	StageConnect Stage = iota // getting a connection
	StageSend                 // writing the request
	StageHeaders              // reading the response's status and headers
	StageBody                 // reading its body
)

// Error is a transport failure with what the engine needs to name it.
type Error struct {
	Stage  Stage
	Limit  Limit // the limit passed, for a timeout
	CutOff bool  // ended by the caller's context's deadline
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Request is what an agent asks the transport to send.
type Request struct {
	Method string
	URL    *url.URL
	// Host is the Host header's value; "": URL's host.
	Host string
	// Header holds the scenario's own headers.
	Header    http.Header
	Body      []byte
	UserAgent string
	// Cookie is the jar's cookies for URL, "name=value; ...".
	Cookie string
	// A cached response's validators, for a conditional request.
	IfNoneMatch, IfModifiedSince string
	// Timeout, if not 0, replaces FirstByteTimeout and RequestTimeout.
	Timeout time.Duration
}

// Response is a complete response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// RoundTrip sends rq and reads the whole response.
func (t *Transport) RoundTrip(ctx context.Context, rq *Request) (Response, error) {
	if err := validRequest(rq); err != nil {
		return Response{}, err
	}
	start := time.Now()
	whole := start.Add(cmp.Or(rq.Timeout, t.cfg.RequestTimeout))
	h := t.hostFor(rq.URL)
	replayable := (rq.Method == http.MethodGet || rq.Method == http.MethodHead) && len(rq.Body) == 0
	for {
		c, err := t.get(ctx, h, whole, !replayable)
		if err != nil {
			return Response{}, err
		}
		reused := c.used
		res, keep, answered, err := t.exchange(ctx, c, rq, whole)
		if err == nil {
			if keep {
				t.put(c)
			} else {
				t.discard(c)
			}
			return res, nil
		}
		t.discard(c)
		// The server closed a kept-alive connection before answering: try
		// again on another if the request may be sent twice, or was not sent.
		if reused && !answered && ctx.Err() == nil && !errors.Is(err, os.ErrDeadlineExceeded) &&
			(replayable || errors.Is(err, errNothingWritten)) {
			continue
		}
		return Response{}, err
	}
}

// get returns an idle connection to h or a new one; when h has as many as
// it may, it waits for one to come back or to close.
func (t *Transport) get(ctx context.Context, h *hostConns, whole time.Time, mustBeOpen bool) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Stage: StageConnect, Err: err}
	}
	now := time.Now()
	for {
		t.mu.Lock()
		var c *conn
		if n := len(h.idle); n > 0 {
			c = h.idle[n-1]
			h.idle[n-1] = nil
			h.idle = h.idle[:n-1]
		}
		if c == nil {
			break
		}
		t.mu.Unlock()
		if now.Sub(c.idleAt) < t.cfg.IdleTimeout && (!mustBeOpen || c.stillOpen(now)) {
			return c, nil
		}
		t.discard(c)
	}
	if t.cfg.MaxConns == 0 || h.open < t.cfg.MaxConns {
		h.open++
		t.mu.Unlock()
		return t.dialOrRelease(ctx, h, whole)
	}
	ch := make(chan *conn, 1)
	h.waiting = append(h.waiting, ch)
	t.mu.Unlock()

	timer := time.NewTimer(whole.Sub(now))
	defer timer.Stop()
	var err error
	select {
	case c := <-ch:
		if c == nil { // a connection closed: its place is ours
			return t.dialOrRelease(ctx, h, whole)
		}
		return c, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = &Error{Stage: StageConnect, Limit: LimitWhole, Err: os.ErrDeadlineExceeded}
	}
	t.mu.Lock()
	for i, w := range h.waiting {
		if w == ch {
			h.waiting = append(h.waiting[:i], h.waiting[i+1:]...)
			t.mu.Unlock()
			return nil, asError(StageConnect, err)
		}
	}
	t.mu.Unlock()
	// A connection, or the right to dial one, was handed over meanwhile:
	// pass it on.
	if c := <-ch; c != nil {
		t.put(c)
	} else {
		t.release(h)
	}
	return nil, asError(StageConnect, err)
}

func asError(stage Stage, err error) error {
	var we *Error
	if errors.As(err, &we) {
		return we
	}
	return &Error{Stage: stage, Err: err}
}

// put returns a connection that may carry another request.
func (t *Transport) put(c *conn) {
	h := c.host
	c.used = true
	c.idleAt = time.Now()
	t.mu.Lock()
	if len(h.waiting) > 0 {
		ch := h.waiting[0]
		h.waiting = h.waiting[1:]
		t.mu.Unlock()
		ch <- c
		return
	}
	if len(h.idle) >= t.cfg.MaxIdle {
		h.open--
		t.mu.Unlock()
		c.close()
		return
	}
	h.idle = append(h.idle, c)
	t.mu.Unlock()
}

// discard closes a connection that must not carry another request.
func (t *Transport) discard(c *conn) {
	c.close()
	t.release(c.host)
}

// release gives up one connection's place in h.
func (t *Transport) release(h *hostConns) {
	t.mu.Lock()
	if len(h.waiting) > 0 {
		ch := h.waiting[0]
		h.waiting = h.waiting[1:]
		t.mu.Unlock()
		ch <- nil
		return
	}
	h.open--
	t.mu.Unlock()
}

func (t *Transport) dialOrRelease(ctx context.Context, h *hostConns, whole time.Time) (*conn, error) {
	c, err := t.dial(ctx, h, whole)
	if err != nil {
		t.release(h)
		return nil, err
	}
	return c, nil
}

// dial connects to h within ConnectTimeout (and the whole request's time),
// with a TLS handshake for https.
func (t *Transport) dial(ctx context.Context, h *hostConns, whole time.Time) (*conn, error) {
	deadline, limit := time.Now().Add(t.cfg.ConnectTimeout), LimitConnect
	if !deadline.Before(whole) {
		deadline, limit = whole, LimitWhole
	}
	dial := t.cfg.Dial // an in-memory target's, in tests
	if dial == nil {
		dial = (&net.Dialer{Deadline: deadline, KeepAlive: 30 * time.Second, Control: t.cfg.Control}).DialContext
	}
	nc, err := dial(ctx, "tcp", h.addr)
	if err != nil {
		we := &Error{Stage: StageConnect, Err: err}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			if end, ok := ctx.Deadline(); ok && !end.After(deadline) {
				// net.Dialer stops at ctx's deadline, which has passed even
				// if ctx does not say so yet (its timer fires a little
				// later): the phase ended, the target is not to blame.
				we.CutOff = true
			} else if ctx.Err() == nil {
				we.Limit = limit
			}
		}
		return nil, we
	}
	c := &conn{host: h, nc: nc}
	c.tcp, _ = nc.(*net.TCPConn)
	if h.scheme == "https" {
		if limit == LimitConnect {
			limit = LimitTLS
		}
		cfg := t.tlsConf.Clone()
		cfg.ServerName = h.serverName
		tc := tls.Client(nc, cfg)
		_ = nc.SetDeadline(deadline)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			we := &Error{Stage: StageConnect, Err: err}
			if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil {
				we.Limit = limit
			}
			return nil, we
		}
		c.nc, c.isTLS = tc, true
	}
	return c, nil
}

// stillOpen reports whether an idle connection may carry a request that
// cannot be retried: the server has not closed it (nor sent anything
// unasked, which would spoil the next response).
func (c *conn) stillOpen(now time.Time) bool {
	if c.isTLS {
		return now.Sub(c.idleAt) < tlsFreshReuse
	}
	if c.tcp == nil {
		return true
	}
	return socketQuiet(c.tcp)
}

// errNothingWritten marks a request whose connection failed before any of
// it was written: it can be sent again whatever it is.
var errNothingWritten = errors.New("nothing written")

// exchange writes the request and reads the whole response on c. keep says
// whether c may carry another request; answered, on an error, that some of
// the response had come (so the request must not be sent again).
func (t *Transport) exchange(ctx context.Context, c *conn, rq *Request, whole time.Time) (res Response, keep, answered bool, err error) {
	c.watch(ctx)
	if err := ctx.Err(); err != nil {
		return res, false, false, &Error{Stage: StageSend, Err: err}
	}
	scratch := t.bufs.bytes(&t.bufs.scratch)
	defer t.bufs.putBytes(&t.bufs.scratch, scratch)

	// Send.
	gz := rq.Method != http.MethodHead && (len(rq.Header) == 0 || rq.Header.Get("Accept-Encoding") == "" && rq.Header.Get("Range") == "")
	_ = c.nc.SetDeadline(whole)
	*scratch = appendRequest((*scratch)[:0], rq, gz, t.cfg.NoKeepAlive)
	if n, err := c.nc.Write(*scratch); err != nil {
		if n == 0 {
			err = fmt.Errorf("%w: %w", errNothingWritten, err)
		}
		return res, false, false, timeoutLimit(&Error{Stage: StageSend, Err: err}, LimitWhole)
	}

	// Response headers.
	headersLimit := LimitWhole
	if hd := time.Now().Add(cmp.Or(rq.Timeout, t.cfg.FirstByteTimeout)); hd.Before(whole) {
		headersLimit = LimitHeaders
		_ = c.nc.SetReadDeadline(hd)
	}
	br := t.bufs.reader(c.nc)
	defer t.bufs.putReader(br)
	var head responseHead
	head, answered, err = readHead(br, rq.Method, (*scratch)[:0])
	if err != nil {
		return res, false, answered, timeoutLimit(&Error{Stage: StageHeaders, Err: err}, headersLimit)
	}
	if headersLimit != LimitWhole {
		_ = c.nc.SetReadDeadline(whole)
	}

	// Body.
	res.Status, res.Header = head.status, head.header
	res.Body, err = t.readBody(br, &head, gz, t.cfg.MaxBodyBytes)
	if err != nil {
		return res, false, true, timeoutLimit(&Error{Stage: StageBody, Err: err}, LimitWhole)
	}
	// Bytes past the response are no answer to anything: the connection
	// cannot be trusted with another request.
	keep = !head.close && !t.cfg.NoKeepAlive && br.Buffered() == 0
	return res, keep, true, nil
}

// timeoutLimit names the limit of a timed-out I/O.
func timeoutLimit(e *Error, limit Limit) *Error {
	if errors.Is(e.Err, os.ErrDeadlineExceeded) {
		e.Limit = limit
	}
	return e
}
