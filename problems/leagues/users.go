package leagues

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// User plays one session of the role the mix hands out: a player's, an
// organizer's or the admin's.
func (s *Scenario) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	switch s.mix.Next() {
	case roleAdmin:
		if s.m.takeAdmin() {
			defer s.m.dropAdmin()
			return s.adminSession(ctx, r, u)
		}
	case roleOrganizer:
		if t := s.m.pickOrganizerTenant(u.Rand); t != nil {
			defer s.m.releaseTenant(t)
			return s.organizerSession(ctx, r, u, t)
		}
	}
	return s.playerSession(ctx, r, u)
}

// The players.

// playerSession: a player of a tenant (most often one an organizer is working
// on) opens the app, reads the competitions, then a few rankings (mostly of
// running competitions) with a profile or two of the players on each, thinking
// between pages. A player who finds an empty ranking thinks and picks again;
// one whose ranking reads were slow three times leaves, and the seat stays
// empty a while.
func (s *Scenario) playerSession(ctx context.Context, r *engine.Run, u *engine.User) error {
	t, p := s.m.pickPlayer(u.Rand, u.ID)
	if p == nil {
		u.Think(ctx, thinkMin, thinkMax)
		return nil
	}
	defer s.m.giveBack(p)
	a, w := u.Agent, playerWho(t, p)
	if err := s.signIn(a, t.name, rolePlayer, w.sub, r.Now()); err != nil {
		return err
	}
	if err := s.loadApp(ctx, a); err != nil {
		return err
	}
	if err := s.maybeRefused(ctx, r, u, w, epPlayerComps, http.MethodGet, "/api/player/competitions", nil, nil); err != nil {
		return err
	}
	comps, err := s.listCompetitions(ctx, a, t, epPlayerComps, "/api/player/competitions", u)
	if err != nil {
		return err
	}
	for range minRounds + u.Rand.IntN(maxRounds-minRounds+1) {
		c := pickCompetition(comps, u.Rand)
		if c == nil {
			u.Think(ctx, thinkMin, thinkMax)
			return nil
		}
		if err := s.maybeRefused(ctx, r, u, w, epRanking, http.MethodGet, rankingPath(c.id, 0), nil, nil); err != nil {
			return err
		}
		ranks, left, err := s.readRanking(ctx, r, a, t, p, c, 0, u)
		if err != nil {
			return err
		}
		if left {
			u.Think(ctx, seatEmpty, seatEmpty)
			return nil
		}
		if len(ranks) == 0 {
			if !u.Think(ctx, emptyThinkMin, emptyThinkMax) {
				return nil
			}
			continue
		}
		if len(ranks) == rankingPage && u.Rand.IntN(secondPageEvery) == 0 {
			if !u.Think(ctx, thinkMin, thinkMax) {
				return nil
			}
			more, left, err := s.readRanking(ctx, r, a, t, p, c, rankingPage, u)
			if err != nil {
				return err
			}
			if left {
				u.Think(ctx, seatEmpty, seatEmpty)
				return nil
			}
			ranks = append(ranks, more...)
		}
		for range minProfiles + u.Rand.IntN(maxProfiles-minProfiles+1) {
			if !u.Think(ctx, thinkMin, thinkMax) {
				return nil
			}
			q := ranks[u.Rand.IntN(len(ranks))]
			if err := s.maybeRefused(ctx, r, u, w, epProfile, http.MethodGet, profilePath(q.id), nil, nil); err != nil {
				return err
			}
			if err := s.readProfile(ctx, a, t, q, u); err != nil {
				return err
			}
		}
		if !u.Think(ctx, thinkMin, thinkMax) {
			return nil
		}
	}
	return nil
}

// listed is a competition as a list showed it.
type listed struct {
	c        *competition
	finished bool
}

// pickCompetition picks a competition of a list, a running one openShare times
// in 10 when there is one.
func pickCompetition(list []listed, rnd *rand.Rand) *competition {
	if len(list) == 0 {
		return nil
	}
	var open []listed
	for _, l := range list {
		if !l.finished {
			open = append(open, l)
		}
	}
	if len(open) > 0 && rnd.IntN(10) < openShare {
		return open[rnd.IntN(len(open))].c
	}
	return list[rnd.IntN(len(list))].c
}

