package leagues

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// preCheckPlayers is how many initial players of the pre-check's tenant it
// plays (p1, p2, p3) besides its disqualified one.
const preCheckPlayers = 3

// PreCheck checks the initialized app one request at a time, refusals included:
// tokens that are missing, forged, unsigned, expired or for another tenant
// (401); roles on the wrong endpoints or hosts (403); an unknown host (404);
// what each role reads of a tenant, exactly; a disqualified player refused
// everywhere; a new competition through uploads (ranks, ties, last rows, bad
// files refused), a disqualification, its finish (and an upload after it
// refused), viewers before and after it, and its exact bill; a new tenant and
// the admin's pages. Any error fails the run.
func (s *Scenario) PreCheck(ctx context.Context, r *engine.Run) error {
	rnd := r.Rand(2)
	a := r.NewAgent()
	defer a.Close()
	t, other, ps, dq := s.m.preCheckTenant(rnd)
	if t == nil {
		return engine.Internalf("pre-check", "the initial data has no tenant for the pre-check")
	}
	defer func() {
		for _, p := range ps {
			s.m.giveBack(p)
		}
	}()
	host, now := s.m.hostOf(t.name), r.Now()
	sub := strconv.FormatInt(ps[0].id, 10)

	session(a, host, "")
	s.watch(a, t.name)
	if err := s.loadApp(ctx, a); err != nil {
		return err
	}
	if err := s.preCheckTokens(ctx, r, a, t, other, sub); err != nil {
		return err
	}
	if err := s.preCheckOrganizerReads(ctx, a, t, now); err != nil {
		return err
	}
	if err := s.preCheckPlayerReads(ctx, r, a, t, ps[0], now); err != nil {
		return err
	}
	if err := s.preCheckHuge(ctx, r, a, rnd); err != nil {
		return err
	}
	if err := s.preCheckDisqualified(ctx, a, t, dq, now); err != nil {
		return err
	}
	if err := s.preCheckCompetition(ctx, r, a, t, other, ps); err != nil {
		return err
	}
	if err := s.preCheckAdmin(ctx, r, a, t, ps[0]); err != nil {
		return err
	}
	if err := s.preCheckRefused(ctx, r, a, t, rnd); err != nil {
		return err
	}
	return s.preCheckBadRequests(ctx, r, a, t)
}

// asOrganizer signs a in as t's organizer, with a token issued at now.
func (s *Scenario) asOrganizer(a *engine.Agent, t *tenant, now time.Time) error {
	return s.signIn(a, t.name, roleOrganizer, organizerSub, now)
}

// asPlayer signs a in as p, a player of t, with a token issued at now.
func (s *Scenario) asPlayer(a *engine.Agent, t *tenant, p *player, now time.Time) error {
	return s.signIn(a, t.name, rolePlayer, strconv.FormatInt(p.id, 10), now)
}

// preCheckOrganizerReads checks what t's organizer reads of it, exactly:
// itself, the players, the competitions and the bill.
func (s *Scenario) preCheckOrganizerReads(ctx context.Context, a *engine.Agent, t *tenant, now time.Time) error {
	if err := s.asOrganizer(a, t, now); err != nil {
		return err
	}
	if err := s.readMe(ctx, a, roleOrganizer, organizerSub, t, nil); err != nil {
		return err
	}
	if err := s.listPlayers(ctx, a, t, engine.NoScore); err != nil {
		return err
	}
	if _, err := s.listCompetitions(ctx, a, t, epOrgCompetitions, "/api/organizer/competitions", engine.NoScore); err != nil {
		return err
	}
	return s.readBilling(ctx, a, t, engine.NoScore)
}

