// Package services is the dashboard problem's external services, which the
// benchmarker hosts in its own process (MANUAL.md, "The external services"):
// postal, postal2, surname, givenname and weather on a plain HTTP/1.1 listener,
// security and attacked on an HTTPS listener that offers HTTP/2 and HTTP/1.1.
//
// The services are slow on purpose and hold any number of requests: every
// latency is a timer wait, never work. Every answer is also a pure function, of
// its parameters and of the Services' secret, that the benchmarker calls to
// check what the app relays: the Facts' Address, SearchSurnames,
// SearchGivenNames and Forecast, and, for the answers signed with the secret,
// CheckOnetime, AttackedAt and AttackedKeys. The secret is drawn for each run
// and never leaves the process, so that no app can compute an answer from this
// package's public code instead of asking the services.
package services

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"math/big"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// Config is what Start needs.
type Config struct {
	// Seed drives the attacked list's schedule.
	Seed uint64
	// Secret is the secret the answers are drawn from (see Facts) and signed
	// with: when empty, Start draws 32 bytes from crypto/rand, a secret of the
	// Services alone, which no seed reproduces. Tests that need the same
	// answers twice pass one.
	Secret []byte
	// Now is the clock (time.Now when nil). Weather periods, the attacked
	// list's versions, Last-Modified dates and the onetime tokens' issue times
	// all follow it; the latencies are real time.
	Now func() time.Time
	// Latency scales every service latency (1 when zero), so that tests run
	// fast. Negative is an error.
	Latency float64
	// Host is the address the services listen on (127.0.0.1 when nil): the
	// benchmarker's own address on the network it reaches the app over, so
	// that an app on another machine reaches them too.
	Host net.IP
}

// The services' latencies, before Config.Latency scales them (MANUAL.md's
// table).
const (
	postalLatency      = 100 * time.Millisecond // postal, postal2, surname, givenname
	weatherLatency     = 500 * time.Millisecond
	securityLatency    = 50 * time.Millisecond
	attackedLatency    = 500 * time.Millisecond
	notModifiedLatency = 50 * time.Millisecond // attacked's 304
	refusalLatency     = 1 * time.Second       // 403 without a token, 404
)

// maxStreams is the most concurrent HTTP/2 streams a connection may have: far
// above what any app sends, since over HTTP/2 a token may have any number of
// requests in flight.
const maxStreams = 100_000

// readHeaderTimeout bounds how long a connection may take to send a request's
// headers.
const readHeaderTimeout = 10 * time.Second

// Services is the running services. Its methods are safe for concurrent use.
type Services struct {
	now      func() time.Time
	scale    float64
	secret   []byte // draws the facts, signs onetime tokens and attacked keys; never leaves the process
	facts    *Facts // drawn from the secret
	schedule *schedule

	servers  [2]*http.Server // plain, then TLS
	urls     [2]string
	cancel   context.CancelFunc // cancels every request's context
	serving  sync.WaitGroup     // the servers' Serve loops
	handlers handlerGroup
	tokens   tokenSet
	stats    counters

	closeOnce sync.Once
	closeErr  error
}

// Start starts the services on two ports of Config.Host (127.0.0.1 by
// default). ctx bounds only the start-up; Close stops them.
func Start(ctx context.Context, cfg Config) (*Services, error) {
	if cfg.Latency < 0 || math.IsNaN(cfg.Latency) || math.IsInf(cfg.Latency, 0) {
		return nil, fmt.Errorf("dashboard services: bad latency scale %v", cfg.Latency)
	}
	s := &Services{now: cfg.Now, scale: cfg.Latency, secret: slices.Clone(cfg.Secret)}
	if s.now == nil {
		s.now = time.Now
	}
	if s.scale == 0 {
		s.scale = 1
	}
	if len(s.secret) == 0 {
		s.secret = make([]byte, secretLen)
		if _, err := rand.Read(s.secret); err != nil {
			return nil, fmt.Errorf("dashboard services: secret: %w", err)
		}
	}
	s.facts = NewFacts(s.secret)
	started := s.now()
	s.schedule = newSchedule(cfg.Seed, time.Unix(started.Unix(), 0))
	host := cfg.Host
	if host == nil {
		host = net.IPv4(127, 0, 0, 1)
	}
	cert, err := selfSigned(started, host)
	if err != nil {
		return nil, fmt.Errorf("dashboard services: certificate: %w", err)
	}

	var lc net.ListenConfig
	var lns [2]net.Listener
	for i := range lns {
		if lns[i], err = lc.Listen(ctx, "tcp", net.JoinHostPort(host.String(), "0")); err != nil {
			if i > 0 {
				lns[0].Close()
			}
			return nil, fmt.Errorf("dashboard services: listen: %w", err)
		}
	}

	base, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	newServer := func(h http.Handler) *http.Server {
		return &http.Server{
			Handler:           s.track(h),
			ReadHeaderTimeout: readHeaderTimeout,
			// Requests' contexts derive from base, so that Close wakes every
			// waiting handler at once.
			BaseContext: func(net.Listener) context.Context { return base },
			// Apps' broken connections are theirs to notice; the benchmarker's
			// output is not the place.
			ErrorLog: log.New(io.Discard, "", 0),
		}
	}
	plain := newServer(s.plainRoutes())
	plain.Protocols = new(http.Protocols)
	plain.Protocols.SetHTTP1(true)
	secure := newServer(s.secureRoutes())
	secure.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	secure.Protocols = new(http.Protocols)
	secure.Protocols.SetHTTP1(true)
	secure.Protocols.SetHTTP2(true)
	secure.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: maxStreams}
	s.servers = [2]*http.Server{plain, secure}
	s.urls = [2]string{"http://" + lns[0].Addr().String(), "https://" + lns[1].Addr().String()}

	// The servers, and every connection's goroutine they start, run as the
	// benchmarker's part Part, so that a run's result says how much CPU the
	// services took.
	s.serving.Add(2)
	go engine.Part(ctx, Part, func(context.Context) { defer s.serving.Done(); plain.Serve(lns[0]) })
	go engine.Part(ctx, Part, func(context.Context) { defer s.serving.Done(); secure.ServeTLS(lns[1], "", "") })
	return s, nil
}