// signIn sets a's browser up as sub of role on the host of label, with a fresh
// token.
func (s *Scenario) signIn(a *engine.Agent, label, role, sub string, now time.Time) error {
	tok, err := s.m.token(label, role, sub, now)
	if err != nil {
		return engine.Internalf("token", "signing a token: %v", err)
	}
	session(a, s.m.hostOf(label), tok)
	s.watch(a, label)
	return nil
}

// listCompetitions reads a list of t's competitions (the player's or the
// organizer's) and checks it.
func (s *Scenario) listCompetitions(ctx context.Context, a *engine.Agent, t *tenant, endpoint, path string, sc engine.Scorer) ([]listed, error) {
	var ans competitionsAnswer
	res, err := get(ctx, a, endpoint, path, &ans)
	if err != nil {
		return nil, err
	}
	if ans.Competitions == nil {
		return nil, shape(res, "the answer lacks competitions")
	}
	if err := s.m.checkCompetitions(res, t, *ans.Competitions); err != nil {
		return nil, err
	}
	sc.Score(tagCompetitions, res)
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	out := make([]listed, 0, len(*ans.Competitions))
	for _, got := range *ans.Competitions {
		out = append(out, listed{c: t.compByID[*got.ID], finished: *got.IsFinished})
	}
	return out, nil
}

// readRanking reads a page of c's ranking as player p and checks it; it returns
// the ranked players (nil for an empty page, which scores nothing) and whether
// p leaves, the read having been their third over leaveAfter.
func (s *Scenario) readRanking(ctx context.Context, r *engine.Run, a *engine.Agent, t *tenant, p *player, c *competition, after int, sc engine.Scorer) ([]*player, bool, error) {
	sent := r.Now()
	s.m.readSent(c, p.id, sent)
	var ans rankingAnswer
	res, err := get(ctx, a, epRanking, rankingPath(c.id, after), &ans)
	if res != nil && res.StatusCode == http.StatusOK {
		s.m.readAnswered(c, p.id, res.Received)
	}
	left := false
	if (res != nil && res.Elapsed > leaveAfter) || (res == nil && engine.AsError(err).Class == engine.ClassTimeout) {
		if left = s.m.slowRead(p); left {
			r.Logf("player %d of %s leaves: a ranking read took over %s for the %d time", p.id, t.name, leaveAfter, leaveAfterReads)
		}
	}
	if err != nil {
		return nil, left, err
	}
	n, err := s.m.checkRanking(res, c, after, ans)
	if err != nil || n == 0 {
		return nil, left, err
	}
	sc.Score(tagRanking, res)
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	out := make([]*player, 0, n)
	for _, rk := range *ans.Ranks {
		out = append(out, t.byID[*rk.PlayerID])
	}
	return out, left, nil
}

// readProfile reads q's profile and checks it.
func (s *Scenario) readProfile(ctx context.Context, a *engine.Agent, t *tenant, q *player, sc engine.Scorer) error {
	var ans profileAnswer
	res, err := get(ctx, a, epProfile, profilePath(q.id), &ans)
	if err != nil {
		return err
	}
	if err := s.m.checkProfile(res, t, q, ans); err != nil {
		return err
	}
	sc.Score(tagProfile, res)
	return nil
}

// The organizers.

