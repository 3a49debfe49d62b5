package leagues

import (
	"fmt"
	"strconv"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/leagues/data"
)

// The checks compare an answer with the model at the moments its request was
// sent and answered (res.Sent, res.Received): where a write in flight makes the
// state uncertain, they accept every state the manual allows and no other. A
// wrong answer is a violation (critical); an answer of the wrong shape is an
// application error.

// shape is an answer that lacks what the manual says it holds.
func shape(res *engine.Response, format string, args ...any) error {
	return res.Applicationf("shape", format, args...)
}

// wrong is an answer that contradicts the model.
func wrong(res *engine.Response, code, format string, args ...any) error {
	return res.Criticalf(code, format, args...)
}

// known reports whether something created at created was known when the request
// was sent at sent.
func known(created, sent time.Time) bool { return created.IsZero() || created.Before(sent) }

// checkPlayerJSON checks one player object against p.
func checkPlayerJSON(res *engine.Response, p *player, got playerJSON) error {
	if !got.complete() {
		return shape(res, "a player lacks id, display_name or is_disqualified")
	}
	if *got.ID != p.id || *got.DisplayName != p.name {
		return wrong(res, "player", "player %d is %d %q, expected %q", p.id, *got.ID, *got.DisplayName, p.name)
	}
	sure, maybe := p.disqualifiedLocked(res.Sent, res.Received)
	if *got.IsDisqualified && !maybe {
		return wrong(res, "disqualified", "player %d shows as disqualified; nobody disqualified them", p.id)
	}
	if !*got.IsDisqualified && sure {
		return wrong(res, "disqualified", "player %d shows as not disqualified; their disqualification had been answered", p.id)
	}
	return nil
}

// checkPlayers checks the organizer's list of t's players: every player known
// when it was asked, lowest id first, each as the model has them; players whose
// creation was unsure may show (they are adopted).
func (m *model) checkPlayers(res *engine.Response, t *tenant, list []playerJSON) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[int64]bool{}
	for i, got := range list {
		if !got.complete() {
			return shape(res, "a player lacks id, display_name or is_disqualified")
		}
		id := *got.ID
		if i > 0 && id <= *list[i-1].ID {
			return wrong(res, "order", "player %d is listed after player %d: lowest id first", id, *list[i-1].ID)
		}
		p := t.byID[id]
		if p == nil {
			if why := m.unknownPlayerLocked(t, got); why != "" {
				return wrong(res, "unknown-player", "player %d (%q) %s", id, *got.DisplayName, why)
			}
			if why := m.idAboveLocked(id); why != "" {
				return wrong(res, "id", "%s", why)
			}
			m.unpendPlayerLocked(t, *got.DisplayName)
			p = m.addPlayerLocked(t, id, *got.DisplayName)
			p.added, p.adopted = res.Received, true
		}
		seen[id] = true
		if err := checkPlayerJSON(res, p, got); err != nil {
			return err
		}
	}
	for _, p := range t.players {
		if !seen[p.id] && known(p.added, res.Sent) {
			return wrong(res, "missing", "player %d (%q) of tenant %s is not listed", p.id, p.name, t.name)
		}
	}
	return nil
}

// unknownPlayerLocked says why got, listed as t's player though the model
// does not know it, cannot be one whose creation was unsure; empty when it can.
func (m *model) unknownPlayerLocked(t *tenant, got playerJSON) string {
	switch {
	case t.pendingPlay[*got.DisplayName] == 0:
		return "was never added to tenant " + t.name
	case *got.IsDisqualified:
		return "shows as disqualified, but was being added to tenant " + t.name + " and nobody disqualified them"
	}
	if owner := m.idOwnerLocked(*got.ID); owner != "" {
		return "of tenant " + t.name + " has the id of " + owner
	}
	return ""
}

// checkCompetitionJSON checks one competition object against c.
func checkCompetitionJSON(res *engine.Response, c *competition, got competitionJSON) error {
	if !got.complete() {
		return shape(res, "a competition lacks id, title or is_finished")
	}
	if *got.ID != c.id || *got.Title != c.title {
		return wrong(res, "competition", "competition %d is %d %q, expected %q", c.id, *got.ID, *got.Title, c.title)
	}
	sure, maybe := c.finishedLocked(res.Sent, res.Received)
	if *got.IsFinished && !maybe {
		return wrong(res, "finished", "competition %d shows as finished; it was not finished", c.id)
	}
	if !*got.IsFinished && sure {
		return wrong(res, "finished", "competition %d shows as running; its finish had been answered", c.id)
	}
	return nil
}