// secretLen is how many bytes of crypto/rand a secret drawn by Start has.
const secretLen = 32

// Facts returns the answers of postal, surname, givenname and weather under the
// Services' secret.
func (s *Services) Facts() *Facts { return s.facts }

// Part is the name under which the services' CPU is reported (engine.Part).
const Part = "the external services"

// HTTP returns the base URL of the plain services, "http://HOST:PORT".
func (s *Services) HTTP() string { return s.urls[0] }

// HTTPS returns the base URL of the TLS services, "https://HOST:PORT".
func (s *Services) HTTPS() string { return s.urls[1] }

// Close stops the services: it closes both listeners and every connection,
// wakes the handlers that wait out a latency (they answer nothing), and returns
// once every handler has returned. Calling it again does nothing and returns
// the same error.
func (s *Services) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.closeErr = errors.Join(s.servers[0].Close(), s.servers[1].Close())
		s.serving.Wait()
		s.handlers.closeAndWait()
	})
	return s.closeErr
}

// selfSigned makes the TLS services' certificate: ECDSA P-256 for host,
// 127.0.0.1 and localhost, made for this run and verifiable by no one (the
// manual tells apps not to verify it).
func selfSigned(now time.Time, host net.IP) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "tunecon dashboard services"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{host, net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// handlerGroup counts the running handlers so that Close can wait for them.
// Entering takes the read lock, so that no handler is added once Close has
// begun to wait (a WaitGroup must not grow from zero during Wait).
type handlerGroup struct {
	mu     sync.RWMutex
	closed bool
	wg     sync.WaitGroup
}

func (g *handlerGroup) enter() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	return true
}

func (g *handlerGroup) leave() { g.wg.Done() }

func (g *handlerGroup) closeAndWait() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.wg.Wait()
}

// Stats are the services' counters since Start.
type Stats struct {
	// Requests counts the requests routed to each service, by its name in the
	// manual ("postal", "postal2", "surname", "givenname", "weather",
	// "security", "attacked"), whatever their answer.
	Requests map[string]int64
	// The requests answered 304 Not Modified, 400 Bad Request, 403 Forbidden
	// (no token), 404 Not Found (an unknown path, on either listener) and 429
	// Too Many Requests.
	NotModified, BadRequest, Forbidden, NotFound, TooMany int64
	// PeakInFlight is the most requests that were in the handlers at once, on
	// both listeners.
	PeakInFlight int64
}

// Stats returns the counters.
func (s *Services) Stats() Stats {
	c := &s.stats
	st := Stats{
		Requests:     make(map[string]int64, len(serviceNames)),
		NotModified:  c.notModified.Load(),
		BadRequest:   c.badRequest.Load(),
		Forbidden:    c.forbidden.Load(),
		NotFound:     c.notFound.Load(),
		TooMany:      c.tooMany.Load(),
		PeakInFlight: c.peak.Load(),
	}
	for i, name := range serviceNames {
		st.Requests[name] = c.requests[i].Load()
	}
	return st
}

// The services, as indexes of counters.requests.
const (
	svcPostal = iota
	svcPostal2
	svcSurname
	svcGivenName
	svcWeather
	svcSecurity
	svcAttacked
	numServices
)

// serviceNames are the services' names in the manual, by index.
var serviceNames = [numServices]string{"postal", "postal2", "surname", "givenname", "weather", "security", "attacked"}

// counters are atomic, so that counting takes no lock on the hot path.
type counters struct {
	requests                                              [numServices]atomic.Int64
	notModified, badRequest, forbidden, notFound, tooMany atomic.Int64
	inFlight, peak                                        atomic.Int64
}

// enter counts a request in and raises the peak.
func (c *counters) enter() {
	n := c.inFlight.Add(1)
	for {
		p := c.peak.Load()
		if n <= p || c.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (c *counters) leave() { c.inFlight.Add(-1) }