// preCheckPlayerReads checks what p, a player of t, reads of it, exactly:
// itself, the competitions, each one's ranking and the profile of its last
// player, and its own profile.
func (s *Scenario) preCheckPlayerReads(ctx context.Context, r *engine.Run, a *engine.Agent, t *tenant, p *player, now time.Time) error {
	if err := s.asPlayer(a, t, p, now); err != nil {
		return err
	}
	if err := s.readMe(ctx, a, rolePlayer, strconv.FormatInt(p.id, 10), t, p); err != nil {
		return err
	}
	comps, err := s.listCompetitions(ctx, a, t, epPlayerComps, "/api/player/competitions", engine.NoScore)
	if err != nil {
		return err
	}
	for _, l := range comps {
		ranks, _, err := s.readRanking(ctx, r, a, t, p, l.c, 0, engine.NoScore)
		if err != nil {
			return err
		}
		if len(ranks) > 0 {
			if err := s.readProfile(ctx, a, t, ranks[len(ranks)-1], engine.NoScore); err != nil {
				return err
			}
		}
	}
	return s.readProfile(ctx, a, t, p, engine.NoScore)
}

// preCheckDisqualified checks that dq, a disqualified player of t, is refused
// everywhere.
func (s *Scenario) preCheckDisqualified(ctx context.Context, a *engine.Agent, t *tenant, dq *player, now time.Time) error {
	if err := s.asPlayer(a, t, dq, now); err != nil {
		return err
	}
	for _, path := range []struct{ endpoint, path string }{
		{epMe, "/api/me"}, {epPlayerComps, "/api/player/competitions"},
		{epRanking, rankingPath(t.comps[0].id, 0)}, {epProfile, profilePath(dq.id)},
	} {
		if _, err := refused(ctx, a, path.endpoint, http.MethodGet, path.path, nil, nil, http.StatusForbidden, "a disqualified player"); err != nil {
			return err
		}
	}
	return nil
}

// preCheckTokens checks the refusals of tokens and roles, and an unknown host,
// on t's host.
func (s *Scenario) preCheckTokens(ctx context.Context, r *engine.Run, a *engine.Agent, t, other *tenant, sub string) error {
	host, now := s.m.hostOf(t.name), r.Now()
	live, past := now.Add(tokenLife).Unix(), now.Add(-time.Hour).Unix()
	otherPlayer := strconv.FormatInt(other.players[0].id, 10)
	type forged struct {
		why string
		tok func() (string, error)
	}
	signed := func(c map[string]any) func() (string, error) {
		return func() (string, error) { return s.signRaw(s.m.key, "RS256", c) }
	}
	for _, f := range []forged{
		{"no token", func() (string, error) { return "", nil }},
		{"a token that is not a JWT", func() (string, error) { return "not-a-token", nil }},
		{"an unsigned token (alg none)", func() (string, error) { return s.signRaw(nil, "none", claims(sub, t.name, rolePlayer, live)) }},
		{"a token signed with HS256 keyed with the public key", func() (string, error) {
			return s.signRaw(nil, "HS256", claims(sub, t.name, rolePlayer, live))
		}},
		{"a token signed with another key", func() (string, error) { return s.signRaw(s.other, "RS256", claims(sub, t.name, rolePlayer, live)) }},
		{"an expired token", signed(claims(sub, t.name, rolePlayer, past))},
		{"a token without exp", signed(claims(sub, t.name, rolePlayer, 0))},
		{"a token for another tenant", signed(claims(sub, other.name, rolePlayer, live))},
		{"a token for the admin's host", signed(claims(organizerSub, adminLabel, roleOrganizer, live))},
		{"a token of another tenant's player", signed(claims(otherPlayer, t.name, rolePlayer, live))},
		{"a player's token whose sub is no id", signed(claims("x"+sub, t.name, rolePlayer, live))},
		{"a token with an empty sub", signed(claims("", t.name, roleOrganizer, live))},
		{"a token with an unknown role", signed(claims(sub, t.name, "superuser", live))},
	} {
		tok, err := f.tok()
		if err != nil {
			return engine.Internalf("token", "signing a token: %v", err)
		}
		session(a, host, tok)
		if _, err := refused(ctx, a, epMe, http.MethodGet, "/api/me", nil, nil, http.StatusUnauthorized, f.why); err != nil {
			return err
		}
	}
	// Roles: each on its own endpoints and host.
	type misuse struct {
		label, role, sub, endpoint, path, why string
	}
	for _, u := range []misuse{
		{t.name, roleOrganizer, organizerSub, epPlayerComps, "/api/player/competitions", "an organizer on a player's endpoint"},
		{t.name, rolePlayer, sub, epPlayers, "/api/organizer/players", "a player on an organizer's endpoint"},
		{t.name, rolePlayer, sub, epAdminBilling, "/api/admin/billing", "a player on the admin's endpoint"},
		{t.name, roleAdmin, adminSub, epMe, "/api/me", "the admin's role on a tenant's host"},
		{adminLabel, roleOrganizer, organizerSub, epAdminBilling, "/api/admin/billing", "an organizer on the admin's host"},
		{adminLabel, roleAdmin, adminSub, epOrgBilling, "/api/organizer/billing", "the admin on an organizer's endpoint"},
	} {
		if err := s.signIn(a, u.label, u.role, u.sub, now); err != nil {
			return err
		}
		if _, err := refused(ctx, a, u.endpoint, http.MethodGet, u.path, nil, nil, http.StatusForbidden, u.why); err != nil {
			return err
		}
	}
	if err := s.signIn(a, t.name, roleOrganizer, organizerSub, now); err != nil {
		return err
	}
	a.SetHost(s.m.hostOf("no-such-tenant"))
	_, err := refused(ctx, a, epMe, http.MethodGet, "/api/me", nil, nil, http.StatusNotFound, "a host that names no tenant")
	return err
}