// checkCompetitions checks a list of t's competitions: every one known when it
// was asked, highest id first.
func (m *model) checkCompetitions(res *engine.Response, t *tenant, list []competitionJSON) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[int64]bool{}
	for i, got := range list {
		if !got.complete() {
			return shape(res, "a competition lacks id, title or is_finished")
		}
		id := *got.ID
		if i > 0 && id >= *list[i-1].ID {
			return wrong(res, "order", "competition %d is listed after competition %d: highest id first", id, *list[i-1].ID)
		}
		c := t.compByID[id]
		if c == nil {
			if !t.pendingComp[*got.Title] || *got.IsFinished || m.idTakenLocked(id) {
				return wrong(res, "unknown-competition", "competition %d (%q) was never added to tenant %s", id, *got.Title, t.name)
			}
			if why := m.idAboveLocked(id); why != "" {
				return wrong(res, "id", "%s", why)
			}
			delete(t.pendingComp, *got.Title)
			c = m.addCompetitionLocked(t, id, *got.Title)
			c.added, c.abandoned, c.adopted = res.Received, true, true
		}
		seen[id] = true
		if err := checkCompetitionJSON(res, c, got); err != nil {
			return err
		}
	}
	for _, c := range t.comps {
		if !seen[c.id] && known(c.added, res.Sent) {
			return wrong(res, "missing", "competition %d (%q) of tenant %s is not listed", c.id, c.title, t.name)
		}
	}
	return nil
}

