package leagues

import (
	"cmp"
	"crypto/rsa"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tunecon/tunecon/problems/leagues/data"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// The model is the benchmarker's own account of the app's state: every tenant,
// player and competition, every upload and finish and when it was sent and
// answered, and every ranking read of the players it plays. The app's answers
// are checked against it, never the other way round. A write whose answer did
// not come (a timeout, a cut off, a wrong answer) is kept as unsure: every
// check accepts both the state with it and the state without it, for as long as
// the run lasts, and an unsure creation is adopted when a list shows it.
type model struct {
	cfg  data.Config
	key  *rsa.PrivateKey
	host string // the hosts' suffix after the label: ".t.localhost"

	mu      sync.Mutex
	tenants []*tenant // by id, lowest first
	byName  map[string]*tenant
	// maxID is the highest player or competition id the app has acknowledged;
	// newIDs is how many the benchmarker has asked for and not yet seen
	// acknowledged or refused.
	maxID int64
	// idBase is the highest id of the initial data; asked is how many ids the
	// benchmarker has asked for since (a player named in an addition, a
	// competition opened), and tenantsAsked how many tenants: the generator
	// goes up by one, so no id is above idBase+asked (MANUAL: "Ids").
	idBase, asked, tenantsAsked int64
	// seq numbers the names and titles the benchmarker makes.
	seq uint64
	// pendingTenants are tenants whose creation was sent and not acknowledged,
	// by name.
	pendingTenants map[string]time.Time
	// admins counts the admin sessions playing.
	admins int
	// lastFinish is when the last finish was answered (or sent, for an unsure
	// one).
	lastFinish time.Time

	// seats and liveSeats are the player each user (by its ID) played last, on
	// the path of any tenant and on the path of the tenants an organizer works
	// on.
	seats, liveSeats map[int]seat

	tokMu  sync.Mutex
	tokens map[string]string

	// own says whose each id is and what the players are called, for the
	// scans of what a viewer may not see (inspect.go).
	own *owners
}

// seat is a player a user plays, with their tenant.
type seat struct {
	t *tenant
	p *player
}

// tenant is one tenant.
type tenant struct {
	id          int64
	name        string
	display     string
	initial     bool
	players     []*player // lowest id first
	byID        map[int64]*player
	comps       []*competition // lowest id first
	compByID    map[int64]*competition
	pendingPlay map[string]int // names of players whose creation is unsure, and how many
	pendingComp map[string]bool
	organized   bool      // an organizer session holds it
	touched     bool      // an organizer session has held it
	created     time.Time // when the app acknowledged it (zero: initially there)
	adopted     bool      // a page of bills showed it before its creation was answered
}

// player is one player of a tenant.
type player struct {
	id   int64
	name string
	// disqualification: initially disqualified, or the times its request was
	// sent and answered (answered zero: not yet, or never: unsure).
	dqInitial          bool
	dqSent, dqAnswered time.Time
	inUse              bool      // a session plays the player or disqualifies them
	slow               int       // ranking reads over leaveAfter
	left               bool      // left the run after slow rankings
	added              time.Time // when the app acknowledged it (zero: initially there)
	adopted            bool      // a list showed it before its creation was answered
}

// competition is one competition of a tenant.
type competition struct {
	t       *tenant
	id      int64
	title   string
	initial bool
	// initialBill is an initially finished competition's bill (never changes:
	// it takes no upload).
	initialFinished bool
	initialBill     data.Billing
	// uploads: [0] is the state the run starts from (the initial ranking, or
	// none), acknowledged before everything; then every upload the benchmarker
	// sent, in order.
	uploads []*upload
	// finish: sent and answered (zero: not sent; answered zero: in flight or
	// unsure).
	finishSent, finishAnswered time.Time
	// reads are the ranking reads of each player, for the bill.
	reads map[int64]*reads
	busy  bool      // an organizer works on it
	added time.Time // when the app acknowledged it (zero: initially there)
	// abandoned: a write to it went unanswered (or its creation did), so no
	// organizer works on it again: its state stays uncertain between what the
	// unanswered writes allow.
	abandoned bool
	// adopted: a list showed it before its creation was answered (it stays
	// abandoned unless the answer comes).
	adopted bool
}

// upload is one score upload: its rows and its ranking.
type upload struct {
	sent, answered time.Time // answered zero: in flight, or unsure
	refused        bool      // answered 409 or 400: it changed nothing
	initialState   bool      // the state the run starts from
	ranks          []rank    // best first
	score          map[int64]int64
}

// rank is one entry of a ranking: the player's id, score and CSV row.
type rank struct {
	player int64
	score  int64
	row    int
}

// reads are one player's ranking reads of one competition: the first answered
// 200 (zero: none yet) and the first sent, whatever came of it (zero: none).
type reads struct {
	firstAnswered, firstSent time.Time
}

func newModel(cfg data.Config, in *data.Initial, key *rsa.PrivateKey) *model {
	m := &model{cfg: cfg, key: key, host: hostSuffix, byName: map[string]*tenant{}, maxID: in.NextID - 1,
		idBase:         in.NextID - 1,
		pendingTenants: map[string]time.Time{}, tokens: map[string]string{},
		seats: map[int]seat{}, liveSeats: map[int]seat{}, own: newOwners(in.NextID - 1)}
	for _, dt := range in.Tenants {
		t := &tenant{id: dt.ID, name: dt.Name, display: dt.DisplayName, initial: true, byID: map[int64]*player{},
			compByID: map[int64]*competition{}, pendingPlay: map[string]int{}, pendingComp: map[string]bool{}}
		for _, dp := range dt.Players {
			p := &player{id: dp.ID, name: dp.DisplayName, dqInitial: dp.Disqualified}
			t.players = append(t.players, p)
			t.byID[p.id] = p
			m.own.own(p.id, t.id)
			m.own.name(p.name)
		}
		for _, dc := range dt.Competitions {
			c := &competition{t: t, id: dc.ID, title: dc.Title, initial: true, initialFinished: dc.Finished(),
				initialBill: dc.Billing, reads: map[int64]*reads{}}
			u := &upload{initialState: true, score: map[int64]int64{}}
			for _, r := range dc.Ranking {
				u.ranks = append(u.ranks, rank{player: r.PlayerID, score: r.Score, row: r.Row})
				u.score[r.PlayerID] = r.Score
			}
			c.uploads = []*upload{u}
			m.own.own(c.id, t.id)
			t.comps = append(t.comps, c)
			t.compByID[c.id] = c
		}
		m.tenants = append(m.tenants, t)
		m.byName[t.name] = t
		m.own.tenantText(t.name, t.display)
	}
	return m
}

// Hosts and tokens.

// hostOf is the Host header of a tenant's (or the admin's) requests.
func (m *model) hostOf(label string) string { return label + m.host }

// token returns a token of role for aud and sub, valid for tokenLife from now
// (made once, then kept).
func (m *model) token(aud, role, sub string, now time.Time) (string, error) {
	key := seatKey(aud, role, sub)
	m.tokMu.Lock()
	tok, ok := m.tokens[key]
	m.tokMu.Unlock()
	if ok {
		return tok, nil
	}
	tok, err := keys.Sign(m.key, keys.Claims{Sub: sub, Aud: aud, Role: role, Exp: now.Add(tokenLife).Unix()})
	if err != nil {
		return "", err
	}
	m.tokMu.Lock()
	m.tokens[key] = tok
	m.tokMu.Unlock()
	return tok, nil
}

// Names.

// next returns the next number of the run's names and titles.
func (m *model) next() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	return m.seq
}

