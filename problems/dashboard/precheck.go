package dashboard

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/dashboard/data"
	"github.com/tunecon/tunecon/problems/dashboard/services"
)

// PreCheck checks the initialized app one request at a time, negative cases
// included: the pages signed out, then for one new user of each grade,
// sign-up, sign-in, the pages, a subscription to every allowed service with
// /data after each, one refused service, a removal; then a user of the
// initial data. Any error fails the run.
func (s *Scenario) PreCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	view := s.watch(a)
	if err := preCheckSignedOut(ctx, a); err != nil {
		return err
	}
	rnd := s.m.runStream(0)
	for i, grade := range data.Grades {
		if err := s.preCheckGrade(ctx, r, a, view, rnd, grade, i == 0); err != nil {
			return err
		}
	}
	u := s.m.borrow(r.Rand(1), "")
	defer s.m.giveBack(u)
	view.set(u)
	if err := s.signin(ctx, a, u, engine.NoScore); err != nil {
		return err
	}
	if err := s.data(ctx, r, a, u, engine.NoScore); err != nil {
		return err
	}
	return s.signout(ctx, a, engine.NoScore)
}

// preCheckSignedOut checks the pages signed out: / and /modify redirect to
// /login, /data, /user.js and a change of subscription are refused.
func preCheckSignedOut(ctx context.Context, a *engine.Agent) error {
	for _, path := range []string{"/", "/modify"} {
		res, err := a.Get(ctx, "GET "+path, path)
		if err != nil {
			return err
		}
		if err := checkRedirect(res, "/login"); err != nil {
			return err
		}
	}
	for _, path := range []string{"/data", "/user.js"} {
		if err := a.Expect(ctx, "GET "+path, path, nil, http.StatusForbidden); err != nil {
			return err
		}
	}
	return a.Expect(ctx, "POST /modify", "/modify", url.Values{"service": {data.Postal}, "code": {"1234567"}}, http.StatusForbidden)
}

// preCheckGrade checks the app for one new user of grade: sign-up (strict:
// the refused forms too), sign-in, the pages, every service, a removal and
// sign-out. Its services' parameters are drawn from rnd.
func (s *Scenario) preCheckGrade(ctx context.Context, r *engine.Run, a *engine.Agent, view *viewer, rnd *rand.Rand, grade string, strict bool) error {
	u := s.m.newUser(grade)
	view.set(u)
	if err := s.preCheckSignup(ctx, a, u, rnd, strict); err != nil {
		return err
	}
	if err := s.signin(ctx, a, u, engine.NoScore); err != nil {
		return err
	}
	if err := s.dashboard(ctx, a, u, engine.NoScore); err != nil {
		return err
	}
	if err := s.data(ctx, r, a, u, engine.NoScore); err != nil {
		return err
	}
	if err := s.modifyPage(ctx, a, u); err != nil {
		return err
	}
	if err := s.preCheckServices(ctx, r, a, u, rnd); err != nil {
		return err
	}
	if grade == data.Standard {
		if err := s.preCheckWeather(ctx, r, a, u); err != nil {
			return err
		}
	}
	if err := s.preCheckRemoval(ctx, r, a, u); err != nil {
		return err
	}
	s.m.giveBack(u)
	if grade == data.Premium {
		return s.preCheckTwin(ctx, r, a, view, u.subs[data.Security])
	}
	return nil
}

// preCheckSignup signs u up. strict adds the forms the app must refuse:
// bad ones before, a taken email and a wrong password (drawn from rnd) after.
func (s *Scenario) preCheckSignup(ctx context.Context, a *engine.Agent, u *user, rnd *rand.Rand, strict bool) error {
	bad := []url.Values{
		{"email": {"no-at-sign"}, "password": {u.password}, "grade": {u.grade}},
		{"email": {u.email}, "password": {"short"}, "grade": {u.grade}},
		{"email": {u.email}, "password": {u.password}, "grade": {"platinum"}},
	}
	if strict {
		for _, form := range bad {
			if err := a.Expect(ctx, "POST /signup", "/signup", form, http.StatusBadRequest); err != nil {
				return err
			}
		}
	}
	if err := s.signup(ctx, a, u, engine.NoScore); err != nil {
		return err
	}
	if !strict {
		return nil
	}
	taken := url.Values{"email": {u.email}, "password": {u.password}, "grade": {u.grade}}
	if err := a.Expect(ctx, "POST /signup", "/signup", taken, http.StatusConflict); err != nil {
		return err
	}
	return s.wrongPassword(ctx, a, u, rnd)
}

