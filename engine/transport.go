package engine

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// transport is the HTTP/1.1 client behind agents. It keeps what a browser
// keeps (connections per host up to a limit, reused while the server allows)
// and does each request on its caller's goroutine: no reader or writer
// goroutine per connection, and an idle connection holds no buffer, so idle
// users cost little and a request costs few allocations.
//
// Its timeouts are AgentConfig's: ConnectTimeout for the TCP connection (and
// the TLS handshake), FirstByteTimeout from the request written to the end of
// the response headers, RequestTimeout for everything (a wait for a free
// connection included). A request on a reused connection that the server had
// closed is retried once on another when that is safe, as net/http does.
type transport struct {
	cfg      AgentConfig
	maxConns int // per host; 0: no limit
	maxIdle  int // per host
	tlsConf  *tls.Config
	bufs     *buffers

	mu    sync.Mutex
	hosts []*hostConns // nearly always one: the target
}

// newTransport builds the one place connection policy is decided.
func newTransport(c AgentConfig) *transport {
	t := &transport{cfg: c, maxConns: DefaultMaxConnsPerUser, maxIdle: DefaultMaxIdlePerUser,
		tlsConf: &tls.Config{InsecureSkipVerify: true}, // contest targets often use self-signed certificates
		bufs:    &buffers{}}
	if c.Pool == PoolShared {
		t.maxConns, t.maxIdle = 0, 100_000
	}
	return t
}

// perUser returns a transport with t's policy and its own connections,
// sharing t's TLS configuration and scratch buffers.
func (t *transport) perUser() *transport {
	return &transport{cfg: t.cfg, maxConns: DefaultMaxConnsPerUser, maxIdle: DefaultMaxIdlePerUser, tlsConf: t.tlsConf, bufs: t.bufs}
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
	idle         []*conn      // most recently used last
	open         int          // connections open or being dialed
	waiting      []chan *conn // requests waiting for a connection; nil: dial one
}