// organizerSession: the organizer of t opens the app and lists the players;
// adds players now and then (a tenant without players always); opens a
// competition (or takes an initial running one); uploads a few score files,
// thinking between them while players read the rankings; now and then
// disqualifies a player, who must be refused at once; finishes the competition
// it opened, reads the bill at once and again billDelay after the finish, when
// it must be exact; and lists the competitions.
func (s *Scenario) organizerSession(ctx context.Context, r *engine.Run, u *engine.User, t *tenant) error {
	a := u.Agent
	if err := s.signIn(a, t.name, roleOrganizer, organizerSub, r.Now()); err != nil {
		return err
	}
	if err := s.loadApp(ctx, a); err != nil {
		return err
	}
	w := organizerWho(t)
	if err := s.maybeRefused(ctx, r, u, w, epPlayers, http.MethodGet, "/api/organizer/players", nil, nil); err != nil {
		return err
	}
	if err := s.listPlayers(ctx, a, t, u); err != nil {
		return err
	}
	switch {
	case len(s.m.playersOf(t)) == 0:
		for range 2 {
			if err := s.addPlayers(ctx, a, t, newTenantPlayers, u); err != nil {
				return err
			}
		}
	case u.Rand.IntN(addPlayersEvery) == 0:
		if err := s.addPlayers(ctx, a, t, newPlayersMin+u.Rand.IntN(newPlayersMax-newPlayersMin+1), u); err != nil {
			return err
		}
	}
	var c *competition
	if t.initial && u.Rand.IntN(reuseEvery) == 0 {
		c = s.m.takeRunning(t, u.Rand)
	}
	opened := c == nil
	if opened {
		body := []byte(`{"title":"` + s.m.title() + `"}`)
		if err := s.maybeRefused(ctx, r, u, w, epAddCompetition, http.MethodPost, "/api/organizer/competitions", jsonHeader(), body); err != nil {
			return err
		}
		var err error
		if c, err = s.addCompetition(ctx, a, t, u); err != nil {
			return err
		}
	}
	defer s.m.releaseCompetition(c)
	for i := range minUploads + u.Rand.IntN(maxUploads-minUploads+1) {
		if i > 0 && !u.Think(ctx, uploadGapMin, uploadGapMax) {
			return nil
		}
		rows := s.m.scoreRows(t, u.Rand)
		if u.Rand.IntN(badFileEvery) == 0 {
			if err := s.badUpload(ctx, a, t, c, rows, u.Rand); err != nil {
				return err
			}
		}
		if err := s.upload(ctx, r, a, c, rows, u); err != nil {
			return err
		}
	}
	if u.Rand.IntN(disqualifyEvery) == 0 {
		if err := s.disqualify(ctx, r, a, t, u.Rand, u); err != nil {
			return err
		}
	}
	if opened {
		if done, err := s.finishAndBill(ctx, r, u, w, c); done || err != nil {
			return err
		}
	}
	if err := s.maybeRefused(ctx, r, u, w, epOrgCompetitions, http.MethodGet, "/api/organizer/competitions", nil, nil); err != nil {
		return err
	}
	_, err := s.listCompetitions(ctx, a, t, epOrgCompetitions, "/api/organizer/competitions", u)
	return err
}

// finishAndBill finishes c, which w, its tenant's organizer, opened; now and
// then tries an upload after the finish, which must be refused; and reads the
// bill at once and again billDelay after the finish, when it must be exact.
// done: the load ended meanwhile.
func (s *Scenario) finishAndBill(ctx context.Context, r *engine.Run, u *engine.User, w who, c *competition) (bool, error) {
	a, t := u.Agent, w.t
	if err := s.finish(ctx, r, a, c, u); err != nil {
		return false, err
	}
	if u.Rand.IntN(lateUploadEvery) == 0 {
		if err := s.lateUpload(ctx, r, a, c, s.m.scoreRows(t, u.Rand)); err != nil {
			return false, err
		}
	}
	if err := s.maybeRefused(ctx, r, u, w, epOrgBilling, http.MethodGet, "/api/organizer/billing", nil, nil); err != nil {
		return false, err
	}
	if err := s.readBilling(ctx, a, t, u); err != nil {
		return false, err
	}
	s.m.mu.Lock()
	exact := c.finishAnswered.Add(billDelay)
	s.m.mu.Unlock()
	if !r.SleepUntil(ctx, exact) {
		return true, nil
	}
	return false, s.readBilling(ctx, a, t, u)
}

// organizerSub is the subject of the organizers' tokens.
const organizerSub = "organizer"

// listPlayers reads the organizer's list of t's players and checks it.
func (s *Scenario) listPlayers(ctx context.Context, a *engine.Agent, t *tenant, sc engine.Scorer) error {
	var ans playersAnswer
	res, err := get(ctx, a, epPlayers, "/api/organizer/players", &ans)
	if err != nil {
		return err
	}
	if ans.Players == nil {
		return shape(res, "the answer lacks players")
	}
	if err := s.m.checkPlayers(res, t, *ans.Players); err != nil {
		return err
	}
	sc.Score(tagPlayers, res)
	return nil
}