// readMe reads /api/me and checks it.
func (s *Scenario) readMe(ctx context.Context, a *engine.Agent, role, sub string, t *tenant, p *player) error {
	var ans meAnswer
	res, err := get(ctx, a, epMe, "/api/me", &ans)
	if err != nil {
		return err
	}
	return s.m.checkMe(res, role, sub, t, p, ans)
}

// preCheckHuge reads a long ranking of the huge tenant page by page, past its
// end, and refuses bad pages.
func (s *Scenario) preCheckHuge(ctx context.Context, r *engine.Run, a *engine.Agent, rnd *rand.Rand) error {
	huge := s.m.tenant(1)
	p := s.m.borrowPlayer(huge, rnd)
	if p == nil {
		return engine.Internalf("pre-check", "the huge tenant has no player to play")
	}
	defer s.m.giveBack(p)
	var c *competition
	for _, x := range s.m.compsOf(huge) {
		if len(x.uploads[0].ranks) > rankingPage && (c == nil || len(x.uploads[0].ranks) > len(c.uploads[0].ranks)) {
			c = x
		}
	}
	if c == nil {
		return engine.Internalf("pre-check", "the huge tenant has no ranking longer than a page")
	}
	if err := s.signIn(a, huge.name, rolePlayer, strconv.FormatInt(p.id, 10), r.Now()); err != nil {
		return err
	}
	n := len(c.uploads[0].ranks)
	for _, after := range []int{0, rankingPage, n - n%rankingPage, n} {
		if _, _, err := s.readRanking(ctx, r, a, huge, p, c, after, engine.NoScore); err != nil {
			return err
		}
	}
	for _, q := range []string{"-1", "abc", "1.5"} {
		if _, err := refused(ctx, a, epRanking, http.MethodGet, rankingPath(c.id, 0)+"?rank_after="+q, nil, nil, http.StatusBadRequest, "rank_after="+q); err != nil {
			return err
		}
	}
	return nil
}