// playerNames returns n display names for new players.
func (m *model) playerNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = m.cfg.Name(m.next())
	}
	return names
}

// title returns a title for a new competition: unique in the run.
func (m *model) title() string { return m.cfg.Title(m.next()) }

// tenantName returns a name and a display name for a new tenant: unique in the
// run.
func (m *model) tenantName() (string, string) {
	n := m.next()
	return "new-league-" + strconv.FormatUint(n, 10), "New League " + strconv.FormatUint(n, 10)
}

// Tenants.

// tenant returns tenant id, or nil.
func (m *model) tenant(id int64) *tenant {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tenantLocked(id)
}

func (m *model) tenantLocked(id int64) *tenant {
	i, ok := slices.BinarySearchFunc(m.tenants, id, func(t *tenant, id int64) int { return cmp.Compare(t.id, id) })
	if !ok {
		return nil
	}
	return m.tenants[i]
}

// tenantSent records a tenant creation sent at sent.
func (m *model) tenantSent(name string, sent time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pendingTenants[name] = sent
	m.tenantsAsked++
}

// tenantAdded records a tenant the app acknowledged; it returns a complaint
// when its id cannot be right: taken, or one of the initial ones.
func (m *model) tenantAdded(id int64, name, display string, sent, answered time.Time) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pendingTenants, name)
	if t := m.tenantLocked(id); t != nil && t.name == name && t.display == display && t.adopted {
		t.adopted = false
		return ""
	}
	return m.addTenantLocked(id, name, display, answered)
}

