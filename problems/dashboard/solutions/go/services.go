package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The services, as indexes.
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

var serviceNames = [numServices]string{"postal", "postal2", "surname", "givenname", "weather", "security", "attacked"}

var serviceIndex = func() map[string]int {
	m := map[string]int{}
	for i, name := range serviceNames {
		m[name] = i
	}
	return m
}()

// How long answers are kept. Every age is counted from when the request that got (or confirmed) the answer was
// sent, which is never after the service made the answer: an answer served at age A was at most A old (plus the
// benchmarker's own clock, which is the machine's) when the benchmarker asked.
const (
	// weatherPeriod is how long a forecast is current; periods start at the Unix multiples of it (MANUAL.md).
	weatherPeriod = 3 * time.Second
	// A onetime token is served without asking for securityFresh, then served while a new one is asked for in the
	// background, up to securityMax; after that /data waits for a new one. The manual promises 16 s.
	securityFresh = 5 * time.Second
	securityMax   = 10 * time.Second
	// An attacked list is served without asking for attackedFresh, then served while it is revalidated in the
	// background (If-Modified-Since: 304 after 50 ms if unchanged), up to attackedMax; after that /data waits for
	// the revalidation. The manual promises 16 s.
	attackedFresh = 2 * time.Second
	attackedMax   = 10 * time.Second
	// hotFor is how long after its last /data a location's forecast is fetched ahead of each new period.
	hotFor = 6 * time.Second
	// callTimeout bounds one call of a service.
	callTimeout = 10 * time.Second
	// maxAnswer caps a service's answer.
	maxAnswer = 1 << 20
)

// world is the services at one pair of base URLs, with the client that calls them and every answer kept from
// them. POST /initialize replaces it as a whole.
type world struct {
	httpBase, httpsBase string
	plainTr, secureTr   *http.Transport
	plain, secure       *http.Client
	ctx                 context.Context // ends when the world is replaced
	cancel              context.CancelFunc
	caches              [numServices]cache
	// weatherRTT is the shortest time a full weather answer took, in nanoseconds (0: none yet): the service's
	// latency, plus the least overhead ever seen.
	weatherRTT atomic.Int64
}

type cache struct {
	mu sync.Mutex
	m  map[string]*entry
}

// entry is what is known of one service's answer for one key.
type entry struct {
	mu           sync.Mutex
	body         []byte    // the answer, nil until one came
	lastModified string    // its Last-Modified
	periodEnd    time.Time // weather: when its forecast's period ends
	checked      time.Time // when the request that got or confirmed body was sent
	call         *call     // the request in flight, if any
	lastUsed     time.Time // weather: the last /data that needed it
}

// call is one request in flight to a service; done is closed once body or err is set.
type call struct {
	done chan struct{}
	body []byte
	err  error
}