// preCheckCompetition opens a competition in t and takes it through uploads,
// refused files, a disqualification and its finish, with viewers before and
// after it, to its exact bill.
func (s *Scenario) preCheckCompetition(ctx context.Context, r *engine.Run, a *engine.Agent, t, other *tenant, ps []*player) error {
	now := r.Now()
	if err := s.asOrganizer(a, t, now); err != nil {
		return err
	}
	before := len(s.m.playersOf(t))
	if err := s.addPlayers(ctx, a, t, 3, engine.NoScore); err != nil {
		return err
	}
	c, err := s.addCompetition(ctx, a, t, engine.NoScore)
	if err != nil {
		return err
	}
	defer s.m.releaseCompetition(c)
	if err := s.m.firstIDs(t, c); err != nil {
		return err
	}
	if err := s.listPlayers(ctx, a, t, engine.NoScore); err != nil {
		return err
	}
	if err := s.preCheckEmptyRanking(ctx, r, a, t, ps[0], c, now); err != nil {
		return err
	}
	// Two uploads, each read at once by p2: ties broken by row, a player's
	// last row wins, the second upload replaces the first.
	scorers := slices.DeleteFunc(s.m.playersOf(t), func(p *player) bool { return slices.Contains(ps, p) })
	news := scorers[len(scorers)-(len(s.m.playersOf(t))-before):]
	pick := func(i int) int64 { return scorers[i%len(scorers)].id }
	first := [][2]int64{{pick(0), 500}, {pick(1), 700}, {pick(2), 700}, {pick(0), 900}, {news[0].id, 0}, {pick(3), 500}}
	second := [][2]int64{{pick(4), 300}, {news[1].id, 300}, {pick(5), 1000}, {pick(4), 300}, {news[2].id, 999999999},
		{pick(6), 1000}, {pick(7), 0}}
	if err := s.preCheckUploads(ctx, r, a, t, c, ps[1], [][][2]int64{first, second}, now); err != nil {
		return err
	}
	if err := s.preCheckBadFiles(ctx, r, a, t, other, c, ps[1], pick(0), first, now); err != nil {
		return err
	}
	if err := s.preCheckFinish(ctx, r, a, t, other, c, news[0], ps[1], first, now); err != nil {
		return err
	}
	return s.preCheckBill(ctx, r, a, t, c, ps[2], now)
}

// firstIDs checks the ids of the pre-check's first creations, the first since
// /initialize: its 3 players and then c get the initial data's next 4 ids.
func (m *model) firstIDs(t *tenant, c *competition) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var got []int64
	for _, p := range t.players {
		if p.id > m.idBase {
			got = append(got, p.id)
		}
	}
	got = append(got, c.id)
	want := []int64{m.idBase + 1, m.idBase + 2, m.idBase + 3, m.idBase + 4}
	if !slices.Equal(got, want) {
		return engine.Criticalf("id", "the first 3 players and the competition added after /initialize have ids %v, expected %v", got, want)
	}
	return nil
}

// preCheckEmptyRanking checks that p, a player of t, finds the ranking of c, a
// new competition, empty: a viewer without a score.
func (s *Scenario) preCheckEmptyRanking(ctx context.Context, r *engine.Run, a *engine.Agent, t *tenant, p *player, c *competition, now time.Time) error {
	if err := s.asPlayer(a, t, p, now); err != nil {
		return err
	}
	if ranks, _, err := s.readRanking(ctx, r, a, t, p, c, 0, engine.NoScore); err != nil {
		return err
	} else if len(ranks) != 0 {
		return engine.Criticalf("ranking", "a new competition's ranking lists %d players", len(ranks))
	}
	return nil
}