// addPlayers adds n players to t: new players, not disqualified, named as
// asked, with new ids in increasing order.
func (s *Scenario) addPlayers(ctx context.Context, a *engine.Agent, t *tenant, n int, sc engine.Scorer) error {
	names := s.m.playerNames(n)
	floor := s.m.idsBefore()
	s.m.playersSent(t, names)
	var ans playersAnswer
	res, err := postJSON(ctx, a, epAddPlayers, "/api/organizer/players", map[string][]string{"display_names": names}, &ans)
	if err != nil {
		return err
	}
	if ans.Players == nil || len(*ans.Players) != len(names) {
		return wrong(res, "players", "%d players were added; the answer does not list %d players", len(names), len(names))
	}
	ids := make([]int64, len(names))
	for i, got := range *ans.Players {
		if !got.complete() {
			return shape(res, "a player lacks id, display_name or is_disqualified")
		}
		if *got.DisplayName != names[i] || *got.IsDisqualified {
			return wrong(res, "players", "new player %d is %q (disqualified: %v), expected %q, not disqualified",
				i+1, *got.DisplayName, *got.IsDisqualified, names[i])
		}
		ids[i] = *got.ID
	}
	if why := s.m.playersAdded(t, names, ids, floor, res.Received); why != "" {
		return wrong(res, "id", "%s", why)
	}
	sc.Score(tagAddPlayers, res)
	return nil
}

// addCompetition opens a competition in t, held by the caller until
// releaseCompetition.
func (s *Scenario) addCompetition(ctx context.Context, a *engine.Agent, t *tenant, sc engine.Scorer) (*competition, error) {
	title := s.m.title()
	floor := s.m.idsBefore()
	s.m.competitionSent(t, title)
	var ans competitionAnswer
	res, err := postJSON(ctx, a, epAddCompetition, "/api/organizer/competitions", map[string]string{"title": title}, &ans)
	if err != nil {
		return nil, err
	}
	got := ans.Competition
	if got == nil || !got.complete() {
		return nil, shape(res, "the answer lacks the competition's id, title or is_finished")
	}
	if *got.Title != title || *got.IsFinished {
		return nil, wrong(res, "competition", "the new competition is %q (finished: %v), expected %q, running", *got.Title, *got.IsFinished, title)
	}
	c, why := s.m.competitionAdded(t, title, *got.ID, floor, res.Received)
	if why != "" {
		return nil, wrong(res, "id", "%s", why)
	}
	sc.Score(tagAddCompetition, res)
	return c, nil
}

// upload uploads rows to c: the answer must count them, and from it on the
// rankings show them. An upload the app did not acknowledge leaves c uncertain
// for good: its organizer leaves it.
func (s *Scenario) upload(ctx context.Context, r *engine.Run, a *engine.Agent, c *competition, rows [][2]int64, sc engine.Scorer) error {
	up := newUpload(rows)
	s.m.uploadSent(c, up, r.Now())
	h, body := csvBody(csvOf(rows))
	var ans rowsAnswer
	res, err := call(ctx, a, epScores, http.MethodPost, scoresPath(c.id), h, body, http.StatusOK, &ans)
	acked := res != nil && res.StatusCode == http.StatusOK
	var at time.Time
	if acked {
		at = res.Received
	}
	s.m.uploadDone(c, up, acked, false, at)
	if err != nil {
		return err
	}
	if ans.Rows == nil || *ans.Rows != int64(len(rows)) {
		return wrong(res, "rows", "an upload of %d rows was answered with rows %v", len(rows), derefOr(ans.Rows))
	}
	sc.Score(tagUpload, res)
	return nil
}

// badUpload uploads rows to c, before they are uploaded for good, with a row
// of another tenant's player put in at a random place: the app must refuse
// the file (400) and change nothing. It scores nothing; the result's table
// names it with badFileEndpoint after the endpoint.
func (s *Scenario) badUpload(ctx context.Context, a *engine.Agent, t *tenant, c *competition, rows [][2]int64, rnd *rand.Rand) error {
	q := s.m.somePlayer(s.m.otherTenant(t, rnd), rnd)
	if q == nil {
		return nil
	}
	i := rnd.IntN(len(rows) + 1)
	bad := slices.Insert(slices.Clone(rows), i, [2]int64{q.id, scoreStep * rnd.Int64N(scoreSteps)})
	h, body := csvBody(csvOf(bad))
	_, err := refused(ctx, a, epScores+badFileEndpoint, http.MethodPost, scoresPath(c.id), h, body, http.StatusBadRequest,
		"a file naming another tenant's player")
	return err
}