// preCheckServices subscribes u to every service its grade allows, with
// parameters drawn from rnd, reading /data after each, and checks that the
// others are refused.
func (s *Scenario) preCheckServices(ctx context.Context, r *engine.Run, a *engine.Agent, u *user, rnd *rand.Rand) error {
	for _, service := range data.Services {
		p := data.NewParams(rnd.IntN, service)
		if !data.Allows(u.grade, service) {
			if err := a.Expect(ctx, "POST /modify", "/modify", modifyForm(service, p), http.StatusForbidden); err != nil {
				return err
			}
			continue
		}
		if err := s.modify(ctx, a, u, service, &p, engine.NoScore); err != nil {
			return err
		}
		if err := s.data(ctx, r, a, u, engine.NoScore); err != nil {
			return err
		}
	}
	return nil
}

// preCheckRemoval refuses bad changes of subscription, removes u's surname
// search and reads /data, then signs u out: /data is refused.
func (s *Scenario) preCheckRemoval(ctx context.Context, r *engine.Run, a *engine.Agent, u *user) error {
	for _, form := range []url.Values{
		{"service": {"nosuch"}, "code": {"1234567"}},
		{"service": {data.Postal}, "code": {"12345"}},
		{"service": {data.Surname}, "q": {"Ka"}},
	} {
		if err := a.Expect(ctx, "POST /modify", "/modify", form, http.StatusBadRequest); err != nil {
			return err
		}
	}
	if err := s.modify(ctx, a, u, data.Surname, nil, engine.NoScore); err != nil {
		return err
	}
	if err := s.data(ctx, r, a, u, engine.NoScore); err != nil {
		return err
	}
	if err := s.signout(ctx, a, engine.NoScore); err != nil {
		return err
	}
	if err := a.Expect(ctx, "GET /data", "/data", nil, http.StatusForbidden); err != nil {
		return err
	}
	return s.replay(ctx, a, u, s.m.runStream(2))
}

// preCheckWeather reads /data of u, subscribed to the weather, then again
// once its forecast's period has been over for a little longer than the
// promise allows a forecast to outlive it: a kept forecast fails here.
func (s *Scenario) preCheckWeather(ctx context.Context, r *engine.Run, a *engine.Agent, u *user) error {
	res, err := s.readData(ctx, a, u, engine.NoScore)
	if err != nil {
		return err
	}
	var items []struct {
		Service string                 `json:"service"`
		Data    services.WeatherAnswer `json:"data"`
	}
	_ = json.Unmarshal(res.Body, &items) // checked by readData
	for _, it := range items {
		if it.Service == data.Weather {
			if !r.SleepUntil(ctx, time.UnixMilli(it.Data.Date).Add(weatherFreshness+500*time.Millisecond)) {
				return ctx.Err()
			}
			return s.data(ctx, r, a, u, engine.NoScore)
		}
	}
	return nil
}

// preCheckTwin signs up a second premium user whose security subscription
// has the same req as the first's but a token of its own, and reads its /data
// at once: an answer kept for one user and given to another fails here.
func (s *Scenario) preCheckTwin(ctx context.Context, r *engine.Run, a *engine.Agent, view *viewer, first data.Params) error {
	u := s.m.newUser(data.Premium)
	view.set(u)
	rnd := s.m.runStream(1)
	if err := s.signup(ctx, a, u, engine.NoScore); err != nil {
		return err
	}
	if err := s.signin(ctx, a, u, engine.NoScore); err != nil {
		return err
	}
	security := data.NewParams(rnd.IntN, data.Security)
	security.Req = first.Req
	attacked := data.NewParams(rnd.IntN, data.Attacked)
	if err := s.modify(ctx, a, u, data.Security, &security, engine.NoScore); err != nil {
		return err
	}
	if err := s.modify(ctx, a, u, data.Attacked, &attacked, engine.NoScore); err != nil {
		return err
	}
	if err := s.data(ctx, r, a, u, engine.NoScore); err != nil {
		return err
	}
	s.m.giveBack(u)
	return s.signout(ctx, a, engine.NoScore)
}