// checkRanking checks a ranking of c read after rank ranks: it must be the page
// of one state the competition may have been in while the request ran, rank by
// rank. It returns the number of ranks.
func (m *model) checkRanking(res *engine.Response, c *competition, after int, ans rankingAnswer) (int, error) {
	if ans.Competition == nil || ans.Ranks == nil {
		return 0, shape(res, "a ranking lacks competition or ranks")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := checkCompetitionJSON(res, c, *ans.Competition); err != nil {
		return 0, err
	}
	ranks := *ans.Ranks
	for _, r := range ranks {
		if r.Rank == nil || r.PlayerID == nil || r.DisplayName == nil || r.Score == nil {
			return 0, shape(res, "a rank lacks rank, player_id, display_name or score")
		}
	}
	candidates := c.candidatesLocked(res.Sent, res.Received)
	var why string
	for _, u := range candidates {
		if why = c.t.rankPageLocked(u, after, ranks); why == "" {
			return len(ranks), nil
		}
	}
	if len(candidates) > 1 {
		why = fmt.Sprintf("%s (nor any of the %d states uploads in flight allowed)", why, len(candidates))
	}
	return 0, wrong(res, "ranking", "ranking of competition %d after rank %d: %s", c.id, after, why)
}

// rankPageLocked compares a page of ranks with upload u's ranking after rank
// after; "" when they agree.
func (t *tenant) rankPageLocked(u *upload, after int, got []rankJSON) string {
	var want []rank
	if after < len(u.ranks) {
		want = u.ranks[after:min(after+rankingPage, len(u.ranks))]
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d ranks listed, expected %d of the %d players with a score", len(got), len(want), len(u.ranks))
	}
	for i, g := range got {
		w := want[i]
		name := ""
		if p := t.byID[w.player]; p != nil {
			name = p.name
		}
		if *g.Rank != int64(after+i+1) || *g.PlayerID != w.player || *g.Score != w.score || *g.DisplayName != name {
			return fmt.Sprintf("rank %d is player %d %q with %d, expected rank %d player %d %q with %d (row %d of the upload)",
				*g.Rank, *g.PlayerID, *g.DisplayName, *g.Score, after+i+1, w.player, name, w.score, w.row)
		}
	}
	return ""
}

// checkProfile checks a player's profile: the player, and their score in each
// competition of t where they have one, lowest competition id first, each from
// a state the competition may have been in.
func (m *model) checkProfile(res *engine.Response, t *tenant, p *player, ans profileAnswer) error {
	if ans.Player == nil || ans.Scores == nil {
		return shape(res, "a profile lacks player or scores")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := checkPlayerJSON(res, p, *ans.Player); err != nil {
		return err
	}
	got := map[int64]int64{}
	for i, s := range *ans.Scores {
		if s.CompetitionID == nil || s.Title == nil || s.Score == nil {
			return shape(res, "a score lacks competition_id, title or score")
		}
		id := *s.CompetitionID
		if i > 0 && id <= *(*ans.Scores)[i-1].CompetitionID {
			return wrong(res, "order", "the profile lists competition %d after %d: lowest id first", id, *(*ans.Scores)[i-1].CompetitionID)
		}
		c := t.compByID[id]
		if c == nil {
			return wrong(res, "profile", "player %d's profile has a score in competition %d, which tenant %s does not have", p.id, id, t.name)
		}
		if *s.Title != c.title {
			return wrong(res, "profile", "competition %d is titled %q in player %d's profile, expected %q", id, *s.Title, p.id, c.title)
		}
		got[id] = *s.Score
	}
	for _, c := range t.comps {
		score, has := got[c.id]
		ok := false
		var options []string
		for _, u := range c.candidatesLocked(res.Sent, res.Received) {
			want, wantHas := u.score[p.id]
			if wantHas == has && want == score {
				ok = true
				break
			}
			if wantHas {
				options = append(options, strconv.FormatInt(want, 10))
			} else {
				options = append(options, "none")
			}
		}
		if !ok {
			shown := "none"
			if has {
				shown = strconv.FormatInt(score, 10)
			}
			return wrong(res, "profile", "player %d's score in competition %d is %s, expected %v", p.id, c.id, shown, options)
		}
	}
	return nil
}

// checkBilling checks the organizer's bill of t: one entry per competition
// known when it was asked, highest id first, each as the billing rules allow
// for the moment, and the total their sum.
func (m *model) checkBilling(res *engine.Response, t *tenant, ans billingAnswer) error {
	if ans.Billing == nil || ans.Billing.Total == nil || ans.Billing.Competitions == nil {
		return shape(res, "a bill lacks billing, total or competitions")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	list := *ans.Billing.Competitions
	seen := map[int64]bool{}
	var sum int64
	for i, b := range list {
		if !b.complete() {
			return shape(res, "a competition's bill lacks competition_id, title, is_finished, scored, viewed or billing")
		}
		id := *b.CompetitionID
		if i > 0 && id >= *list[i-1].CompetitionID {
			return wrong(res, "order", "the bill lists competition %d after %d: highest id first", id, *list[i-1].CompetitionID)
		}
		c := t.compByID[id]
		if c == nil {
			if !t.pendingComp[*b.Title] || *b.IsFinished || m.idTakenLocked(id) {
				return wrong(res, "unknown-competition", "the bill lists competition %d (%q), never added to tenant %s", id, *b.Title, t.name)
			}
			if why := m.idAboveLocked(id); why != "" {
				return wrong(res, "id", "%s", why)
			}
			delete(t.pendingComp, *b.Title)
			c = m.addCompetitionLocked(t, id, *b.Title)
			c.added, c.abandoned, c.adopted = res.Received, true, true
		}
		seen[id] = true
		if *b.Title != c.title {
			return wrong(res, "billing", "competition %d is titled %q in the bill, expected %q", id, *b.Title, c.title)
		}
		if why := c.billOKLocked(res.Sent, res.Received, b); why != "" {
			return wrong(res, "billing", "tenant %s, competition %d: %s", t.name, id, why)
		}
		sum += *b.Billing
	}
	for _, c := range t.comps {
		if !seen[c.id] && known(c.added, res.Sent) {
			return wrong(res, "missing", "the bill of tenant %s lacks competition %d (%q)", t.name, c.id, c.title)
		}
	}
	if *ans.Billing.Total != sum {
		return wrong(res, "billing", "tenant %s's total is %d; its competitions' bills add up to %d", t.name, *ans.Billing.Total, sum)
	}
	return nil
}

// billOKLocked returns "" when b is a bill c may show to a read sent at sent
// and answered at answered, or what is wrong with it.
func (c *competition) billOKLocked(sent, answered time.Time, b compBillJSON) string {
	bills, unbilled := c.billsLocked(sent, answered)
	got := fmt.Sprintf("finished %v, scored %d, viewed %d, billing %d", *b.IsFinished, *b.Scored, *b.Viewed, *b.Billing)
	if *b.Billing != data.YenPerScored**b.Scored+data.YenPerViewer**b.Viewed {
		return got + fmt.Sprintf(": billing must be %d × scored + %d × viewed", data.YenPerScored, data.YenPerViewer)
	}
	if !*b.IsFinished {
		if unbilled && *b.Scored == 0 && *b.Viewed == 0 {
			return ""
		}
		if !unbilled {
			return got + ": it had finished; its finish was answered " + billDelay.String() + " or more before the bill was asked"
		}
		return got + ": a running competition is billed 0"
	}
	if len(bills) == 0 {
		return got + ": it had not been finished"
	}
	var want []string
	for _, w := range bills {
		if int(*b.Scored) == w.scored && int(*b.Viewed) >= w.viewedMin && int(*b.Viewed) <= w.viewedMax {
			return ""
		}
		if w.viewedMin == w.viewedMax {
			want = append(want, fmt.Sprintf("scored %d, viewed %d", w.scored, w.viewedMin))
		} else {
			want = append(want, fmt.Sprintf("scored %d, viewed %d to %d", w.scored, w.viewedMin, w.viewedMax))
		}
	}
	if unbilled {
		want = append(want, "not yet billed")
	}
	return got + ", expected " + joinOr(want)
}

// checkAdminPage checks a page of the admin's bills asked with before (0: the
// first page): the tenants below before, highest id first, ten at most, none
// missing, each with a bill its competitions allow.
func (m *model) checkAdminPage(res *engine.Response, before int64, ans tenantsAnswer) error {
	if ans.Tenants == nil {
		return shape(res, "a page of bills lacks tenants")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	list := *ans.Tenants
	if len(list) > billingPage {
		return wrong(res, "page", "a page of bills lists %d tenants; at most %d", len(list), billingPage)
	}
	for i, got := range list {
		if !got.complete(true) {
			return shape(res, "a tenant lacks id, name, display_name or billing")
		}
		id := *got.ID
		if i > 0 && id >= *list[i-1].ID {
			return wrong(res, "order", "tenant %d is listed after tenant %d: highest id first", id, *list[i-1].ID)
		}
		if before != 0 && id >= before {
			return wrong(res, "page", "tenant %d is listed on the page before=%d", id, before)
		}
		t := m.tenantLocked(id)
		if t == nil {
			if _, ok := m.pendingTenants[*got.Name]; !ok || *got.Billing != 0 {
				return wrong(res, "unknown-tenant", "tenant %d (%q) was never added", id, *got.Name)
			}
			delete(m.pendingTenants, *got.Name)
			if why := m.addTenantLocked(id, *got.Name, *got.DisplayName, res.Received); why != "" {
				return wrong(res, "unknown-tenant", "%s", why)
			}
			m.tenantLocked(id).adopted = true
			continue
		}
		if *got.Name != t.name || *got.DisplayName != t.display {
			return wrong(res, "tenant", "tenant %d is %q %q, expected %q %q", id, *got.Name, *got.DisplayName, t.name, t.display)
		}
		if spans := t.billLocked(res.Sent, res.Received); !inSpans(spans, *got.Billing) {
			return wrong(res, "billing", "tenant %s's bill is %d, expected %s", t.name, *got.Billing, spansText(spans))
		}
	}
	// Every tenant known when the page was asked, below before and above the
	// page's last (or any, on a short page), must be on it.
	var floor int64
	if len(list) == billingPage {
		floor = *list[len(list)-1].ID
	}
	onPage := map[int64]bool{}
	for _, got := range list {
		onPage[*got.ID] = true
	}
	for _, t := range m.tenants {
		if t.id > floor && (before == 0 || t.id < before) && !onPage[t.id] && known(t.created, res.Sent) {
			return wrong(res, "missing", "the page of bills before=%d lacks tenant %d (%s)", before, t.id, t.name)
		}
	}
	return nil
}

func spansText(spans []span) string {
	var parts []string
	for _, s := range spans {
		if s.lo == s.hi {
			parts = append(parts, strconv.FormatInt(s.lo, 10))
		} else {
			parts = append(parts, fmt.Sprintf("%d to %d", s.lo, s.hi))
		}
	}
	return joinOr(parts)
}

func joinOr(parts []string) string {
	switch len(parts) {
	case 0:
		return "nothing"
	case 1:
		return parts[0]
	}
	return fmt.Sprintf("%s or %s", joinComma(parts[:len(parts)-1]), parts[len(parts)-1])
}

func joinComma(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += ", "
		}
		out += p
	}
	return out
}

// checkMe checks /api/me: the role, the subject, the tenant and the player.
func (m *model) checkMe(res *engine.Response, role, subject string, t *tenant, p *player, ans meAnswer) error {
	if ans.Role == nil || ans.Subject == nil {
		return shape(res, "/api/me lacks role or subject")
	}
	if *ans.Role != role || *ans.Subject != subject {
		return wrong(res, "me", "/api/me says role %q subject %q, expected %q %q", *ans.Role, *ans.Subject, role, subject)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case t == nil && ans.Tenant != nil:
		return wrong(res, "me", "/api/me of the admin names a tenant")
	case t != nil && (ans.Tenant == nil || !ans.Tenant.complete(false)):
		return shape(res, "/api/me lacks the tenant's id, name or display_name")
	case t != nil && (*ans.Tenant.ID != t.id || *ans.Tenant.Name != t.name || *ans.Tenant.DisplayName != t.display):
		return wrong(res, "me", "/api/me names tenant %d %q, expected %d %q", *ans.Tenant.ID, *ans.Tenant.Name, t.id, t.name)
	case p == nil && ans.Player != nil:
		return wrong(res, "me", "/api/me of the %s names a player", role)
	case p != nil && ans.Player == nil:
		return shape(res, "/api/me of a player lacks the player")
	case p != nil:
		return checkPlayerJSON(res, p, *ans.Player)
	}
	return nil
}
