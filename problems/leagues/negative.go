package leagues

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// who is the person a session plays: a player or the organizer of t, or the
// admin (t nil).
type who struct {
	t                *tenant
	label, role, sub string
}

func playerWho(t *tenant, p *player) who {
	return who{t: t, label: t.name, role: rolePlayer, sub: strconv.FormatInt(p.id, 10)}
}
func organizerWho(t *tenant) who {
	return who{t: t, label: t.name, role: roleOrganizer, sub: organizerSub}
}

var adminWho = who{label: adminLabel, role: roleAdmin, sub: adminSub}

// maybeRefused is called before each request of a session: one time in
// negEvery it first sends the same request with a token the app must refuse
// (see refusedToken), then gives the user its own token back. It scores
// nothing; any other status than the manual's is a violation.
func (s *Scenario) maybeRefused(ctx context.Context, r *engine.Run, u *engine.User, w who, endpoint, method, path string, header http.Header, body []byte) error {
	if sent, err := s.useExpired(ctx, r, u, w, endpoint, method, path, header, body); sent || err != nil {
		return err
	}
	if method == http.MethodGet && u.Rand.IntN(expiringEvery) == 0 {
		return s.armExpiring(ctx, r, u, w, endpoint, path)
	}
	if u.Rand.IntN(negEvery) != 0 {
		return nil
	}
	kind := negKind(u.Rand.IntN(int(negKinds)))
	s.forge.noteClock(r)
	return s.sendRefused(ctx, u.Agent, w, kind, r.Now(), u.Rand, endpoint, method, path, header, body)
}

// sendRefused sends a request of w's with a token of kind (another one if it
// does not apply, or if the signing budget is spent), then gives a w's own
// token back: the answer must be the manual's status for it.
func (s *Scenario) sendRefused(ctx context.Context, a *engine.Agent, w who, kind negKind, now time.Time, rnd *rand.Rand, endpoint, method, path string, header http.Header, body []byte) error {
	own, err := s.m.token(w.label, w.role, w.sub, now)
	if err != nil {
		return engine.Internalf("token", "signing a token: %v", err)
	}
	tok, kind, err := s.refusedToken(w, own, kind, now, rnd)
	if errors.Is(err, errSignBudget) {
		s.forge.overBudgets.Add(1)
		tok, kind, err = tampered(own, negFlippedBit, nil, rnd), negFlippedBit, nil
	}
	if err != nil {
		return engine.Internalf("token", "signing a token: %v", err)
	}
	s.forge.sent[kind].Add(1)
	s.m.refusedCreation(endpoint, 1)
	host := s.m.hostOf(w.label)
	session(a, host, tok)
	defer session(a, host, own)
	res, err := send(ctx, a, endpoint+negEndpoint, method, path, header, body)
	if err != nil {
		return err
	}
	if res.StatusCode != kind.status() {
		return res.Criticalf("refusal", "%s: expected status %d, got %d", negNames[kind], kind.status(), res.StatusCode)
	}
	return res.Check(apiAnswer)
}

// preCheckRefused checks, one request at a time, that the organizer of t
// and the admin are refused with every kind of token that is forged or not
// theirs, on one of their own endpoints each.
func (s *Scenario) preCheckRefused(ctx context.Context, r *engine.Run, a *engine.Agent, t *tenant, rnd *rand.Rand) error {
	for _, c := range []struct {
		w              who
		endpoint, path string
	}{{organizerWho(t), epPlayers, "/api/organizer/players"}, {adminWho, epAdminBilling, "/api/admin/billing"}} {
		s.forge.noteClock(r)
		s.watch(a, c.w.label)
		for kind := range negKinds {
			if err := s.sendRefused(ctx, a, c.w, kind, r.Now(), rnd, c.endpoint, http.MethodGet, c.path, nil, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// refusedToken returns a token of kind for a request w would make with own,
// its own token; a kind that does not apply to w becomes a random signature.
func (s *Scenario) refusedToken(w who, own string, kind negKind, now time.Time, rnd *rand.Rand) (string, negKind, error) {
	other := s.m.otherTenant(w.t, rnd)
	c, _, _ := split(own)
	switch kind {
	case negRandomSig, negFlippedBit, negChangedClaims, negAlgNone, negHMAC:
		auds := []string{adminLabel}
		if other != nil {
			auds = append(auds, other.name)
		}
		return tampered(own, kind, auds, rnd), kind, nil
	case negOtherKey, negExpired:
		tok, err := s.forge.signedFake(kind, c, now, rnd)
		return tok, kind, err
	case negWrongRole:
		tok, err := s.wrongRole(w, now, rnd)
		if tok != "" || err != nil {
			return tok, kind, err
		}
	case negOtherOrganizer:
		if other != nil {
			tok, err := s.m.token(other.name, roleOrganizer, organizerSub, now)
			return tok, kind, err
		}
	case negOtherPlayer:
		if q := s.m.somePlayer(other, rnd); q != nil {
			tok, err := s.m.token(other.name, rolePlayer, strconv.FormatInt(q.id, 10), now)
			return tok, kind, err
		}
	case negDisqualified:
		if w.t != nil {
			if q := s.m.disqualifiedPlayer(w.t, rnd); q != nil {
				tok, err := s.m.token(w.t.name, rolePlayer, strconv.FormatInt(q.id, 10), now)
				return tok, kind, err
			}
		}
	}
	return tampered(own, negRandomSig, nil, rnd), negRandomSig, nil
}

// wrongRole returns a well signed token, for w's host, of a role w's
// endpoints refuse (403): the admin's role on a tenant's host for a player, a
// player of the tenant for an organizer, an organizer on the admin's host for
// the admin. "" when there is none.
func (s *Scenario) wrongRole(w who, now time.Time, rnd *rand.Rand) (string, error) {
	exp := now.Add(tokenLife).Unix()
	switch w.role {
	case rolePlayer:
		return s.forge.signWith("role\x00"+w.label, s.m.key, keys.Claims{Sub: adminSub, Aud: w.label, Role: roleAdmin, Exp: exp})
	case roleOrganizer:
		if q := s.m.somePlayer(w.t, rnd); q != nil {
			return s.m.token(w.label, rolePlayer, strconv.FormatInt(q.id, 10), now)
		}
		return "", nil
	}
	return s.forge.signWith("role\x00"+w.label, s.m.key, keys.Claims{Sub: organizerSub, Aud: w.label, Role: roleOrganizer, Exp: exp})
}

// otherTenant picks an initial tenant other than t, or nil.
func (m *model) otherTenant(t *tenant, rnd *rand.Rand) *tenant {
	for range 4 {
		o := m.tenant(1 + int64(rnd.IntN(m.cfg.Tenants)))
		if o != nil && o != t {
			return o
		}
	}
	return nil
}

// somePlayer picks a player of t who is surely not disqualified, or nil.
func (m *model) somePlayer(t *tenant, rnd *rand.Rand) *player {
	if t == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(t.players)
	if n == 0 {
		return nil
	}
	start := rnd.IntN(n)
	for i := range min(n, 8) {
		p := t.players[(start+i)%n]
		if !p.dqInitial && p.dqSent.IsZero() {
			return p
		}
	}
	return nil
}
