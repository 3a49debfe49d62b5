package dashboard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/dashboard/data"
	"github.com/tunecon/tunecon/problems/dashboard/services"
)

// item is one element of /data.
type item struct {
	Service string          `json:"service"`
	Data    json.RawMessage `json:"data"`
}

// checkData checks a /data answer of u, read while the benchmarker's model of
// u's subscriptions is exact: the services are those u subscribes to, each
// once, and each answer is the right one, for u, and fresh enough at the moment
// the request was sent. A wrong, stale or foreign answer is a violation
// (critical).
func (s *Scenario) checkData(res *engine.Response, u *user) error {
	return res.Check(func(res *engine.Response) error {
		var items []item
		dec := json.NewDecoder(bytes.NewReader(res.Body))
		if err := dec.Decode(&items); err != nil || dec.More() {
			return engine.Fail("data-json", "/data is not a JSON array of {service, data}: %v", err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it.Service)
		}
		want := u.subscribed()
		sorted := slices.Clone(got)
		slices.SortFunc(sorted, func(a, b string) int { return slices.Index(data.Services, a) - slices.Index(data.Services, b) })
		if !slices.Equal(sorted, want) {
			return violation("data-services", "/data of a %s user subscribed to [%s] answered for [%s]", u.grade,
				strings.Join(want, " "), strings.Join(got, " "))
		}
		svc := s.services()
		if svc == nil {
			return engine.Internalf("services", "the external services are not running")
		}
		for _, it := range items {
			if err := checkAnswer(svc, it, u.subs[it.Service], res.Sent, res.Received); err != nil {
				return err
			}
			s.m.ad.relayed(it, u.subs[it.Service])
			s.m.names.relayed(s.m.ad.facts.Load(), it, u.subs[it.Service])
		}
		return nil
	})
}

// violation is a wrong or stale answer: it fails the run.
func violation(code, format string, args ...any) error {
	return engine.Criticalf(code, format, args...)
}

// checkAnswer checks one service's answer relayed for parameters p, in a
// /data sent at sent and received at received.
func checkAnswer(svc *services.Services, it item, p data.Params, sent, received time.Time) error {
	switch it.Service {
	case data.Postal, data.Postal2:
		return checkPostal(svc.Facts(), it, p)
	case data.Surname, data.GivenName:
		return checkNames(svc.Facts(), it, p)
	case data.Weather:
		return checkWeather(svc.Facts(), it, p, sent, received)
	case data.Security:
		return checkToken(svc, it, p, sent, received)
	case data.Attacked:
		return checkAttacked(svc, it, p, sent, received)
	default:
		return violation("data-services", "/data answered for a service %q", it.Service)
	}
}