// badFileEndpoint marks the uploads of bad files in the result's table.
const badFileEndpoint = " (bad file)"

// lateUpload uploads rows to c after its finish: the app must refuse it with
// 409 and change nothing. It scores nothing.
func (s *Scenario) lateUpload(ctx context.Context, r *engine.Run, a *engine.Agent, c *competition, rows [][2]int64) error {
	up := newUpload(rows)
	s.m.uploadSent(c, up, r.Now())
	h, body := csvBody(csvOf(rows))
	res, err := refused(ctx, a, epScores, http.MethodPost, scoresPath(c.id), h, body, http.StatusConflict, "an upload after the finish")
	s.m.uploadDone(c, up, false, res != nil && res.StatusCode == http.StatusConflict, time.Time{})
	return err
}

// finish finishes c: the answer shows it finished, and from it on c takes no
// upload.
func (s *Scenario) finish(ctx context.Context, r *engine.Run, a *engine.Agent, c *competition, sc engine.Scorer) error {
	s.m.finishSent(c, r.Now())
	var ans competitionAnswer
	res, err := call(ctx, a, epFinish, http.MethodPost, finishPath(c.id), nil, nil, http.StatusOK, &ans)
	acked := res != nil && res.StatusCode == http.StatusOK
	at := r.Now()
	if acked {
		at = res.Received
	}
	s.m.finishDone(c, acked, at)
	if err != nil {
		return err
	}
	got := ans.Competition
	if got == nil || !got.complete() {
		return shape(res, "the answer lacks the competition's id, title or is_finished")
	}
	if *got.ID != c.id || *got.Title != c.title || !*got.IsFinished {
		return wrong(res, "finish", "finishing competition %d %q answered %d %q finished: %v", c.id, c.title, *got.ID, *got.Title, *got.IsFinished)
	}
	sc.Score(tagFinish, res)
	return nil
}

// disqualify disqualifies a player of t who is not playing: the answer shows
// them disqualified, and at once they are refused (checked with their own
// token, scoring nothing).
func (s *Scenario) disqualify(ctx context.Context, r *engine.Run, a *engine.Agent, t *tenant, rnd *rand.Rand, sc engine.Scorer) error {
	p := s.m.borrowPlayer(t, rnd)
	if p == nil {
		return nil
	}
	return s.disqualifyHeld(ctx, r, a, t, p, sc)
}

// disqualifyHeld is disqualify of p, held by the caller (it gives p back); a is
// left as t's organizer.
func (s *Scenario) disqualifyHeld(ctx context.Context, r *engine.Run, a *engine.Agent, t *tenant, p *player, sc engine.Scorer) error {
	s.m.disqualifySent(p, r.Now())
	var ans playerAnswer
	res, err := call(ctx, a, epDisqualify, http.MethodPost, disqualifyPath(p.id), nil, nil, http.StatusOK, &ans)
	if res != nil && res.StatusCode == http.StatusOK {
		s.m.disqualified(p, res.Received)
	}
	s.m.giveBack(p)
	if err != nil {
		return err
	}
	got := ans.Player
	if got == nil || !got.complete() {
		return shape(res, "the answer lacks the player's id, display_name or is_disqualified")
	}
	if *got.ID != p.id || *got.DisplayName != p.name || !*got.IsDisqualified {
		return wrong(res, "disqualify", "disqualifying player %d %q answered %d %q disqualified: %v", p.id, p.name, *got.ID, *got.DisplayName, *got.IsDisqualified)
	}
	sc.Score(tagDisqualify, res)
	orgTok, err := s.m.token(t.name, roleOrganizer, organizerSub, r.Now())
	if err != nil {
		return engine.Internalf("token", "signing a token: %v", err)
	}
	defer session(a, s.m.hostOf(t.name), orgTok)
	if err := s.signIn(a, t.name, rolePlayer, strconv.FormatInt(p.id, 10), r.Now()); err != nil {
		return err
	}
	_, err = refused(ctx, a, epMe, http.MethodGet, "/api/me", nil, nil, http.StatusForbidden, "a player disqualified before the request")
	return err
}