// preCheckUploads uploads each of uploads to c as t's organizer, and has
// viewer, a player of t, read the ranking at once and the profile of its first
// player.
func (s *Scenario) preCheckUploads(ctx context.Context, r *engine.Run, a *engine.Agent, t *tenant, c *competition, viewer *player, uploads [][][2]int64, now time.Time) error {
	for _, rows := range uploads {
		if err := s.asOrganizer(a, t, now); err != nil {
			return err
		}
		if err := s.upload(ctx, r, a, c, rows, engine.NoScore); err != nil {
			return err
		}
		if err := s.asPlayer(a, t, viewer, now); err != nil {
			return err
		}
		ranks, _, err := s.readRanking(ctx, r, a, t, viewer, c, 0, engine.NoScore)
		if err != nil {
			return err
		}
		if err := s.readProfile(ctx, a, t, ranks[0], engine.NoScore); err != nil {
			return err
		}
	}
	return nil
}

// preCheckBadFiles checks that bad files change nothing: it uploads them to c
// as t's organizer (scorer is the id of one of t's players, first a good file,
// other another tenant), then viewer, a player of t, reads the ranking.
func (s *Scenario) preCheckBadFiles(ctx context.Context, r *engine.Run, a *engine.Agent, t, other *tenant, c *competition, viewer *player, scorer int64, first [][2]int64, now time.Time) error {
	if err := s.asOrganizer(a, t, now); err != nil {
		return err
	}
	otherID := other.players[0].id
	for _, bad := range []struct{ why, csv string }{
		{"a file with a wrong header", "id,score\n" + strconv.FormatInt(scorer, 10) + ",1\n"},
		{"a file naming another tenant's player", "player_id,score\n" + strconv.FormatInt(otherID, 10) + ",1\n"},
		{"a score with a leading zero", "player_id,score\n" + strconv.FormatInt(scorer, 10) + ",01\n"},
		{"a negative score", "player_id,score\n" + strconv.FormatInt(scorer, 10) + ",-1\n"},
		{"an empty line", "player_id,score\n\n" + strconv.FormatInt(scorer, 10) + ",1\n"},
	} {
		h, body := csvBody(bad.csv)
		if _, err := refused(ctx, a, epScores, http.MethodPost, scoresPath(c.id), h, body, http.StatusBadRequest, bad.why); err != nil {
			return err
		}
	}
	if _, err := refused(ctx, a, epScores, http.MethodPost, scoresPath(c.id), jsonHeader(), []byte(`{}`), http.StatusBadRequest, "an upload without a file"); err != nil {
		return err
	}
	h, body := csvBody(csvOf(first))
	if _, err := refused(ctx, a, epScores, http.MethodPost, scoresPath(s.m.idsBefore()+1000), h, body, http.StatusNotFound, "an upload to no competition"); err != nil {
		return err
	}
	if err := s.asPlayer(a, t, viewer, now); err != nil {
		return err
	}
	_, _, err := s.readRanking(ctx, r, a, t, viewer, c, 0, engine.NoScore)
	return err
}

// preCheckFinish disqualifies x, a new player of t, refused at once, and
// refuses disqualifying a player of other; then it finishes c and refuses a
// second finish and an upload of first after it; viewer, a player of t, reads
// the ranking last.
func (s *Scenario) preCheckFinish(ctx context.Context, r *engine.Run, a *engine.Agent, t, other *tenant, c *competition, x, viewer *player, first [][2]int64, now time.Time) error {
	if err := s.asOrganizer(a, t, now); err != nil {
		return err
	}
	if err := s.disqualifyPlayer(ctx, r, a, t, x, engine.NoScore); err != nil {
		return err
	}
	if err := s.listPlayers(ctx, a, t, engine.NoScore); err != nil {
		return err
	}
	otherID := other.players[0].id
	if _, err := refused(ctx, a, epDisqualify, http.MethodPost, disqualifyPath(otherID), nil, nil, http.StatusNotFound, "disqualifying another tenant's player"); err != nil {
		return err
	}
	// The finish: no upload, no second finish after it.
	if err := s.finish(ctx, r, a, c, engine.NoScore); err != nil {
		return err
	}
	if _, err := refused(ctx, a, epFinish, http.MethodPost, finishPath(c.id), nil, nil, http.StatusConflict, "a second finish"); err != nil {
		return err
	}
	if err := s.lateUpload(ctx, r, a, c, first); err != nil {
		return err
	}
	if err := s.asPlayer(a, t, viewer, now); err != nil {
		return err
	}
	_, _, err := s.readRanking(ctx, r, a, t, viewer, c, 0, engine.NoScore)
	return err
}