func (t *transport) hostFor(u *url.URL) *hostConns {
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
func (t *transport) CloseIdleConnections() {
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

// wireLimit names the limit a timed-out request passed.
type wireLimit int

const (
	limitNone    wireLimit = iota
	limitConnect           // no TCP connection within ConnectTimeout
	limitTLS               // no TLS handshake within ConnectTimeout
	limitHeaders           // no response headers within FirstByteTimeout
	limitWhole             // no complete response within RequestTimeout
)

// wireStage is how far a failed request got.
type wireStage int

const (
	stageConnect wireStage = iota
	stageSend
	stageHeaders
	stageBody
)

// wireError is a transport failure with what classify needs to name it.
type wireError struct {
	stage  wireStage
	limit  wireLimit // the limit passed, for a timeout
	cutOff bool      // ended by the caller's context's deadline
	err    error
}

func (e *wireError) Error() string { return e.err.Error() }
func (e *wireError) Unwrap() error { return e.err }

// wireRequest is what an agent asks the transport to send.
type wireRequest struct {
	method string
	u      *url.URL
	host   string      // the Host header's value; "": u's host
	header http.Header // the scenario's own headers
	body   []byte
	ua     string
	cookie string // the jar's cookies for u, "name=value; ..."
	// A cached response's validators, for a conditional request.
	ifNoneMatch, ifModifiedSince string
	// limit, if not 0, replaces FirstByteTimeout and RequestTimeout.
	limit time.Duration
}

// wireResponse is a complete response.
type wireResponse struct {
	status int
	header http.Header
	body   []byte
}

// roundTrip sends rq and reads the whole response.
func (t *transport) roundTrip(ctx context.Context, rq *wireRequest) (wireResponse, error) {
	if err := validRequest(rq); err != nil {
		return wireResponse{}, err
	}
	start := time.Now()
	whole := start.Add(cmp.Or(rq.limit, t.cfg.RequestTimeout))
	h := t.hostFor(rq.u)
	replayable := (rq.method == http.MethodGet || rq.method == http.MethodHead) && len(rq.body) == 0
	for {
		c, err := t.get(ctx, h, whole, !replayable)
		if err != nil {
			return wireResponse{}, err
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
		return wireResponse{}, err
	}
}

// validRequest refuses what net/http would refuse to send: these are the
// scenario's faults, never the target's.
func validRequest(rq *wireRequest) error {
	switch rq.method {
	case http.MethodGet, http.MethodPost, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions:
	default:
		if !isToken(rq.method) {
			return Internalf("bad-request", "invalid method %q", rq.method)
		}
	}
	if rq.u.Scheme != "http" && rq.u.Scheme != "https" {
		return Internalf("bad-request", "unsupported protocol scheme %q", rq.u.Scheme)
	}
	if rq.u.Host == "" {
		return Internalf("bad-request", "no host in request URL %s", rq.u)
	}
	if rq.host != "" && strings.ContainsFunc(rq.host, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		return Internalf("bad-request", "invalid Host %q", rq.host)
	}
	for k, vv := range rq.header {
		if !isToken(k) {
			return Internalf("bad-request", "invalid header field name %q", k)
		}
		for _, v := range vv {
			if !validFieldValue(v) {
				return Internalf("bad-request", "invalid header field value for %q", k)
			}
		}
	}
	return nil
}

// get returns an idle connection to h or a new one; when h has as many as
// it may, it waits for one to come back or to close.
func (t *transport) get(ctx context.Context, h *hostConns, whole time.Time, mustBeOpen bool) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, &wireError{stage: stageConnect, err: err}
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
		if now.Sub(c.idleAt) < DefaultIdleConnTimeout && (!mustBeOpen || c.stillOpen(now)) {
			return c, nil
		}
		t.discard(c)
	}
	if t.maxConns == 0 || h.open < t.maxConns {
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
		err = &wireError{stage: stageConnect, limit: limitWhole, err: os.ErrDeadlineExceeded}
	}
	t.mu.Lock()
	for i, w := range h.waiting {
		if w == ch {
			h.waiting = append(h.waiting[:i], h.waiting[i+1:]...)
			t.mu.Unlock()
			return nil, asWireError(stageConnect, err)
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
	return nil, asWireError(stageConnect, err)
}

func asWireError(stage wireStage, err error) error {
	var we *wireError
	if errors.As(err, &we) {
		return we
	}
	return &wireError{stage: stage, err: err}
}

// put returns a connection that may carry another request.
func (t *transport) put(c *conn) {
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
	if len(h.idle) >= t.maxIdle {
		h.open--
		t.mu.Unlock()
		c.close()
		return
	}
	h.idle = append(h.idle, c)
	t.mu.Unlock()
}

// discard closes a connection that must not carry another request.
func (t *transport) discard(c *conn) {
	c.close()
	t.release(c.host)
}

// release gives up one connection's place in h.
func (t *transport) release(h *hostConns) {
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

func (t *transport) dialOrRelease(ctx context.Context, h *hostConns, whole time.Time) (*conn, error) {
	c, err := t.dial(ctx, h, whole)
	if err != nil {
		t.release(h)
		return nil, err
	}
	return c, nil
}

// dial connects to h within ConnectTimeout (and the whole request's time),
// with a TLS handshake for https.
func (t *transport) dial(ctx context.Context, h *hostConns, whole time.Time) (*conn, error) {
	deadline, limit := time.Now().Add(t.cfg.ConnectTimeout), limitConnect
	if !deadline.Before(whole) {
		deadline, limit = whole, limitWhole
	}
	dial := t.cfg.dial // an in-memory target's, in tests
	if dial == nil {
		dial = (&net.Dialer{Deadline: deadline, KeepAlive: 30 * time.Second, Control: t.cfg.control}).DialContext
	}
	nc, err := dial(ctx, "tcp", h.addr)
	if err != nil {
		we := &wireError{stage: stageConnect, err: err}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			if end, ok := ctx.Deadline(); ok && !end.After(deadline) {
				// net.Dialer stops at ctx's deadline, which has passed even
				// if ctx does not say so yet (its timer fires a little
				// later): the phase ended, the target is not to blame.
				we.cutOff = true
			} else if ctx.Err() == nil {
				we.limit = limit
			}
		}
		return nil, we
	}
	c := &conn{host: h, nc: nc}
	c.tcp, _ = nc.(*net.TCPConn)
	if h.scheme == "https" {
		if limit == limitConnect {
			limit = limitTLS
		}
		cfg := t.tlsConf.Clone()
		cfg.ServerName = h.serverName
		tc := tls.Client(nc, cfg)
		_ = nc.SetDeadline(deadline)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			we := &wireError{stage: stageConnect, err: err}
			if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil {
				we.limit = limit
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
func (t *transport) exchange(ctx context.Context, c *conn, rq *wireRequest, whole time.Time) (res wireResponse, keep, answered bool, err error) {
	c.watch(ctx)
	if err := ctx.Err(); err != nil {
		return res, false, false, &wireError{stage: stageSend, err: err}
	}
	scratch := t.bufs.bytes(&t.bufs.scratch)
	defer t.bufs.putBytes(&t.bufs.scratch, scratch)

	// Send.
	gz := rq.method != http.MethodHead && (len(rq.header) == 0 || rq.header.Get("Accept-Encoding") == "" && rq.header.Get("Range") == "")
	_ = c.nc.SetDeadline(whole)
	*scratch = appendRequest((*scratch)[:0], rq, gz, t.cfg.NoKeepAlive)
	if n, err := c.nc.Write(*scratch); err != nil {
		if n == 0 {
			err = fmt.Errorf("%w: %w", errNothingWritten, err)
		}
		return res, false, false, timeoutLimit(&wireError{stage: stageSend, err: err}, limitWhole)
	}

	// Response headers.
	headersLimit := limitWhole
	if hd := time.Now().Add(cmp.Or(rq.limit, t.cfg.FirstByteTimeout)); hd.Before(whole) {
		headersLimit = limitHeaders
		_ = c.nc.SetReadDeadline(hd)
	}
	br := t.bufs.reader(c.nc)
	defer t.bufs.putReader(br)
	var head responseHead
	head, answered, err = readHead(br, rq.method, (*scratch)[:0])
	if err != nil {
		return res, false, answered, timeoutLimit(&wireError{stage: stageHeaders, err: err}, headersLimit)
	}
	if headersLimit != limitWhole {
		_ = c.nc.SetReadDeadline(whole)
	}

	// Body.
	res.status, res.header = head.status, head.header
	res.body, err = t.readBody(br, &head, gz, t.cfg.MaxBodyBytes)
	if err != nil {
		return res, false, true, timeoutLimit(&wireError{stage: stageBody, err: err}, limitWhole)
	}
	// Bytes past the response are no answer to anything: the connection
	// cannot be trusted with another request.
	keep = !head.close && !t.cfg.NoKeepAlive && br.Buffered() == 0
	return res, keep, true, nil
}

// timeoutLimit names the limit of a timed-out I/O.
func timeoutLimit(e *wireError, limit wireLimit) *wireError {
	if errors.Is(e.err, os.ErrDeadlineExceeded) {
		e.limit = limit
	}
	return e
}

// reqExcluded are the scenario's headers the request line and the
// transport write themselves, as net/http does.
func reqExcluded(k string) bool {
	switch k {
	case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
		return true
	}
	return false
}

// appendRequest writes rq in HTTP/1.1.
func appendRequest(b []byte, rq *wireRequest, gzip, closeConn bool) []byte {
	b = append(b, rq.method...)
	b = append(b, ' ')
	b = append(b, rq.u.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	if rq.host != "" {
		b = append(b, rq.host...)
	} else {
		b = append(b, rq.u.Host...)
	}
	b = append(b, "\r\nUser-Agent: "...)
	b = append(b, rq.ua...)
	b = append(b, "\r\n"...)
	if len(rq.body) > 0 || (rq.method != http.MethodGet && rq.method != http.MethodHead) {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(rq.body)), 10)
		b = append(b, "\r\n"...)
	}
	if closeConn {
		b = append(b, "Connection: close\r\n"...)
	}
	// The jar's cookies join the scenario's first Cookie value in one
	// header, as net/http's client sends them.
	cookie := rq.cookie
	if own := rq.header.Get("Cookie"); own != "" && cookie != "" {
		cookie = own + "; " + cookie
	}
	if len(rq.header) > 0 {
		for _, k := range sortedKeys(rq.header) {
			if reqExcluded(k) || (k == "Cookie" && cookie != "") ||
				(k == "If-None-Match" && rq.ifNoneMatch != "") || (k == "If-Modified-Since" && rq.ifModifiedSince != "") {
				continue
			}
			for _, v := range rq.header[k] {
				b = appendHeader(b, k, textproto.TrimString(v))
			}
		}
	}
	if cookie != "" {
		b = appendHeader(b, "Cookie", cookie)
	}
	if rq.ifNoneMatch != "" {
		b = appendHeader(b, "If-None-Match", rq.ifNoneMatch)
	}
	if rq.ifModifiedSince != "" {
		b = appendHeader(b, "If-Modified-Since", rq.ifModifiedSince)
	}
	if gzip {
		b = append(b, "Accept-Encoding: gzip\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, rq.body...)
}

func appendHeader(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ": "...)
	b = append(b, v...)
	return append(b, "\r\n"...)
}

func sortedKeys(h http.Header) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// responseHead is a response's status and headers, and how its body is framed.
type responseHead struct {
	status  int
	header  http.Header
	length  int64 // -1: unknown (chunked, or up to the connection's close)
	chunked bool
	close   bool // the connection ends with this response
	noBody  bool
}

// readHead reads the status line and headers of the final response (skipping
// informational ones) with net/http's rules and errors. got says whether any
// byte of a response came.
func readHead(br *bufio.Reader, method string, scratch []byte) (head responseHead, got bool, err error) {
	budget := maxHeaderBytes
	for {
		line, err := readLine(br, &budget)
		if err != nil {
			if err == io.EOF {
				if got || len(line) > 0 {
					err = io.ErrUnexpectedEOF
				}
			}
			return head, got || len(line) > 0, err
		}
		got = true
		major, minor, status, err := parseStatusLine(line)
		if err != nil {
			return head, true, err
		}
		head.header, err = readHeader(br, &budget, scratch)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return head, true, err
		}
		head.status = status
		if err := frame(&head, method, major, minor); err != nil {
			return head, true, err
		}
		if status >= 100 && status <= 199 && status != http.StatusSwitchingProtocols {
			head = responseHead{}
			continue // informational: the final response follows
		}
		return head, true, nil
	}
}

// errHeaderTooLarge is net/http's message for headers past maxHeaderBytes.
var errHeaderTooLarge = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", maxHeaderBytes)

// readLine returns one line without its line ending; the slice is valid
// until the next read. Lines longer than the buffer are gathered.
func readLine(br *bufio.Reader, budget *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	*budget -= len(line)
	if err == bufio.ErrBufferFull {
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if *budget < 0 {
				return nil, errHeaderTooLarge
			}
			line, err = br.ReadSlice('\n')
			*budget -= len(line)
			long = append(long, line...)
		}
		line = long
	}
	if *budget < 0 {
		return nil, errHeaderTooLarge
	}
	if err != nil {
		if len(line) > 0 && err == io.EOF {
			return line, nil // the last line lacks its ending (a '\r' stays, as in bufio's ReadLine)
		}
		return line, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// parseStatusLine reads "HTTP/1.1 200 OK" as net/http's ReadResponse does.
func parseStatusLine(line []byte) (major, minor, status int, err error) {
	proto, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return 0, 0, 0, fmt.Errorf("malformed HTTP response %q", line)
	}
	rest = bytes.TrimLeft(rest, " ")
	code, _, _ := bytes.Cut(rest, []byte{' '})
	if len(code) != 3 {
		return 0, 0, 0, fmt.Errorf("malformed HTTP status code %q", code)
	}
	if '0' <= code[0] && code[0] <= '9' && '0' <= code[1] && code[1] <= '9' && '0' <= code[2] && code[2] <= '9' {
		status = int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0')
	} else if status, err = strconv.Atoi(string(code)); err != nil || status < 0 {
		return 0, 0, 0, fmt.Errorf("malformed HTTP status code %q", code)
	}
	if string(proto) == "HTTP/1.1" {
		return 1, 1, status, nil
	}
	if major, minor, ok = http.ParseHTTPVersion(string(proto)); !ok {
		return 0, 0, 0, fmt.Errorf("malformed HTTP version %q", proto)
	}
	return major, minor, status, nil
}

// headerField locates one header field in the header block being gathered.
type headerField struct{ k0, k1, v0, v1 int }

// readHeader reads header lines up to the blank line, with the rules of
// net/textproto's ReadMIMEHeader (continuation lines, keys canonicalized
// unless they hold a space, values trimmed, malformed lines refused). The
// fields' bytes are gathered in scratch and become one string: a response's
// headers cost a few allocations, however many there are.
func readHeader(br *bufio.Reader, budget *int, scratch []byte) (http.Header, error) {
	var stack [24]headerField
	fields := stack[:0]
	block := scratch[:0]
	// A field is gathered whole (continuation lines joined with one space,
	// each line trimmed) before it is read, as textproto does.
	var fieldBuf [256]byte
	pending := fieldBuf[:0]
	have, first := false, true
	for {
		line, err := readLine(br, budget)
		if err != nil {
			if have {
				var ferr error
				if block, fields, ferr = appendField(block, fields, pending); ferr != nil {
					return nil, ferr
				}
			}
			return nil, err
		}
		if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			if first {
				if len(line) > 80 { // textproto reads no more of such a line
					return nil, errors.New("message too large")
				}
				return nil, fmt.Errorf("malformed MIME header initial line: %q", line)
			}
			if have { // a continuation line
				pending = append(pending, ' ')
				pending = append(pending, trimSpaceTab(line)...)
				continue
			}
		}
		first = false
		if have {
			if block, fields, err = appendField(block, fields, pending); err != nil {
				return nil, err
			}
			have = false
		}
		if len(line) == 0 {
			break
		}
		line = trimSpaceTab(line)
		if bytes.IndexByte(line, ':') < 0 {
			return nil, fmt.Errorf("malformed MIME header: missing colon: %q", line)
		}
		pending = append(pending[:0], line...)
		have = true
	}
	h := make(http.Header, len(fields))
	if len(fields) == 0 {
		return h, nil
	}
	s := string(block)
	values := make([]string, len(fields))
	for i, f := range fields {
		key := canonicalKey(s[f.k0:f.k1])
		val := s[f.v0:f.v1]
		if vv, ok := h[key]; ok {
			h[key] = append(vv, val)
			continue
		}
		values[i] = val
		h[key] = values[i : i+1 : i+1]
	}
	return h, nil
}

// appendField reads one whole field ("Key: value") into block and fields.
func appendField(block []byte, fields []headerField, kv []byte) ([]byte, []headerField, error) {
	k, v, ok := bytes.Cut(kv, []byte{':'})
	if !ok || !validHeaderKey(k) {
		return block, fields, malformedLine(kv)
	}
	for _, c := range v {
		if !validHeaderValueByte(c) {
			return block, fields, malformedLine(kv)
		}
	}
	v = bytes.TrimLeft(v, " \t")
	f := headerField{k0: len(block)}
	block = append(block, k...)
	f.k1, f.v0 = len(block), len(block)
	block = append(block, v...)
	f.v1 = len(block)
	return block, append(fields, f), nil
}

// malformedLine copies the line into its error: the line itself stays
// where it is (a buffer on the stack, usually).
func malformedLine(kv []byte) error {
	return fmt.Errorf("malformed MIME header line: %q", string(kv))
}

// validHeaderKey: a token, or a token with spaces (kept as is, as
// textproto does); never empty.
func validHeaderKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if c != ' ' && !isTokenChar(c) {
			return false
		}
	}
	return true
}

// canonicalKey is textproto's canonical form ("Content-Type"); a key with a
// space stays as it came. An already canonical key is returned as is.
func canonicalKey(k string) string {
	if strings.IndexByte(k, ' ') >= 0 {
		return k
	}
	upper := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if (upper && 'a' <= c && c <= 'z') || (!upper && 'A' <= c && c <= 'Z') {
			return textproto.CanonicalMIMEHeaderKey(k)
		}
		upper = c == '-'
	}
	return k
}

func validHeaderValueByte(c byte) bool {
	return c >= 0x80 || (c >= 0x20 && c != 0x7f) || c == '\t'
}

func trimSpaceTab(s []byte) []byte {
	return bytes.TrimRight(bytes.TrimLeft(s, " \t"), " \t")
}

// unsupportedTE is net/http's error for a transfer encoding it does not read.
type unsupportedTE struct{ msg string }

func (e *unsupportedTE) Error() string { return e.msg }

// frame decides how the body is delimited, with net/http's rules for a
// response (and, as net/http's, it removes the Transfer-Encoding header, a
// Content-Length a chunked body overrides, and Connection: close).
func frame(head *responseHead, method string, major, minor int) error {
	h := head.header
	head.close = shouldClose(major, minor, h)
	if major == 0 && minor == 0 {
		major, minor = 1, 1 // as net/http reads the body of an "HTTP/0.0" answer
	}
	if te, ok := h["Transfer-Encoding"]; ok {
		delete(h, "Transfer-Encoding")
		if major > 1 || (major == 1 && minor >= 1) {
			if len(te) != 1 {
				return &unsupportedTE{fmt.Sprintf("too many transfer encodings: %q", te)}
			}
			if !strings.EqualFold(te[0], "chunked") {
				return &unsupportedTE{fmt.Sprintf("unsupported transfer encoding: %q", te[0])}
			}
			head.chunked = true
		}
	}
	var n int64 = -1
	if cls := h["Content-Length"]; len(cls) > 0 {
		first := textproto.TrimString(cls[0])
		for _, cl := range cls[1:] {
			if textproto.TrimString(cl) != first {
				return fmt.Errorf("http: message cannot contain multiple Content-Length headers; got %q", cls)
			}
		}
		if len(cls) > 1 {
			h["Content-Length"] = []string{first}
		}
		if first == "" {
			return fmt.Errorf("invalid empty Content-Length %q", first)
		}
		v, err := strconv.ParseUint(first, 10, 63)
		if err != nil {
			return fmt.Errorf("bad Content-Length %q", first)
		}
		n = int64(v)
	}
	bodyAllowed := !(head.status/100 == 1 || head.status == http.StatusNoContent || head.status == http.StatusNotModified)
	switch {
	case method == http.MethodHead || !bodyAllowed:
		head.noBody, head.length = true, 0
		if head.status == http.StatusSwitchingProtocols {
			// The connection now speaks something else: read it to its end.
			head.noBody, head.length, head.close = false, -1, true
		}
		return checkTrailer(h, head.chunked)
	case head.chunked:
		delete(h, "Content-Length")
		head.length = -1
	case n >= 0:
		head.length = n
	default:
		delete(h, "Content-Length")
		head.length, head.close = -1, true // up to the connection's close
	}
	return checkTrailer(h, head.chunked)
}

// checkTrailer applies net/http's rules to a Trailer header.
func checkTrailer(h http.Header, chunked bool) error {
	vv, ok := h["Trailer"]
	if !ok || !chunked {
		return nil
	}
	delete(h, "Trailer")
	for _, v := range vv {
		for _, key := range strings.Split(v, ",") {
			switch key = http.CanonicalHeaderKey(textproto.TrimString(key)); key {
			case "Transfer-Encoding", "Trailer", "Content-Length":
				return fmt.Errorf("bad trailer key %q", key)
			}
		}
	}
	return nil
}

func shouldClose(major, minor int, h http.Header) bool {
	if major < 1 {
		return true
	}
	conn := h["Connection"]
	hasClose := hasToken(conn, "close")
	if major == 1 && minor == 0 {
		return hasClose || !hasToken(conn, "keep-alive")
	}
	if hasClose {
		delete(h, "Connection")
	}
	return hasClose
}

// errBodyTooLarge is returned past the body size cap.
var errBodyTooLarge = errors.New("response body too large")

// emptyBody is the body of a response without one (never nil).
var emptyBody = []byte{}

// readBody reads the whole body, decompressing gzip when the request asked
// for it, up to limit bytes after decompression.
func (t *transport) readBody(br *bufio.Reader, head *responseHead, askedGzip bool, limit int64) ([]byte, error) {
	if head.noBody || head.length == 0 {
		return emptyBody, nil
	}
	if askedGzip && strings.EqualFold(head.header.Get("Content-Encoding"), "gzip") {
		delete(head.header, "Content-Encoding")
		delete(head.header, "Content-Length")
		var src io.Reader = br
		switch {
		case head.chunked:
			src = httputil.NewChunkedReader(br)
		case head.length > 0:
			src = &countedReader{br: br, n: head.length}
		}
		body, err := t.gunzip(src, limit)
		if err == nil && head.chunked {
			err = readTrailer(br)
		}
		return body, err
	}
	switch {
	case head.chunked:
		body, err := t.readAll(httputil.NewChunkedReader(br), limit)
		if err == nil {
			err = readTrailer(br)
		}
		return body, err
	case head.length > 0:
		if head.length > limit {
			return nil, fmt.Errorf("%w: more than %d bytes", errBodyTooLarge, limit)
		}
		body := make([]byte, head.length)
		if _, err := io.ReadFull(br, body); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return body, nil
	default:
		return t.readAll(br, limit)
	}
}

// readAll reads r to its end, up to limit bytes, into a body of exact size.
func (t *transport) readAll(r io.Reader, limit int64) ([]byte, error) {
	p := t.bufs.bytes(&t.bufs.bodies)
	defer t.bufs.putBytes(&t.bufs.bodies, p)
	b := *p
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			*p = b
			return nil, fmt.Errorf("%w: more than %d bytes", errBodyTooLarge, limit)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			*p = b
			return nil, err
		}
	}
	*p = b
	if len(b) == 0 {
		return emptyBody, nil
	}
	return bytes.Clone(b), nil
}