// readBilling reads t's bill as its organizer and checks it.
func (s *Scenario) readBilling(ctx context.Context, a *engine.Agent, t *tenant, sc engine.Scorer) error {
	var ans billingAnswer
	res, err := get(ctx, a, epOrgBilling, "/api/organizer/billing", &ans)
	if err != nil {
		return err
	}
	if err := s.m.checkBilling(res, t, ans); err != nil {
		return err
	}
	sc.Score(tagBilling, res)
	return nil
}

// The admin.

// adminSession: the admin opens the app, pages through every tenant's bill,
// highest id first, to the empty page after the last, and adds a tenant, whose
// organizer then adds its players.
func (s *Scenario) adminSession(ctx context.Context, r *engine.Run, u *engine.User) error {
	a := u.Agent
	if err := s.signIn(a, adminLabel, roleAdmin, adminSub, r.Now()); err != nil {
		return err
	}
	if err := s.loadApp(ctx, a); err != nil {
		return err
	}
	before := int64(0)
	for {
		if err := s.maybeRefused(ctx, r, u, adminWho, epAdminBilling, http.MethodGet, adminBillingPath(before), nil, nil); err != nil {
			return err
		}
		n, last, err := s.readAdminPage(ctx, a, before, u)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		before = last
		if !u.Think(ctx, thinkMin, thinkMax) {
			return nil
		}
	}
	_, err := s.addTenant(ctx, r, a, u)
	return err
}

// adminSub is the subject of the admin's tokens; adminLabel the admin's host
// label and audience.
const (
	adminSub   = "admin"
	adminLabel = keys.AdminAudience
)

// readAdminPage reads the page of bills before before (0: the first) and checks
// it; it returns how many tenants it lists and the last one's id. An empty page
// scores nothing.
func (s *Scenario) readAdminPage(ctx context.Context, a *engine.Agent, before int64, sc engine.Scorer) (int, int64, error) {
	var ans tenantsAnswer
	res, err := get(ctx, a, epAdminBilling, adminBillingPath(before), &ans)
	if err != nil {
		return 0, 0, err
	}
	if err := s.m.checkAdminPage(res, before, ans); err != nil {
		return 0, 0, err
	}
	list := *ans.Tenants
	if len(list) == 0 {
		return 0, 0, nil
	}
	sc.Score(tagAdminBilling, res)
	return len(list), *list[len(list)-1].ID, nil
}

// addTenant adds a tenant: the answer names it with a new id and a bill of 0,
// and its host works at once.
func (s *Scenario) addTenant(ctx context.Context, r *engine.Run, a *engine.Agent, sc engine.Scorer) (*tenant, error) {
	name, display := s.m.tenantName()
	sent := r.Now()
	s.m.tenantSent(name, sent)
	var ans tenantAnswer
	res, err := postJSON(ctx, a, epAddTenant, "/api/admin/tenants", map[string]string{"name": name, "display_name": display}, &ans)
	if err != nil {
		return nil, err
	}
	got := ans.Tenant
	if got == nil || !got.complete(true) {
		return nil, shape(res, "the answer lacks the tenant's id, name, display_name or billing")
	}
	if *got.Name != name || *got.DisplayName != display || *got.Billing != 0 {
		return nil, wrong(res, "tenant", "the new tenant is %q %q with a bill of %d, expected %q %q with 0", *got.Name, *got.DisplayName, *got.Billing, name, display)
	}
	if why := s.m.tenantAdded(*got.ID, name, display, sent, res.Received); why != "" {
		return nil, wrong(res, "id", "%s", why)
	}
	sc.Score(tagAddTenant, res)
	return s.m.tenant(*got.ID), nil
}

func derefOr(p *int64) any {
	if p == nil {
		return "missing"
	}
	return *p
}

// Choices, in the model.

// takeAdmin reserves the admin's seat: one admin session at a time.
func (m *model) takeAdmin() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.admins > 0 {
		return false
	}
	m.admins++
	return true
}

func (m *model) dropAdmin() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.admins--
}