// preCheckBill has late, a player of t, read c's ranking a second after its
// finish was answered: no viewer. The bill, billDelay after the finish, is
// exact: the scorers of the second upload, and p1 and p2 as viewers.
func (s *Scenario) preCheckBill(ctx context.Context, r *engine.Run, a *engine.Agent, t *tenant, c *competition, late *player, now time.Time) error {
	s.m.mu.Lock()
	fa := c.finishAnswered
	s.m.mu.Unlock()
	if !r.SleepUntil(ctx, fa.Add(viewerGrace+100*time.Millisecond)) {
		return ctx.Err()
	}
	if err := s.asPlayer(a, t, late, now); err != nil {
		return err
	}
	if _, _, err := s.readRanking(ctx, r, a, t, late, c, 0, engine.NoScore); err != nil {
		return err
	}
	if !r.SleepUntil(ctx, fa.Add(billDelay)) {
		return ctx.Err()
	}
	if err := s.asOrganizer(a, t, now); err != nil {
		return err
	}
	return s.readBilling(ctx, a, t, engine.NoScore)
}

// disqualifyPlayer disqualifies p of t and checks that p is refused at once; a
// is left as t's organizer.
func (s *Scenario) disqualifyPlayer(ctx context.Context, r *engine.Run, a *engine.Agent, t *tenant, p *player, sc engine.Scorer) error {
	s.m.mu.Lock()
	busy := p.inUse
	p.inUse = true
	s.m.mu.Unlock()
	if busy {
		return engine.Internalf("pre-check", "player %d is in use", p.id)
	}
	return s.disqualifyHeld(ctx, r, a, t, p, sc)
}

// preCheckAdmin adds a tenant (the next id after the initial ones), refuses a
// taken and bad names, reads the first page of bills and the page with t, and
// reads the new tenant as its organizer: empty.
func (s *Scenario) preCheckAdmin(ctx context.Context, r *engine.Run, a *engine.Agent, t *tenant, p *player) error {
	now := r.Now()
	if err := s.signIn(a, adminLabel, roleAdmin, adminSub, now); err != nil {
		return err
	}
	if err := s.readMe(ctx, a, roleAdmin, adminSub, nil, nil); err != nil {
		return err
	}
	nt, err := s.addTenant(ctx, r, a, engine.NoScore)
	if err != nil {
		return err
	}
	if want := int64(s.m.cfg.Tenants) + 1; nt.id != want {
		return engine.Criticalf("tenant-id", "the first tenant added after /initialize has id %d, expected %d", nt.id, want)
	}
	for _, bad := range []struct{ why, name string }{
		{"a name already taken", nt.name}, {"the name admin", "admin"}, {"a name with a capital", "Bad-name"},
		{"a name ending with -", "bad-"}, {"a one-letter name", "a"},
	} {
		status := http.StatusBadRequest
		if bad.name == nt.name {
			status = http.StatusConflict
		}
		body := []byte(`{"name":"` + bad.name + `","display_name":"Bad"}`)
		s.m.refusedCreation(epAddTenant, 1)
		if _, err := refused(ctx, a, epAddTenant, http.MethodPost, "/api/admin/tenants", jsonHeader(), body, status, bad.why); err != nil {
			return err
		}
	}
	for _, before := range []int64{0, t.id + 1} {
		if _, _, err := s.readAdminPage(ctx, a, before, engine.NoScore); err != nil {
			return err
		}
	}
	if err := s.signIn(a, nt.name, roleOrganizer, organizerSub, now); err != nil {
		return err
	}
	if err := s.listPlayers(ctx, a, nt, engine.NoScore); err != nil {
		return err
	}
	if _, err := s.listCompetitions(ctx, a, nt, epOrgCompetitions, "/api/organizer/competitions", engine.NoScore); err != nil {
		return err
	}
	if err := s.readBilling(ctx, a, nt, engine.NoScore); err != nil {
		return err
	}
	if err := s.signIn(a, nt.name, rolePlayer, strconv.FormatInt(p.id, 10), now); err != nil {
		return err
	}
	_, err = refused(ctx, a, epMe, http.MethodGet, "/api/me", nil, nil, http.StatusUnauthorized, "a player of another tenant on a new tenant's host")
	return err
}

