package services

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// PostalAnswer is the answer of postal and postal2.
type PostalAnswer struct {
	Code    string `json:"code"`
	Address string `json:"address"`
}

// NamesAnswer is the answer of surname and givenname.
type NamesAnswer struct {
	Query string   `json:"query"`
	Names []string `json:"names"`
}

// WeatherAnswer is the answer of weather.
type WeatherAnswer struct {
	Location    string `json:"location"`
	Date        int64  `json:"date"` // the start of the forecast's period, Unix ms
	Forecast    string `json:"forecast"`
	Temperature int    `json:"temperature"`
}

// TokenAnswer is the answer of security.
type TokenAnswer struct {
	Req          string `json:"req"`
	Key          string `json:"key"`
	OnetimeToken string `json:"onetime_token"`
}

// AttackedAnswer is the answer of attacked.
type AttackedAnswer struct {
	UpdatedAt int64  `json:"updated_at"` // the start of the current version, Unix ms
	Key1      string `json:"key1"`
	Key2      string `json:"key2"`
	Key3      string `json:"key3"`
}

// tokenHeader carries the user's token to the TLS services.
const tokenHeader = "X-Security-Token"

func (s *Services) plainRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /postal/{code...}", func(w http.ResponseWriter, r *http.Request) {
		s.postal(w, r, svcPostal, r.PathValue("code"))
	})
	mux.HandleFunc("GET /postal", func(w http.ResponseWriter, r *http.Request) {
		s.postal(w, r, svcPostal2, r.URL.Query().Get("code"))
	})
	mux.HandleFunc("GET /surname", func(w http.ResponseWriter, r *http.Request) { s.names(w, r, svcSurname, s.facts.surnames) })
	mux.HandleFunc("GET /givenname", func(w http.ResponseWriter, r *http.Request) { s.names(w, r, svcGivenName, s.facts.givenNames) })
	mux.HandleFunc("GET /weather", s.weather)
	mux.HandleFunc("/", s.notFound) // and any method but GET and HEAD
	return mux
}

func (s *Services) secureRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tokens", s.security)
	mux.HandleFunc("GET /attacked", s.attacked)
	mux.HandleFunc("/", s.notFound)
	return mux
}

// track counts every request in and out of the handlers, for Stats and for
// Close.
func (s *Services) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.handlers.enter() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		defer s.handlers.leave()
		s.stats.enter()
		defer s.stats.leave()
		h.ServeHTTP(w, r)
	})
}

// wait waits out a latency, scaled. When the request's context ends first
// (Close, or the client went away), it aborts the handler with
// http.ErrAbortHandler, so that the client gets no answer at all: a handler
// that merely returned would send an empty 200.
func (s *Services) wait(r *http.Request, latency time.Duration) {
	t := time.NewTimer(time.Duration(float64(latency) * s.scale))
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		panic(http.ErrAbortHandler)
	}
}

func (s *Services) postal(w http.ResponseWriter, r *http.Request, service int, code string) {
	s.stats.requests[service].Add(1)
	address, ok := s.facts.Address(code)
	if !ok {
		s.badRequest(w, "code must be 7 digits")
		return
	}
	s.wait(r, postalLatency)
	writeJSON(w, PostalAnswer{Code: code, Address: address})
}

func (s *Services) names(w http.ResponseWriter, r *http.Request, service int, list []string) {
	s.stats.requests[service].Add(1)
	q := r.URL.Query().Get("q")
	if !consistsOf(q, 1, 8, letters) {
		s.badRequest(w, "q must be 1 to 8 letters a-z")
		return
	}
	s.wait(r, postalLatency)
	writeJSON(w, NamesAnswer{Query: q, Names: SearchNames(list, q)})
}

func (s *Services) weather(w http.ResponseWriter, r *http.Request) {
	s.stats.requests[svcWeather].Add(1)
	location := r.URL.Query().Get("location")
	if len(location) != 5 || location[0] != 'L' || !consistsOf(location[1:], 4, 4, digits) {
		s.badRequest(w, "location must be L and 4 digits")
		return
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" && ims == httpDate(WeatherPeriodAt(s.now())) {
		s.notModified(w, ims)
		return
	}
	s.wait(r, weatherLatency)
	// As of when it is sent, not when it was asked for.
	period := WeatherPeriodAt(s.now())
	forecast, temperature := s.facts.Forecast(location, period)
	w.Header().Set("Last-Modified", httpDate(period))
	writeJSON(w, WeatherAnswer{Location: location, Date: period.UnixMilli(), Forecast: forecast, Temperature: temperature})
}

