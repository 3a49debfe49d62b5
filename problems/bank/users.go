package bank

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/bank/data"
)

// owned is what one virtual user may use: its own accounts and addresses,
// so that no two users ever have attempts for one login or from one address
// in flight at once (MANUAL: "The rules").
type owned struct {
	first, last int64    // account ids
	addrs       []string // in 192.168.0.0/16, never in the initial log
	banned      string   // an initially banned address (shared, serialised)
}

func (s *Scenario) owned(n int) owned {
	o := owned{first: int64(n)*chunk + 1, last: int64(n+1) * chunk}
	for k := range addrsPerUser {
		o.addrs = append(o.addrs, fmt.Sprintf("192.168.%d.%d", n/16, n%16*16+k))
	}
	o.banned = s.m.init.Banned[n%len(s.m.init.Banned)]
	return o
}

// account picks a usable account of o: unlocked when wantLocked is false,
// locked otherwise; 0 if there is none after a few tries.
func (s *Scenario) account(rnd *rand.Rand, o owned, wantLocked bool) int64 {
	for range 50 {
		id := o.first + rnd.Int64N(o.last-o.first+1)
		if s.m.locked(id) == wantLocked && s.m.usable(id, "") {
			return id
		}
	}
	return 0
}

// address picks a usable address of o with room for n more failures before
// a ban; "" if there is none.
func (s *Scenario) address(rnd *rand.Rand, o owned, n int) string {
	for _, k := range rnd.Perm(len(o.addrs)) {
		ip := o.addrs[k]
		if s.m.ipCount(ip)+n < data.BanThreshold && s.m.usable(0, ip) {
			return ip
		}
	}
	return ""
}

// unknownLogin is a login that names no user.
func unknownLogin(rnd *rand.Rand) string {
	if rnd.IntN(3) == 0 {
		return []string{"admin", "root", "test", "guest"}[rnd.IntN(4)]
	}
	return fmt.Sprintf("u%07d", 200001+rnd.IntN(9_000_000))
}

// User plays one session: it opens / and then, by chance, logs in (after a
// typo or two), locks an account, gets an address banned, tries a locked
// account or a banned address, or opens /mypage without logging in.
func (s *Scenario) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	if u.ID >= maxUsers {
		u.Think(ctx, thinkMax, thinkMax)
		return nil
	}
	o := s.owned(u.ID)
	score := func(tag string, n int64) { u.ScoreN(tag, n) }
	think := func() bool { return u.Think(ctx, thinkMin, thinkMax) }
	// try thinks, then attempts; when the load ends it returns nil without
	// attempting, so loops around it must check ctx.
	try := func(id int64, login, password, ip string) error {
		if !think() {
			return nil
		}
		return s.attempt(ctx, r, u.Agent, id, login, password, ip, score)
	}
	rnd := u.Rand
	if err := s.top(ctx, u.Agent, "", score); err != nil {
		return err
	}
	switch pick := rnd.IntN(100); {
	case pick < 55: // log in, sometimes after typos
		id := s.account(rnd, o, false)
		typos := rnd.IntN(3)
		if id == 0 || s.m.userFailures(id)+typos >= data.LockThreshold {
			typos = 0
		}
		ip := s.address(rnd, o, typos)
		if id == 0 || ip == "" {
			break
		}
		user := s.m.cfg.User(id)
		for range typos {
			if err := try(id, user.Login, user.Password+"x", ip); err != nil {
				return err
			}
		}
		if err := try(id, user.Login, user.Password, ip); err != nil {
			return err
		}
	case pick < 70: // lock an account with wrong passwords, then try the right one
		id := s.account(rnd, o, false)
		if id == 0 {
			break
		}
		n := data.LockThreshold - s.m.userFailures(id)
		ip := s.address(rnd, o, n+1)
		if ip == "" {
			break
		}
		user := s.m.cfg.User(id)
		for range n {
			if err := try(id, user.Login, user.Password+"x", ip); err != nil {
				return err
			}
		}
		if err := try(id, user.Login, user.Password, ip); err != nil {
			return err
		}
	case pick < 80: // get an address banned, then try a right password from it
		ip := s.address(rnd, o, 0)
		id := s.account(rnd, o, false)
		if ip == "" || id == 0 || s.usableAddrs(o) < 4 {
			break
		}
		for ctx.Err() == nil && s.m.ipCount(ip) < data.BanThreshold {
			if err := try(0, unknownLogin(rnd), "password", ip); err != nil {
				return err
			}
		}
		user := s.m.cfg.User(id)
		if err := try(id, user.Login, user.Password, ip); err != nil {
			return err
		}
	case pick < 90: // a locked account with its right password
		id, ip := s.account(rnd, o, true), s.address(rnd, o, 1)
		if id == 0 || ip == "" {
			break
		}
		user := s.m.cfg.User(id)
		if err := try(id, user.Login, user.Password, ip); err != nil {
			return err
		}
	case pick < 95: // a right password from an initially banned address
		id := s.account(rnd, o, false)
		if id == 0 || !s.m.usable(0, o.banned) {
			break
		}
		user := s.m.cfg.User(id)
		if err := try(id, user.Login, user.Password, o.banned); err != nil {
			return err
		}
	default: // /mypage of an anonymous session
		ip := s.address(rnd, o, 1)
		if ip == "" {
			break
		}
		if err := try(0, unknownLogin(rnd), "password", ip); err != nil {
			return err
		}
		if err := s.loginRequired(ctx, u.Agent, score); err != nil {
			return err
		}
	}
	think()
	return nil
}