// preCheckBadRequests checks that requests the manual calls bad are refused.
func (s *Scenario) preCheckBadRequests(ctx context.Context, r *engine.Run, a *engine.Agent, t *tenant) error {
	if err := s.signIn(a, t.name, roleOrganizer, organizerSub, r.Now()); err != nil {
		return err
	}
	for _, bad := range []struct {
		why, endpoint, method, path, body string
		status                            int
	}{
		{"no names", epAddPlayers, http.MethodPost, "/api/organizer/players", `{"display_names":[]}`, http.StatusBadRequest},
		{"an empty name", epAddPlayers, http.MethodPost, "/api/organizer/players", `{"display_names":[""]}`, http.StatusBadRequest},
		{"a body that is not JSON", epAddPlayers, http.MethodPost, "/api/organizer/players", `display_names=a`, http.StatusBadRequest},
		{"a title with a control character", epAddCompetition, http.MethodPost, "/api/organizer/competitions", `{"title":"a\u0007b"}`, http.StatusBadRequest},
		{"no title", epAddCompetition, http.MethodPost, "/api/organizer/competitions", `{}`, http.StatusBadRequest},
		{"an id with a leading zero", epFinish, http.MethodPost, "/api/organizer/competitions/0" + strconv.FormatInt(t.comps[0].id, 10) + "/finish", ``, http.StatusNotFound},
		{"an unknown path", "GET /api/unknown", http.MethodGet, "/api/unknown", ``, http.StatusNotFound},
		{"a known path with another method", "DELETE /api/organizer/players", http.MethodDelete, "/api/organizer/players", ``, http.StatusNotFound},
	} {
		var body []byte
		var h http.Header
		if bad.body != "" {
			body, h = []byte(bad.body), jsonHeader()
		}
		s.m.refusedCreation(bad.endpoint, 1)
		if _, err := refused(ctx, a, bad.endpoint, bad.method, bad.path, h, body, bad.status, bad.why); err != nil {
			return err
		}
	}
	return nil
}

// preCheckTenant picks the pre-check's tenant: an initial tenant other than the
// huge one, with a disqualified player and preCheckPlayers more it holds; and
// another tenant with players, the huge one.
func (m *model) preCheckTenant(rnd *rand.Rand) (t, other *tenant, ps []*player, dq *player) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.cfg.Tenants
	start := rnd.IntN(n)
	for i := range n {
		c := m.tenants[(start+i)%n]
		if !c.initial || c.id == 1 || len(c.comps) == 0 {
			continue
		}
		var free []*player
		dq = nil
		for _, p := range c.players {
			switch {
			case p.dqInitial && dq == nil:
				dq = p
			case p.playable() && len(free) < preCheckPlayers:
				free = append(free, p)
			}
		}
		if dq == nil || len(free) < preCheckPlayers || len(c.players) < 20 {
			continue
		}
		t, ps = c, free
		break
	}
	if t == nil {
		return nil, nil, nil, nil
	}
	for _, p := range ps {
		p.inUse = true
	}
	return t, m.tenants[0], ps, dq // the other tenant is the huge one
}
