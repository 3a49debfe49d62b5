package leagues

import (
	"context"
	"crypto/rsa"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// A token that expires during the run: before one GET in expiringEvery, a
// user sends the request with its own claims signed to expire a few seconds
// later, which the app must take; before the first request to the same host
// the user makes once that expiry has surely passed on the app's clock, it
// sends that token again, which the app must refuse (401), although it may
// remember having verified it.

// expiringEvery: one GET in expiringEvery is first sent with a token that
// expires a few seconds later.
const expiringEvery = 60

// expiringLead is how many seconds past the app's clock's latest possible
// second a token that expires is made to live.
const expiringLead = 3

// expiring is a token of a user's that the app took and that has expired
// since.
type expiring struct {
	label, token string
	ripe         time.Time // when the app's clock is surely past its exp
}

// expirings keeps the users' expiring tokens and counts them.
type expirings struct {
	byUser      sync.Map // *engine.User → expiring
	armed, sent atomic.Int64
}

// armExpiring sends a GET of w's with w's claims signed to expire soon; if the
// app takes it, it is sent again once expired (see useExpired). It scores
// nothing and checks nothing: a live token is the user's own.
func (s *Scenario) armExpiring(ctx context.Context, r *engine.Run, u *engine.User, w who, endpoint, path string) error {
	now := r.Now()
	own, err := s.m.token(w.label, w.role, w.sub, now)
	if err != nil {
		return engine.Internalf("token", "signing a token: %v", err)
	}
	c, _, ok := split(own)
	if !ok {
		return engine.Internalf("token", "a token of the run does not split: %q", own)
	}
	lo, hi := r.TargetClockBounds()
	c.Exp = now.Add(hi).Unix() + expiringLead + int64(u.Rand.IntN(3))
	tok, err := s.forge.signFresh(s.m.key, c)
	if err == errSignBudget {
		s.forge.overBudgets.Add(1)
		return nil
	}
	if err != nil {
		return engine.Internalf("token", "signing a token: %v", err)
	}
	host := s.m.hostOf(w.label)
	session(u.Agent, host, tok)
	defer session(u.Agent, host, own)
	res, err := send(ctx, u.Agent, endpoint+expiringEndpoint, http.MethodGet, path, nil, nil)
	if err != nil {
		return err
	}
	if res.StatusCode == http.StatusOK && res.Received.Add(hi).Unix() < c.Exp {
		s.forge.expiring.armed.Add(1)
		ripe := time.Unix(c.Exp+1, 0).Add(-lo)
		s.forge.expiring.byUser.Store(u, expiring{label: w.label, token: tok, ripe: ripe})
	}
	return nil
}

// expiringEndpoint marks the first use of an expiring token in the result's
// table.
const expiringEndpoint = " (expiring token)"

// useExpired sends u's expired token, if it has one for w's host whose expiry
// has passed on the app's clock, with this request of w's: the app must refuse
// it (401). sent: it did.
func (s *Scenario) useExpired(ctx context.Context, r *engine.Run, u *engine.User, w who, endpoint, method, path string, header http.Header, body []byte) (bool, error) {
	v, ok := s.forge.expiring.byUser.Load(u)
	if !ok {
		return false, nil
	}
	e := v.(expiring)
	now := r.Now()
	if e.label != w.label {
		s.forge.expiring.byUser.Delete(u)
		return false, nil
	}
	if now.Before(e.ripe) {
		return false, nil
	}
	s.forge.expiring.byUser.Delete(u)
	own, err := s.m.token(w.label, w.role, w.sub, now)
	if err != nil {
		return false, engine.Internalf("token", "signing a token: %v", err)
	}
	s.forge.expiring.sent.Add(1)
	s.m.refusedCreation(endpoint, 1)
	host := s.m.hostOf(w.label)
	session(u.Agent, host, e.token)
	defer session(u.Agent, host, own)
	res, err := send(ctx, u.Agent, endpoint+negEndpoint, method, path, header, body)
	if err != nil {
		return true, err
	}
	if res.FromCache {
		return true, nil
	}
	if res.StatusCode != http.StatusUnauthorized {
		return true, res.Criticalf("refusal", "%s: expected status %d, got %d", expiredAfterUse, http.StatusUnauthorized, res.StatusCode)
	}
	return true, res.Check(apiAnswer)
}

// expiredAfterUse names the second use of an expiring token in messages.
const expiredAfterUse = "a token taken before its expiry, sent again after it"

// signFresh signs c by key, counting the cost, within the signing budget.
func (f *forger) signFresh(key *rsa.PrivateKey, c keys.Claims) (string, error) {
	if f.overBudget() {
		return "", errSignBudget
	}
	start := time.Now()
	tok, err := keys.Sign(key, c)
	f.signing.Add(int64(time.Since(start)))
	f.signed.Add(1)
	return tok, err
}