func (s *Services) security(w http.ResponseWriter, r *http.Request) {
	token, ok := s.admit(w, r, svcSecurity)
	if !ok {
		return
	}
	defer s.tokens.leave(token)
	req := r.URL.Query().Get("req")
	if !consistsOf(req, 1, 16, reqChars) {
		s.badRequest(w, "req must be 1 to 16 characters a-z, 0-9")
		return
	}
	s.wait(r, securityLatency)
	writeJSON(w, TokenAnswer{Req: req, Key: token, OnetimeToken: s.onetime(token, req, s.now().UnixMilli())})
}

func (s *Services) attacked(w http.ResponseWriter, r *http.Request) {
	token, ok := s.admit(w, r, svcAttacked)
	if !ok {
		return
	}
	defer s.tokens.leave(token)
	if ims := r.Header.Get("If-Modified-Since"); ims != "" && ims == httpDate(s.AttackedAt(s.now()).Start) {
		s.wait(r, notModifiedLatency)
		s.notModified(w, ims)
		return
	}
	s.wait(r, attackedLatency)
	v := s.AttackedAt(s.now())
	keys := s.AttackedKeys(token, v.Seq)
	w.Header().Set("Last-Modified", httpDate(v.Start))
	writeJSON(w, AttackedAnswer{UpdatedAt: v.Start.UnixMilli(), Key1: keys[0], Key2: keys[1], Key3: keys[2]})
}

// admit counts a request to a TLS service and checks its token: 403 after a
// while without one, 400 for a malformed one, 429 for an HTTP/1.x request whose
// token already has a request in flight. When it reports true, the request is
// in flight for its token until the caller calls s.tokens.leave.
func (s *Services) admit(w http.ResponseWriter, r *http.Request, service int) (token string, ok bool) {
	s.stats.requests[service].Add(1)
	token = r.Header.Get(tokenHeader)
	switch {
	case token == "":
		s.stats.forbidden.Add(1)
		s.wait(r, refusalLatency)
		http.Error(w, "missing "+tokenHeader, http.StatusForbidden)
		return "", false
	case !consistsOf(token, 32, 32, hexChars):
		s.badRequest(w, tokenHeader+" must be 32 characters 0-9, a-f")
		return "", false
	case !s.tokens.enter(token, r.ProtoMajor < 2):
		s.stats.tooMany.Add(1)
		http.Error(w, "too many connections for this token", http.StatusTooManyRequests)
		return "", false
	}
	return token, true
}

func (s *Services) notFound(w http.ResponseWriter, r *http.Request) {
	s.stats.notFound.Add(1)
	s.wait(r, refusalLatency)
	http.NotFound(w, r)
}

func (s *Services) badRequest(w http.ResponseWriter, msg string) {
	s.stats.badRequest.Add(1)
	http.Error(w, msg, http.StatusBadRequest)
}

func (s *Services) notModified(w http.ResponseWriter, lastModified string) {
	s.stats.notModified.Add(1)
	w.Header().Set("Last-Modified", lastModified)
	w.WriteHeader(http.StatusNotModified)
}

// httpDate formats t as Last-Modified and If-Modified-Since carry it. Periods
// and versions start at whole seconds, so nothing is lost.
func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil { // the answer types always marshal
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// tokenSet is the requests in flight on the TLS services, by token, for the 429
// rule. A handler leaves it before it returns, so before the server sends its
// small buffered answer: a client that sends its next request once it has the
// answer never finds the token still in flight.
type tokenSet struct {
	mu       sync.Mutex
	inFlight map[string]int
}

// enter puts a request of token in flight. An exclusive one (HTTP/1.x) is
// refused, and not put in flight, when the token already has a request in
// flight, over any protocol.
func (t *tokenSet) enter(token string, exclusive bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if exclusive && t.inFlight[token] > 0 {
		return false
	}
	if t.inFlight == nil {
		t.inFlight = make(map[string]int)
	}
	t.inFlight[token]++
	return true
}

// leave takes a request of token out of flight.
func (t *tokenSet) leave(token string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inFlight[token]--; t.inFlight[token] <= 0 {
		delete(t.inFlight, token)
	}
}