func (m *model) addTenantLocked(id int64, name, display string, at time.Time) string {
	if id <= int64(m.cfg.Tenants) || m.tenantLocked(id) != nil {
		return fmt.Sprintf("tenant %q was given id %d, which an initial or earlier tenant has", name, id)
	}
	if ceil := int64(m.cfg.Tenants) + m.tenantsAsked; id > ceil {
		return fmt.Sprintf("tenant %q was given id %d; tenant ids go up by one from %d after /initialize, and %d tenants were asked for: none is above %d",
			name, id, m.cfg.Tenants+1, m.tenantsAsked, ceil)
	}
	t := &tenant{id: id, name: name, display: display, byID: map[int64]*player{}, compByID: map[int64]*competition{},
		pendingPlay: map[string]int{}, pendingComp: map[string]bool{}, created: at}
	i, _ := slices.BinarySearchFunc(m.tenants, id, func(t *tenant, id int64) int { return cmp.Compare(t.id, id) })
	m.tenants = slices.Insert(m.tenants, i, t)
	m.byName[name] = t
	m.own.tenantText(name, display)
	return ""
}

// Players and competitions.

// idsBefore returns the highest id acknowledged so far: ids handed out for a
// request sent now must be above it.
func (m *model) idsBefore() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.maxID
}

// checkNewIDs returns a complaint unless ids are increasing, above floor and
// not used by anything.
func (m *model) checkNewIDsLocked(ids []int64, floor int64) string {
	for i, id := range ids {
		switch {
		case id <= floor:
			return fmt.Sprintf("new id %d is not above %d, an id the app had handed out before the request was sent", id, floor)
		case i > 0 && id <= ids[i-1]:
			return fmt.Sprintf("new ids %d then %d: the generator hands them out in increasing order", ids[i-1], id)
		case m.idTakenLocked(id):
			return fmt.Sprintf("new id %d is already a player's or a competition's", id)
		}
		if why := m.idAboveLocked(id); why != "" {
			return why
		}
	}
	return ""
}

// refusedCreation counts n ids (or tenants) asked for by a request to
// endpoint that the app must refuse: the manual says a refusal uses no id,
// but the ceiling leaves room for an app that spends one anyway (a unique key
// that fails on MariaDB spends an AUTO_INCREMENT value).
func (m *model) refusedCreation(endpoint string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch endpoint {
	case epAddTenant:
		m.tenantsAsked += n
	case epAddPlayers, epAddCompetition:
		m.asked += n
	}
}

// idAboveLocked returns a complaint when id is above every id the generator
// can have handed out: it goes up by one from the initial data's, one id for
// each player or competition asked for.
func (m *model) idAboveLocked(id int64) string {
	if ceil := m.idBase + m.asked; id > ceil {
		return fmt.Sprintf("new id %d: ids go up by one from %d after /initialize, and %d players and competitions were asked for, so none is above %d",
			id, m.idBase+1, m.asked, ceil)
	}
	return ""
}

func (m *model) idTakenLocked(id int64) bool { return m.idOwnerLocked(id) != "" }

// idOwnerLocked names what holds id in the model ("player 7 of tenant x"), or
// is empty when nothing does.
func (m *model) idOwnerLocked(id int64) string {
	for _, t := range m.tenants {
		if p := t.byID[id]; p != nil {
			return fmt.Sprintf("player %d (%q) of tenant %s", id, p.name, t.name)
		}
		if c := t.compByID[id]; c != nil {
			return fmt.Sprintf("competition %d (%q) of tenant %s", id, c.title, t.name)
		}
	}
	return ""
}

func (m *model) sawIDLocked(id int64) {
	m.maxID = max(m.maxID, id)
}