func (s *Scenario) usableAddrs(o owned) int {
	n := 0
	for _, ip := range o.addrs {
		if s.m.ipCount(ip) < data.BanThreshold && s.m.usable(0, ip) {
			n++
		}
	}
	return n
}

// loginRequired opens /mypage with an anonymous session: it must send the
// browser to / with the login-required notice.
func (s *Scenario) loginRequired(ctx context.Context, a *engine.Agent, score func(string, int64)) error {
	res, err := a.Get(ctx, "GET /mypage", "/mypage")
	if err != nil {
		return err
	}
	if err := res.Check(engine.Status(http.StatusSeeOther), engine.RedirectTo(func(loc string) string {
		if loc != "/" {
			return "expected / for a session that is not logged in"
		}
		return ""
	})); err != nil {
		if e := engine.AsError(err); e.Code != "status" {
			return err
		}
		return critical(res, "mypage", "/mypage answered %d to a session that is not logged in, expected 303 to /", res.StatusCode)
	}
	return s.top(ctx, a, reasonLoginRequired, score)
}

// Pre-check accounts and addresses: beyond the virtual users' chunks.
func preCheckOwned(s *Scenario) owned {
	o := owned{first: maxUsers*chunk + 1, last: int64(s.m.cfg.Users)}
	for k := 1; k <= 32; k++ {
		o.addrs = append(o.addrs, fmt.Sprintf("192.168.250.%d", k))
	}
	o.banned = s.m.init.Banned[len(s.m.init.Banned)-1]
	return o
}

// PreCheck checks every rule once, one request at a time, and /report
// before and after.
func (s *Scenario) PreCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	none := func(string, int64) {}
	o := preCheckOwned(s)
	if err := s.top(ctx, a, "", none); err != nil {
		return err
	}
	if err := s.checkReport(ctx, a); err != nil {
		return err
	}
	res, err := a.Get(ctx, "GET (unknown path)", "/no-such-page")
	if err != nil {
		return err
	}
	if err := res.Check(engine.Status(http.StatusNotFound)); err != nil {
		return err
	}
	if err := s.loginRequired(ctx, a, none); err != nil {
		return err
	}
	if err := s.top(ctx, a, "", none); err != nil { // the notice shows once
		return err
	}
	// Two successes from two addresses: the second /mypage shows the first.
	var withHistory, fresh, initiallyLocked int64
	for id := o.first; id <= o.last; id++ {
		st := s.m.init.Users[id]
		switch {
		case st.Failures >= data.LockThreshold && initiallyLocked == 0:
			initiallyLocked = id
		case st.Failures == 0 && !st.Last.At.IsZero() && withHistory == 0:
			withHistory = id
		case st.Failures == 0 && st.Last.At.IsZero() && fresh == 0:
			fresh = id
		}
	}
	steps := []struct {
		id       int64
		login    string
		password string
		ip       string
	}{
		{withHistory, "", "", o.addrs[0]},
		{withHistory, "", "", o.addrs[1]},
		{fresh, "", "", o.addrs[2]}, // a first success ever shows itself
		{0, "nosuchuser", "password", o.addrs[3]},
	}
	for _, st := range steps {
		login, password := st.login, st.password
		if st.id > 0 {
			u := s.m.cfg.User(st.id)
			login, password = u.Login, u.Password
		}
		if err := s.attempt(ctx, r, a, st.id, login, password, st.ip, none); err != nil {
			return err
		}
	}
	// A lock: three wrong passwords, then the right one is refused.
	lock := s.m.cfg.User(fresh + 1)
	for range data.LockThreshold - s.m.userFailures(lock.ID) {
		if err := s.attempt(ctx, r, a, lock.ID, lock.Login, lock.Password+"x", o.addrs[4], none); err != nil {
			return err
		}
	}
	if err := s.attempt(ctx, r, a, lock.ID, lock.Login, lock.Password, o.addrs[5], none); err != nil {
		return err
	}
	// An initially locked user and an initially banned address.
	il := s.m.cfg.User(initiallyLocked)
	if err := s.attempt(ctx, r, a, il.ID, il.Login, il.Password, o.addrs[6], none); err != nil {
		return err
	}
	ok := s.m.cfg.User(withHistory)
	if err := s.attempt(ctx, r, a, ok.ID, ok.Login, ok.Password, o.banned, none); err != nil {
		return err
	}
	// A ban: ten failures from one address, then a right password from it.
	ban := o.addrs[7]
	for s.m.ipCount(ban) < data.BanThreshold {
		if err := s.attempt(ctx, r, a, 0, unknownLogin(r.Rand(2)), "password", ban, none); err != nil {
			return err
		}
	}
	other := s.m.cfg.User(fresh + 2)
	if err := s.attempt(ctx, r, a, other.ID, other.Login, other.Password, ban, none); err != nil {
		return err
	}
	return s.checkReport(ctx, a)
}

// FinalCheck compares /report with the model.
func (s *Scenario) FinalCheck(ctx context.Context, r *engine.Run) error {
	a := r.NewAgent()
	defer a.Close()
	return s.checkReport(ctx, a)
}