func newWorld(httpBase, httpsBase string) *world {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	// The plain services speak HTTP/1.1 only: one connection per request in flight, kept for the next.
	plainTr := &http.Transport{
		DialContext:         dialer.DialContext,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	// The HTTPS services over HTTP/2 only: every request of every user on one connection, any number of them in
	// flight at once for one token, which HTTP/1.1 forbids (429). No fallback to HTTP/1.1: an error instead.
	secureTr := &http.Transport{
		DialContext:         dialer.DialContext,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, // made for the run, verifiable by no one
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        16,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	secureTr.Protocols = new(http.Protocols)
	secureTr.Protocols.SetHTTP2(true)
	ctx, cancel := context.WithCancel(context.Background())
	w := &world{
		httpBase: httpBase, httpsBase: httpsBase,
		plainTr: plainTr, secureTr: secureTr,
		plain:  &http.Client{Transport: plainTr, Timeout: callTimeout},
		secure: &http.Client{Transport: secureTr, Timeout: callTimeout},
		ctx:    ctx, cancel: cancel,
	}
	for i := range w.caches {
		w.caches[i].m = map[string]*entry{}
	}
	go w.prefetchWeather()
	return w
}

// close stops the world's background work and closes its idle connections.
func (w *world) close() {
	w.cancel()
	w.plainTr.CloseIdleConnections()
	w.secureTr.CloseIdleConnections()
}

func (w *world) entry(svc int, key string) *entry {
	c := &w.caches[svc]
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[key]
	if e == nil {
		e = &entry{}
		c.m[key] = e
	}
	return e
}

// cacheKey is what an answer depends on: the service's parameters (the token and the req for security).
func cacheKey(svc int, p map[string]string) string {
	switch svc {
	case svcPostal, svcPostal2:
		return p["code"]
	case svcSurname, svcGivenName:
		return p["q"]
	case svcWeather:
		return p["location"]
	case svcSecurity:
		return p["token"] + "|" + p["req"]
	default:
		return p["token"]
	}
}

// answer returns the answer for svc and p when one that may be served now is kept, else the call to wait for
// (started if none is in flight). It may start a background refresh of what it returns.
func (w *world) answer(svc int, p map[string]string, now time.Time) ([]byte, *call) {
	e := w.entry(svc, cacheKey(svc, p))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.body != nil {
		switch svc {
		case svcPostal, svcPostal2, svcSurname, svcGivenName: // never change
			return e.body, nil
		case svcWeather:
			e.lastUsed = now
			if now.Before(e.periodEnd) {
				return e.body, nil
			}
		case svcSecurity, svcAttacked:
			fresh, max := securityFresh, securityMax
			if svc == svcAttacked {
				fresh, max = attackedFresh, attackedMax
			}
			age := now.Sub(e.checked)
			if age < fresh {
				return e.body, nil
			}
			if age < max {
				if e.call == nil {
					w.start(e, svc, p, true)
				}
				return e.body, nil
			}
		}
	} else if svc == svcWeather {
		e.lastUsed = now
	}
	if e.call == nil {
		w.start(e, svc, p, true)
	}
	return nil, e.call
}

// start sends a request for e in the background; e.mu is held. conditional sends If-Modified-Since with the
// kept answer's Last-Modified (weather and attacked).
func (w *world) start(e *entry, svc int, p map[string]string, conditional bool) {
	c := &call{done: make(chan struct{})}
	e.call = c
	ims := ""
	if conditional && (svc == svcWeather || svc == svcAttacked) && e.body != nil {
		ims = e.lastModified
	}
	go func() {
		sent := time.Now()
		body, lastModified, status, err := w.do(svc, p, ims)
		took := time.Since(sent)
		e.mu.Lock()
		switch {
		case err != nil:
			c.err = err
		case status == http.StatusNotModified && e.body != nil && ims != "":
			e.checked = sent
			c.body = e.body
		case status == http.StatusOK:
			if svc == svcWeather {
				var a struct {
					Date int64 `json:"date"`
				}
				if err := json.Unmarshal(body, &a); err != nil {
					c.err = fmt.Errorf("weather: %w", err)
					break
				}
				e.periodEnd = time.UnixMilli(a.Date).Add(weatherPeriod)
				if old := w.weatherRTT.Load(); old == 0 || int64(took) < old {
					w.weatherRTT.Store(int64(took))
				}
			}
			e.body, e.lastModified, e.checked = body, lastModified, sent
			c.body = body
		default:
			c.err = fmt.Errorf("%s answered %d", serviceNames[svc], status)
		}
		e.call = nil
		e.mu.Unlock()
		if c.err != nil {
			log.Printf("%s: %v", serviceNames[svc], c.err)
		}
		close(c.done)
	}()
}

// do asks svc once.
func (w *world) do(svc int, p map[string]string, ifModifiedSince string) (body []byte, lastModified string, status int, err error) {
	if w.httpBase == "" && w.httpsBase == "" {
		return nil, "", 0, errors.New("no one said where the services are (POST /initialize)")
	}
	var u string
	client := w.plain
	header := http.Header{}
	switch svc {
	case svcPostal:
		u = w.httpBase + "/postal/" + url.PathEscape(p["code"])
	case svcPostal2:
		u = w.httpBase + "/postal?code=" + url.QueryEscape(p["code"])
	case svcSurname, svcGivenName:
		u = w.httpBase + "/" + serviceNames[svc] + "?q=" + url.QueryEscape(p["q"])
	case svcWeather:
		u = w.httpBase + "/weather?location=" + url.QueryEscape(p["location"])
	case svcSecurity:
		u = w.httpsBase + "/tokens?req=" + url.QueryEscape(p["req"])
		header["X-Security-Token"] = []string{p["token"]}
		client = w.secure
	case svcAttacked:
		u = w.httpsBase + "/attacked"
		header["X-Security-Token"] = []string{p["token"]}
		client = w.secure
	}
	if ifModifiedSince != "" {
		header["If-Modified-Since"] = []string{ifModifiedSince}
	}
	req, err := http.NewRequestWithContext(w.ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", 0, err
	}
	req.Header = header
	res, err := client.Do(req)
	if err != nil {
		return nil, "", 0, err
	}
	defer res.Body.Close()
	body, err = io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return nil, "", 0, err
	}
	if res.StatusCode == http.StatusOK && !json.Valid(body) {
		return nil, "", 0, fmt.Errorf("%s: the answer is not JSON", u)
	}
	return body, res.Header.Get("Last-Modified"), res.StatusCode, nil
}

// warm starts asking for the answers subs will need, without waiting for them.
func (w *world) warm(subs Subscriptions) {
	now := time.Now()
	for name, p := range subs {
		if svc, ok := serviceIndex[name]; ok {
			w.answer(svc, p, now)
		}
	}
}

// prefetchWeather asks, ahead of each new weather period, for the forecasts that /data asked for lately, timed so
// that the service makes its answer just after the period begins: by then the answer comes a few milliseconds
// into the new period instead of the service's whole latency. The service answers with the forecast current
// when it answers, its latency after the request came: a request sent the shortest answer time ever seen (minus
// a margin) before the period begins is answered in the new period.
func (w *world) prefetchWeather() {
	const margin = 30 * time.Millisecond
	var done time.Time // the period start last prefetched for
	for {
		rtt := time.Duration(w.weatherRTT.Load())
		lead := rtt - margin
		if rtt == 0 || lead <= 0 || lead > weatherPeriod-500*time.Millisecond {
			lead = 0 // nothing learned yet (or a latency too long to plan for): just look again next period
		}
		now := time.Now()
		next := now.Add(lead).Truncate(weatherPeriod).Add(weatherPeriod)
		if !next.After(done) {
			next = next.Add(weatherPeriod)
		}
		select {
		case <-w.ctx.Done():
			return
		case <-time.After(time.Until(next.Add(-lead))):
		}
		done = next
		if lead == 0 {
			continue
		}
		now = time.Now()
		c := &w.caches[svcWeather]
		c.mu.Lock()
		hot := make(map[string]*entry)
		for loc, e := range c.m {
			hot[loc] = e
		}
		c.mu.Unlock()
		for loc, e := range hot {
			e.mu.Lock()
			if now.Sub(e.lastUsed) < hotFor && e.call == nil && e.body != nil && !e.periodEnd.After(next) {
				// Not conditional: before the period begins the service would answer 304 at once.
				w.start(e, svcWeather, map[string]string{"location": loc}, false)
			}
			e.mu.Unlock()
		}
	}
}

// appendItem appends one element of /data's answer: a service's answer, relayed as it came.
func appendItem(b []byte, service string, answer []byte) []byte {
	b = append(b, `{"service":"`...)
	b = append(b, service...)
	b = append(b, `","data":`...)
	b = append(b, answer...)
	return append(b, '}')
}

// getData relays the answer of every service the user subscribes to, in the manual's order, each kept or asked
// for at once.
func (app *App) getData(w http.ResponseWriter, r *http.Request) {
	u, _ := app.currentUser(w, r)
	if u == nil {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "sign in first"})
		return
	}
	subs := u.subscriptions()
	wd := app.svc.Load()
	now := time.Now()
	var answers [numServices][]byte
	var calls [numServices]*call
	var services []int
	for _, name := range allowed[u.grade] {
		p, ok := subs[name]
		if !ok {
			continue
		}
		svc := serviceIndex[name]
		services = append(services, svc)
		answers[svc], calls[svc] = wd.answer(svc, p, now)
	}
	for _, svc := range services {
		c := calls[svc]
		if c == nil {
			continue
		}
		select {
		case <-c.done:
		case <-r.Context().Done():
			return
		}
		if c.err != nil {
			writeJSON(w, http.StatusBadGateway, map[string]string{"error": serviceNames[svc] + ": " + c.err.Error()})
			return
		}
		answers[svc] = c.body
	}
	n := 3
	for _, svc := range services {
		n += 32 + len(answers[svc])
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, svc := range services {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendItem(b, serviceNames[svc], answers[svc])
	}
	b = append(b, ']', '\n')
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.Write(b)
}