// playersSent records names of players being added to t.
func (m *model) playersSent(t *tenant, names []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range names {
		t.pendingPlay[n]++
	}
	m.asked += int64(len(names))
}

// playersAdded records players the app acknowledged at at (ids in the order of
// names), after checking their ids. A list read while the request ran may have
// shown some of them already: those were adopted, and are taken as they are.
func (m *model) playersAdded(t *tenant, names []string, ids []int64, floor int64, at time.Time) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, id := range ids {
		if p := t.byID[id]; p != nil && p.adopted && p.name == names[i] {
			if id <= floor || (i > 0 && id <= ids[i-1]) {
				return fmt.Sprintf("new ids %v: each above %d, in increasing order", ids, floor)
			}
			continue
		}
		if why := m.checkNewIDsLocked(ids[i:i+1], floor); why != "" {
			return why
		}
		if i > 0 && id <= ids[i-1] {
			return fmt.Sprintf("new ids %d then %d: the generator hands them out in increasing order", ids[i-1], id)
		}
	}
	for i, id := range ids {
		if p := t.byID[id]; p != nil {
			p.adopted = false
			continue
		}
		m.unpendPlayerLocked(t, names[i])
		m.addPlayerLocked(t, id, names[i]).added = at
	}
	return ""
}

func (m *model) unpendPlayerLocked(t *tenant, name string) {
	if t.pendingPlay[name]--; t.pendingPlay[name] <= 0 {
		delete(t.pendingPlay, name)
	}
}

func (m *model) addPlayerLocked(t *tenant, id int64, name string) *player {
	p := &player{id: id, name: name}
	i, _ := slices.BinarySearchFunc(t.players, id, func(p *player, id int64) int { return cmp.Compare(p.id, id) })
	t.players = slices.Insert(t.players, i, p)
	t.byID[id] = p
	m.sawIDLocked(id)
	m.own.own(id, t.id)
	m.own.name(name)
	return p
}

// competitionSent records a competition being added to t.
func (m *model) competitionSent(t *tenant, title string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t.pendingComp[title] = true
	m.asked++
}

// competitionAdded records a competition the app acknowledged at at, after
// checking its id; it returns it held busy for its organizer. A list read while
// the request ran may have shown it already: it was adopted, and is taken back.
func (m *model) competitionAdded(t *tenant, title string, id int64, floor int64, at time.Time) (*competition, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := t.compByID[id]; c != nil && c.title == title && c.adopted && id > floor {
		c.busy, c.abandoned, c.adopted = true, false, false
		return c, ""
	}
	if why := m.checkNewIDsLocked([]int64{id}, floor); why != "" {
		return nil, why
	}
	delete(t.pendingComp, title)
	c := m.addCompetitionLocked(t, id, title)
	c.busy, c.added = true, at
	return c, ""
}

func (m *model) addCompetitionLocked(t *tenant, id int64, title string) *competition {
	c := &competition{t: t, id: id, title: title, reads: map[int64]*reads{},
		uploads: []*upload{{initialState: true, score: map[int64]int64{}}}}
	i, _ := slices.BinarySearchFunc(t.comps, id, func(c *competition, id int64) int { return cmp.Compare(c.id, id) })
	t.comps = slices.Insert(t.comps, i, c)
	t.compByID[id] = c
	m.sawIDLocked(id)
	m.own.own(id, t.id)
	return c
}

// Uploads.

// newUpload makes an upload of rows (player id, score), the CSV's data lines in
// order.
func newUpload(rows [][2]int64) *upload {
	u := &upload{score: map[int64]int64{}}
	last := map[int64]int{}
	for i, r := range rows {
		last[r[0]] = i
	}
	for p, i := range last {
		u.ranks = append(u.ranks, rank{player: p, score: rows[i][1], row: i + 1})
		u.score[p] = rows[i][1]
	}
	slices.SortFunc(u.ranks, func(a, b rank) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.row, b.row)) })
	return u
}

// uploadSent records u as sent to c at sent.
func (m *model) uploadSent(c *competition, u *upload, sent time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u.sent = sent
	c.uploads = append(c.uploads, u)
}

// uploadDone records what came of u, an upload to c: answered (acknowledged at
// at), refused (the app said no: nothing changed), or neither (unsure: c is
// abandoned).
func (m *model) uploadDone(c *competition, u *upload, answered, refused bool, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case answered:
		u.answered = at
	case refused:
		u.refused = true
	default:
		c.abandoned = true
	}
}