// pickOrganizerTenant picks a tenant for an organizer session and holds it:
// first a tenant added during the run that has no player yet, else the huge
// tenant hugeShare times in 8, else any; nil when none is free.
func (m *model) pickOrganizerTenant(rnd *rand.Rand) *tenant {
	m.mu.Lock()
	defer m.mu.Unlock()
	var t *tenant
	for _, c := range m.tenants {
		if !c.initial && len(c.players) == 0 && !c.organized {
			t = c
			break
		}
	}
	if t == nil && rnd.IntN(8) < hugeShare && !m.tenants[0].organized {
		t = m.tenants[0]
	}
	for try := 0; t == nil && try < 10; try++ {
		if c := m.tenants[rnd.IntN(len(m.tenants))]; !c.organized {
			t = c
		}
	}
	if t != nil {
		t.organized, t.touched = true, true
	}
	return t
}

func (m *model) releaseTenant(t *tenant) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t.organized = false
}

// pickPlayer picks a player for user uid to play and holds them: of a tenant
// other than the huge one that an organizer is working on liveShare times in 4
// (when one has a player free), else of the huge tenant hugeShare times in 8,
// else of any tenant. The huge tenant's share of the players stays the same
// however many organizers there are: its rankings wait on each other, and a
// share that grew as the users fell would slow the few users that remain. A
// user is
// one person: on each path it plays the player it played there before while
// that player may play (and, on the live path, while the tenant is still being
// worked on), so that players come back with the token they were given rather
// than a new player signing in every session.
func (m *model) pickPlayer(rnd *rand.Rand, uid int) (*tenant, *player) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rnd.IntN(4) < liveShare {
		if r := m.liveSeats[uid]; r.p != nil && r.t.organized && r.p.playable() {
			r.p.inUse = true
			return r.t, r.p
		}
		var live []*tenant
		for _, t := range m.tenants[1:] {
			if t.organized && len(t.players) > 0 {
				live = append(live, t)
			}
		}
		if len(live) > 0 {
			t := live[rnd.IntN(len(live))]
			if p := m.borrowPlayerLocked(t, rnd); p != nil {
				m.liveSeats[uid] = seat{t, p}
				return t, p
			}
		}
	}
	if r := m.seats[uid]; r.p != nil && r.p.playable() {
		r.p.inUse = true
		return r.t, r.p
	}
	if rnd.IntN(8) < hugeShare {
		if p := m.borrowPlayerLocked(m.tenants[0], rnd); p != nil {
			m.seats[uid] = seat{m.tenants[0], p}
			return m.tenants[0], p
		}
	}
	for range 10 {
		t := m.tenants[rnd.IntN(len(m.tenants))]
		if p := m.borrowPlayerLocked(t, rnd); p != nil {
			m.seats[uid] = seat{t, p}
			return t, p
		}
	}
	return nil, nil
}

// takeRunning picks an initial running competition of t that no organizer works
// on and holds it; nil if none.
func (m *model) takeRunning(t *tenant, rnd *rand.Rand) *competition {
	m.mu.Lock()
	defer m.mu.Unlock()
	var free []*competition
	for _, c := range t.comps {
		if c.initial && !c.initialFinished && !c.busy && !c.abandoned {
			free = append(free, c)
		}
	}
	if len(free) == 0 {
		return nil
	}
	c := free[rnd.IntN(len(free))]
	c.busy = true
	return c
}

func (m *model) releaseCompetition(c *competition) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c.busy = false
}

// scoreRows draws the rows of an upload to a competition of t: some of its
// players, a few of them on two or three rows, in random order, with scores
// that often tie.
func (m *model) scoreRows(t *tenant, rnd *rand.Rand) [][2]int64 {
	players := m.playersOf(t)
	share := participateMin + rnd.IntN(participateMax-participateMin+1)
	var rows [][2]int64
	for _, p := range players {
		if rnd.IntN(100) >= share {
			continue
		}
		n := 1
		if rnd.IntN(100) < repeatPercent {
			n = 2 + rnd.IntN(2)
		}
		for range n {
			rows = append(rows, [2]int64{p.id, scoreStep * rnd.Int64N(scoreSteps)})
		}
	}
	rnd.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	return rows[:min(len(rows), maxRows)]
}

// disqualifySent and disqualified record a disqualification sent and answered.
func (m *model) disqualifySent(p *player, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.dqSent = at
}

func (m *model) disqualified(p *player, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.dqAnswered = at
}