// decode decodes the answer into v, the service's own type, refusing any
// field the service does not send.
func (it item) decode(v any) error {
	dec := json.NewDecoder(bytes.NewReader(it.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return violation("data-answer", "%s: the answer is not the service's (%v)", it.Service, err)
	}
	return nil
}

// wrong is a violation of the answer's service, named in its code and its
// message.
func (it item) wrong(format string, args ...any) error {
	return violation("data-"+it.Service, it.Service+": "+format, args...)
}

// checkPostal checks a postal service's answer: the user's code and its
// address under this run's secret.
func checkPostal(facts *services.Facts, it item, p data.Params) error {
	var a services.PostalAnswer
	if err := it.decode(&a); err != nil {
		return err
	}
	want, _ := facts.Address(p.Code)
	if a.Code != p.Code || a.Address != want {
		return it.wrong("code %q address %q, want the user's code %q and its address %q", a.Code, a.Address, p.Code, want)
	}
	return nil
}

// checkNames checks a names service's answer: the user's query and the
// names it finds under this run's secret.
func checkNames(facts *services.Facts, it item, p data.Params) error {
	var a services.NamesAnswer
	if err := it.decode(&a); err != nil {
		return err
	}
	search := facts.SearchSurnames
	if it.Service == data.GivenName {
		search = facts.SearchGivenNames
	}
	want := search(p.Q)
	if a.Query != p.Q || !slices.Equal(a.Names, want) {
		return it.wrong("query %q with %d names, want the user's query %q with its %d names", a.Query, len(a.Names), p.Q, len(want))
	}
	return nil
}

// checkWeather checks the weather's answer: a forecast the service gave for
// the user's location under this run's secret, fresh enough when /data was
// sent. A date after the answer came is named before the forecast is checked:
// it is wrong whatever the forecast says.
func checkWeather(facts *services.Facts, it item, p data.Params, sent, received time.Time) error {
	var a services.WeatherAnswer
	if err := it.decode(&a); err != nil {
		return err
	}
	date := time.UnixMilli(a.Date)
	forecast, temp := facts.Forecast(p.Location, date)
	switch {
	case a.Location != p.Location:
		return it.wrong("location %q, want the user's %q", a.Location, p.Location)
	case date.After(received):
		return it.wrong("dated %s, after the answer came", date.UTC().Format(time.RFC3339Nano))
	case !services.WeatherPeriodAt(date).Equal(date) || a.Forecast != forecast || a.Temperature != temp:
		return it.wrong("a forecast the service never gave (%s, %d at %s)", a.Forecast, a.Temperature, date.UTC().Format(time.RFC3339Nano))
	case sent.Sub(date) > weatherFreshness:
		return it.wrong("the forecast of %s was %s old when /data was asked; at most %s", date.UTC().Format(time.RFC3339),
			sent.Sub(date).Round(time.Millisecond), weatherFreshness)
	}
	return nil
}

// checkToken checks the security service's answer: the user's req and key,
// and a one-time token the service issued for them, fresh enough when /data
// was sent.
func checkToken(svc *services.Services, it item, p data.Params, sent, received time.Time) error {
	var a services.TokenAnswer
	if err := it.decode(&a); err != nil {
		return err
	}
	if a.Req != p.Req || a.Key != p.Token {
		return it.wrong("req %q key %q, want the user's", a.Req, a.Key)
	}
	issued, err := svc.CheckOnetime(a.Key, a.Req, a.OnetimeToken)
	switch {
	case err != nil:
		return it.wrong("a one-time token the service never issued for this user (%v)", err)
	case issued.After(received):
		return it.wrong("a one-time token issued after the answer came")
	case sent.Sub(issued) > tokenFreshness:
		return it.wrong("a one-time token %s old when /data was asked; at most %s", sent.Sub(issued).Round(time.Millisecond), tokenFreshness)
	}
	return nil
}

// checkAttacked checks the attacked list's answer: the keys of the user's
// token in a list the service had, not replaced for longer than the promise
// allows when /data was sent.
func checkAttacked(svc *services.Services, it item, p data.Params, sent, received time.Time) error {
	var a services.AttackedAnswer
	if err := it.decode(&a); err != nil {
		return err
	}
	v, ok := svc.AttackedVersion(time.UnixMilli(a.UpdatedAt))
	if !ok {
		return it.wrong("updated_at %d is no list the service ever had", a.UpdatedAt)
	}
	keys := svc.AttackedKeys(p.Token, v.Seq)
	switch {
	case [3]string{a.Key1, a.Key2, a.Key3} != keys:
		return it.wrong("keys of another token or list, not the user's")
	case v.Start.After(received):
		return it.wrong("a list that began after the answer came")
	case !v.End.IsZero() && sent.Sub(v.End) > attackedFreshness:
		return it.wrong("a list replaced %s before /data was asked; at most %s", sent.Sub(v.End).Round(time.Millisecond), attackedFreshness)
	}
	return nil
}

// viewer is who an agent's answers are for: the user signed in (or signing
// in) on it, nil when none is.
type viewer struct{ u atomic.Pointer[user] }

func (v *viewer) set(u *user) { v.u.Store(u) }

// watch makes every answer a gets pass the leak scan for its viewer, in each
// of its readings (its body and its headers' values, as sent and with the
// cheap disguises undone), and returns the viewer for the caller to set.
func (s *Scenario) watch(a *engine.Agent) *viewer {
	v := &viewer{}
	a.Inspect(func(res *engine.Response) error { return s.m.scanAnswer(res, v.u.Load()) })
	return v
}

// scanAnswer scans each of res's readings for what viewer v may not see.
func (m *model) scanAnswer(res *engine.Response, v *user) error {
	for _, text := range res.Readings() {
		if err := m.scan(text, v); err != nil {
			return err
		}
	}
	return nil
}

// emailDomain ends every user's email (MANUAL: "Initial data").
const emailDomain = "@dashboard.test"

// scan looks, in one pass over an answer whatever its status, for what names
// another user's data: an email of another user, and the parameters of
// another user's subscriptions that every relayed answer carries (a postal
// code, a weather location, a token), each looked up in the model's map of
// who subscribed with it. One the viewer subscribes with itself is its own.
// And a postal address relayed in the run that none of the viewer's own codes
// has (addresses.foreignAddress), and two names relayed in the run that none
// of its queries finds (relayedNames.foreignNames). Finding one is critical:
// no answer may carry another user's data. The scan reads the text in lower
// case: an email or a token in capitals is as much a leak (a location's L is
// found in either case).
func (m *model) scan(text []byte, v *user) error {
	body := bytes.ToLower(text)
	for rest := body; ; {
		i := bytes.Index(rest, []byte(emailDomain))
		if i < 0 {
			break
		}
		if email := emailBefore(rest, i); email != "" && (v == nil || !strings.EqualFold(email, v.email)) {
			return leak("another user's email %s", email)
		}
		rest = rest[i+len(emailDomain):]
	}
	for i := 0; i < len(body); {
		if !isHex(body[i]) {
			i++
			continue
		}
		j := i
		for j < len(body) && isHex(body[j]) {
			j++
		}
		k := ""
		switch run := body[i:j]; {
		case len(run) == 32:
			k = string(run)
		case len(run) == 7 && allDigits(run):
			k = string(run)
		case len(run) == 4 && i > 0 && body[i-1] == 'l' && allDigits(run):
			k = "L" + string(run)
		}
		if k != "" && m.foreign(k, v) {
			return leak("%q, a parameter of another user's subscription", k)
		}
		i = j
	}
	if a := m.ad.foreignAddress(body, v); a != "" {
		return leak("%q, a postal address relayed for another user", a)
	}
	if names := m.names.foreignNames(body, v); names != nil {
		return leak("%q, names relayed for another user's query", names)
	}
	return nil
}

// emailBefore is the email of a user (user{ID} or new{N}) whose domain
// starts at body[i], or "" if the letters before it are no user's.
func emailBefore(body []byte, i int) string {
	j := i
	for j > 0 && (isDigit(body[j-1]) || 'a' <= body[j-1]|0x20 && body[j-1]|0x20 <= 'z') {
		j--
	}
	local := strings.ToLower(string(body[j:i]))
	name := strings.TrimRight(local, "0123456789")
	if len(name) == len(local) || name != "user" && name != "new" {
		return ""
	}
	return string(body[j:i]) + emailDomain
}

// leak is an answer that carries what its viewer may not see: it fails the
// run.
func leak(format string, args ...any) error {
	return engine.Criticalf("leak", "an answer carries "+format+": no answer may carry another user's data", args...)
}

func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// refusal checks the answer to a request the app must refuse (what says
// which): status, and for a 303 its Location. Anything else is critical.
func refusal(code, what string, status int, location string) engine.Check {
	return func(res *engine.Response) error {
		err := res.Check(engine.Status(status))
		if err == nil && location != "" {
			err = res.Check(engine.RedirectExactly(location))
		}
		if err != nil {
			return engine.Criticalf(code, "%s must be refused: %s", what, engine.AsError(err).Message)
		}
		return nil
	}
}

// noSession checks that a refused sign-in starts no session: it sets no
// session cookie with a value.
func noSession() engine.Check {
	return func(res *engine.Response) error {
		if c := sessionOf(res); c != "" {
			return engine.Criticalf("wrong-password", "a refused sign-in set a session cookie")
		}
		return nil
	}
}

// sessionOf is the session id an answer sets ("" if it sets none).
func sessionOf(res *engine.Response) string {
	if _, ok := res.Header["Set-Cookie"]; !ok {
		return ""
	}
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.Name == sessionCookie && c.MaxAge >= 0 {
			return c.Value
		}
	}
	return ""
}