// candidatesLocked returns the uploads whose state the app may have shown to a
// read sent at sent and answered at answered: every upload sent before the
// answer came that no acknowledged upload had certainly replaced before the
// read was sent. The last upload acknowledged before the read is always one.
func (c *competition) candidatesLocked(sent, answered time.Time) []*upload {
	var out []*upload
	for i, u := range c.uploads {
		if u.refused || (!u.initialState && !u.sent.Before(answered)) {
			continue
		}
		replaced := false
		if u.initialState || !u.answered.IsZero() {
			for _, v := range c.uploads[i+1:] {
				if !v.refused && !v.answered.IsZero() && v.answered.Before(sent) &&
					(u.initialState || !v.sent.Before(u.answered)) {
					replaced = true
					break
				}
			}
		}
		if !replaced {
			out = append(out, u)
		}
	}
	return out
}

// Finishes.

// finishSent records c's finish as sent at sent.
func (m *model) finishSent(c *competition, sent time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c.finishSent = sent
}

// finishDone records what came of c's finish: answered at at, or unsure.
func (m *model) finishDone(c *competition, answered bool, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if answered {
		c.finishAnswered = at
	} else {
		c.abandoned = true
	}
	m.lastFinish = latest(m.lastFinish, at)
}

// finishedLocked says whether c shows as finished to a read sent at sent and
// answered at answered: surely, maybe, or surely not.
func (c *competition) finishedLocked(sent, answered time.Time) (sure, maybe bool) {
	switch {
	case c.initialFinished:
		return true, true
	case c.finishSent.IsZero() || !c.finishSent.Before(answered):
		return false, false
	case !c.finishAnswered.IsZero() && c.finishAnswered.Before(sent):
		return true, true
	}
	return false, true
}

// Reads, for the bill.

// readSent records a ranking read of c by player p sent at sent; readAnswered
// its 200 answer at at.
func (m *model) readSent(c *competition, p int64, sent time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := c.reads[p]
	if r == nil {
		r = &reads{firstSent: sent}
		c.reads[p] = r
	}
	r.firstSent = earliest(r.firstSent, sent)
}

func (m *model) readAnswered(c *competition, p int64, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := c.reads[p]; r != nil {
		r.firstAnswered = earliest(r.firstAnswered, at)
	}
}

// Bills.

// bill is what a competition's bill may be: scored players and viewers in
// [viewedMin, viewedMax].
type bill struct {
	scored               int
	viewedMin, viewedMax int
}

func (b bill) yenMin() int64 {
	return data.YenPerScored*int64(b.scored) + data.YenPerViewer*int64(b.viewedMin)
}
func (b bill) yenMax() int64 {
	return data.YenPerScored*int64(b.scored) + data.YenPerViewer*int64(b.viewedMax)
}

// billsLocked returns what c's bill may be to a bill read sent at sent and
// answered at answered, and whether it may still show as unbilled (not
// finished: 0). A competition is billed once its finish has been answered
// billDelay before the read was sent; before, its bill may show or not.
func (c *competition) billsLocked(sent, answered time.Time) (bills []bill, unbilled bool) {
	if c.initial {
		if c.initialFinished {
			b := c.initialBill
			return []bill{{scored: b.Scored, viewedMin: b.Viewed, viewedMax: b.Viewed}}, false
		}
		return nil, true // never finished by the benchmarker
	}
	sure, maybe := c.finishedLocked(sent, answered)
	if !maybe {
		return nil, true
	}
	unbilled = !sure || !c.finishAnswered.Add(billDelay).Before(sent) && !c.finishAnswered.Add(billDelay).Equal(sent)
	fa := c.finishAnswered
	if fa.IsZero() {
		fa = farFuture
	}
	for _, u := range c.candidatesLocked(c.finishSent, fa) {
		b := bill{scored: len(u.score)}
		for p, r := range c.reads {
			if _, ok := u.score[p]; ok {
				continue
			}
			if !r.firstAnswered.IsZero() && r.firstAnswered.Before(c.finishSent) {
				b.viewedMin++
			}
			if r.firstSent.Before(fa.Add(viewerGrace)) {
				b.viewedMax++
			}
		}
		bills = append(bills, b)
	}
	return bills, unbilled
}