// gunzip decompresses a gzip body; like net/http, an empty body is an empty
// answer and a broken one is an error.
func (t *transport) gunzip(src io.Reader, limit int64) ([]byte, error) {
	var br io.Reader = src
	if _, ok := src.(io.ByteReader); !ok {
		b := t.bufs.reader(src)
		defer t.bufs.putReader(b)
		br = b
	}
	zr, _ := t.bufs.gzips.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(br)
	} else {
		err = zr.Reset(br)
	}
	if err == io.EOF {
		return emptyBody, nil
	}
	if err != nil {
		return nil, err
	}
	defer t.bufs.gzips.Put(zr)
	return t.readAll(zr, limit)
}

// readTrailer reads what follows a chunked body: a blank line, or trailer
// fields and a blank line (which net/http reads and the engine ignores).
func readTrailer(br *bufio.Reader) error {
	buf, err := br.Peek(2)
	if bytes.Equal(buf, []byte("\r\n")) {
		_, _ = br.Discard(2)
		return nil
	}
	if len(buf) < 2 {
		return errors.New("http: unexpected EOF reading trailer")
	}
	if err != nil {
		return err
	}
	// The trailer must end within the buffer, as net/http requires.
	for n := 4; ; n++ {
		buf, err := br.Peek(n)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			break
		}
		if err != nil {
			return errors.New("http: suspiciously long trailer after chunked body")
		}
	}
	if _, err := textproto.NewReader(br).ReadMIMEHeader(); err != nil {
		if err == io.EOF {
			return errors.New("http: unexpected EOF reading trailer")
		}
		return err
	}
	return nil
}

// countedReader reads exactly n bytes of br (a body of known length), as a
// byte reader so that a gzip reader needs no buffer of its own.
type countedReader struct {
	br *bufio.Reader
	n  int64
}

func (r *countedReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	n, err := r.br.Read(p)
	r.n -= int64(n)
	if err == io.EOF && r.n > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (r *countedReader) ReadByte() (byte, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	c, err := r.br.ReadByte()
	if err == io.EOF {
		return 0, io.ErrUnexpectedEOF
	}
	if err == nil {
		r.n--
	}
	return c, err
}

// isTokenChar reports a byte of an RFC 9110 token (a method, a field name).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

// validFieldValue refuses control characters (tab aside) in a header value.
func validFieldValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// hasToken reports whether comma-separated header values hold token,
// compared without case.
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.Trim(t, " \t"), token) {
				return true
			}
		}
	}
	return false
}