// span is a range of yen, lo to hi.
type span struct{ lo, hi int64 }

// maxSpans caps the spans a tenant's possible bills are kept as; past it they
// are merged into one.
const maxSpans = 64

// tenantBillLocked returns the totals t's bill may have for a read sent at sent
// and answered at answered, as spans: the sum, over its competitions, of each
// one's possible bills.
func (t *tenant) billLocked(sent, answered time.Time) []span {
	spans := []span{{0, 0}}
	for _, c := range t.comps {
		bills, unbilled := c.billsLocked(sent, answered)
		var opts []span
		if unbilled {
			opts = append(opts, span{0, 0})
		}
		for _, b := range bills {
			opts = append(opts, span{b.yenMin(), b.yenMax()})
		}
		if len(opts) == 1 {
			for i := range spans {
				spans[i].lo += opts[0].lo
				spans[i].hi += opts[0].hi
			}
			continue
		}
		var next []span
		for _, s := range spans {
			for _, o := range opts {
				next = append(next, span{s.lo + o.lo, s.hi + o.hi})
			}
		}
		spans = mergeSpans(next)
	}
	return spans
}

// mergeSpans sorts spans and merges those that overlap; past maxSpans it
// returns their hull.
func mergeSpans(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	out := spans[:1]
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if s.lo <= last.hi {
			last.hi = max(last.hi, s.hi)
			continue
		}
		out = append(out, s)
	}
	if len(out) > maxSpans {
		return []span{{out[0].lo, out[len(out)-1].hi}}
	}
	return out
}

func inSpans(spans []span, v int64) bool {
	for _, s := range spans {
		if s.lo <= v && v <= s.hi {
			return true
		}
	}
	return false
}

// Disqualification.

// disqualifiedLocked says whether p is disqualified to a request sent at sent
// and answered at answered: surely, maybe, or surely not.
func (p *player) disqualifiedLocked(sent, answered time.Time) (sure, maybe bool) {
	switch {
	case p.dqInitial:
		return true, true
	case p.dqSent.IsZero() || !p.dqSent.Before(answered):
		return false, false
	case !p.dqAnswered.IsZero() && !p.dqAnswered.After(sent):
		return true, true
	}
	return false, true
}

// playable reports whether a session may play p: surely not disqualified, not
// gone, not in use.
func (p *player) playable() bool { return !p.dqInitial && p.dqSent.IsZero() && !p.left && !p.inUse }

// Choices for the sessions.

// borrowPlayer picks a player of t that a session may play, and marks them in
// use; nil if none.
func (m *model) borrowPlayer(t *tenant, rnd *rand.Rand) *player {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.borrowPlayerLocked(t, rnd)
}

func (m *model) borrowPlayerLocked(t *tenant, rnd *rand.Rand) *player {
	n := len(t.players)
	if n == 0 {
		return nil
	}
	start := rnd.IntN(n)
	for i := range n {
		p := t.players[(start+i)%n]
		if p.playable() {
			p.inUse = true
			return p
		}
	}
	return nil
}

// giveBack ends a session's use of p.
func (m *model) giveBack(p *player) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.inUse = false
}

// disqualifiedPlayer picks a player of t who is surely disqualified (initially,
// or since an answered disqualification), or nil.
func (m *model) disqualifiedPlayer(t *tenant, rnd *rand.Rand) *player {
	m.mu.Lock()
	defer m.mu.Unlock()
	var dq []*player
	for _, p := range t.players {
		if p.dqInitial || !p.dqAnswered.IsZero() {
			dq = append(dq, p)
		}
	}
	if len(dq) == 0 {
		return nil
	}
	return dq[rnd.IntN(len(dq))]
}

// slowRead counts a ranking read of p over leaveAfter and reports whether p
// leaves.
func (m *model) slowRead(p *player) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	p.slow++
	if p.slow >= leaveAfterReads {
		p.left = true
	}
	return p.left
}

// players returns t's players now (a copy of the list).
func (m *model) playersOf(t *tenant) []*player {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(t.players)
}

// comps returns t's competitions now (a copy of the list).
func (m *model) compsOf(t *tenant) []*competition {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(t.comps)
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// farFuture stands for an answer that never came.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
