package main

// The memory: every tenant, player, competition, ranking and bill, built from the store at start and by
// POST /initialize, and changed by the writes after the store has them.
//
// Locking, per tenant and never across tenants:
//   - tenant.wmu serialises the tenant's writes (players, disqualification, competitions, uploads, finishes): the
//     store and the memory see them in the same order. It replaces the reference's file lock.
//   - tenant.mu guards the tenant's maps and lists; writers hold it only to publish, after the store has the write,
//     and readers only to look up, so a read never waits for the database.
//   - competition.vmu serialises first visits with the finish, so a bill counts exactly the visits recorded before
//     it. A read takes it only when it records a visit: once per player and competition.
//   - A ranking, a competition's finish (with its bill) and a player's disqualification are published with one
//     atomic store each.

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// state is the memory of one generation of the data; POST /initialize replaces it as a whole.
type state struct {
	// nextID is the id generator: the next id of a player or a competition.
	nextID atomic.Int64

	// tmu serialises the addition of tenants.
	tmu sync.Mutex
	// byName maps a tenant's name to it (*tenant).
	byName sync.Map
	// tenants lists every tenant, lowest id first (ids only grow): readers load the slice header and read below its
	// length, the writer appends under tmu and stores the longer header.
	tenants atomic.Pointer[[]*tenant]
}

type tenant struct {
	id          int64
	name        string
	displayName string
	createdAt   int64
	json        []byte // {"id":1,"name":"…","display_name":"…"

	wmu sync.Mutex
	mu  sync.RWMutex
	// Under mu:
	players      map[int64]*player
	playerList   []*player // lowest id first
	competitions map[int64]*competition
	compList     []*competition // lowest id first

	// playersJSON caches the answer of GET /api/organizer/players; nil when stale. Stored under mu.RLock by a
	// reader that made it from what it read, cleared under mu.Lock by a writer.
	playersJSON atomic.Pointer[[]byte]
}

type player struct {
	id           int64
	tenantID     int64
	createdAt    int64
	displayName  string
	nameJSON     []byte // the display name as a JSON string
	json         []byte // {"id":12,"display_name":"…","is_disqualified":
	disqualified atomic.Bool
}

type competition struct {
	id        int64
	tenantID  int64
	createdAt int64
	title     string
	titleJSON []byte // the title as a JSON string
	json      []byte // {"id":345,"title":"…","is_finished":

	ranking atomic.Pointer[ranking]
	// fin is set once, when the competition finishes, with its bill: a finished competition's bill never changes.
	fin atomic.Pointer[finish]

	// vmu guards visits and serialises first visits with the finish.
	vmu sync.Mutex
	// visits maps a player to their first read of the ranking; nil once finished.
	visits map[int64]int64
}

type finish struct {
	at     int64
	scored int64
	viewed int64
	yen    int64
}

// ranking is one upload's ranking: the score that counts of every player, best first.
type ranking struct {
	entries []rankEntry
	// score maps a player to their entry's index.
	index map[int64]int32
}

type rankEntry struct {
	player *player
	score  int64
	row    int64
}

var emptyRanking = &ranking{}

// newRanking sorts the scores that count (one per player) into a ranking: higher scores first, then earlier rows.
func newRanking(entries []rankEntry) *ranking {
	if len(entries) == 0 {
		return emptyRanking
	}
	slices.SortFunc(entries, func(a, b rankEntry) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.row, b.row)
	})
	r := &ranking{entries: entries, index: make(map[int64]int32, len(entries))}
	for i, e := range entries {
		r.index[e.player.id] = int32(i)
	}
	return r
}

func newTenant(row tenantRow) *tenant {
	t := &tenant{id: row.id, name: row.name, displayName: row.displayName, createdAt: row.createdAt,
		players: map[int64]*player{}, competitions: map[int64]*competition{}}
	b := append([]byte(`{"id":`), strconv.FormatInt(t.id, 10)...)
	b = append(append(b, `,"name":`...), jsonString(t.name)...)
	t.json = slices.Clip(append(append(b, `,"display_name":`...), jsonString(t.displayName)...))
	return t
}

func newPlayer(row playerRow) *player {
	p := &player{id: row.id, tenantID: row.tenantID, createdAt: row.createdAt, displayName: row.displayName,
		nameJSON: jsonString(row.displayName)}
	b := append([]byte(`{"id":`), strconv.FormatInt(p.id, 10)...)
	p.json = slices.Clip(append(append(append(b, `,"display_name":`...), p.nameJSON...), `,"is_disqualified":`...))
	p.disqualified.Store(row.disqualified)
	return p
}

func newCompetition(row competitionRow) *competition {
	c := &competition{id: row.id, tenantID: row.tenantID, createdAt: row.createdAt, title: row.title,
		titleJSON: jsonString(row.title), visits: map[int64]int64{}}
	b := append([]byte(`{"id":`), strconv.FormatInt(c.id, 10)...)
	c.json = slices.Clip(append(append(append(b, `,"title":`...), c.titleJSON...), `,"is_finished":`...))
	c.ranking.Store(emptyRanking)
	return c
}

// bill makes the bill of a competition finishing at `at`: 100 for each player with a score, 10 for each other
// player whose first read of the ranking came by the finish's second. The caller holds c.vmu.
func (c *competition) bill(at int64) *finish {
	r := c.ranking.Load()
	f := &finish{at: at, scored: int64(len(r.entries))}
	for p, first := range c.visits {
		if _, scored := r.index[p]; !scored && first <= at {
			f.viewed++
		}
	}
	f.yen = yenPerScored*f.scored + yenPerViewer*f.viewed
	return f
}

// newState builds the memory from a store's rows.
func newState(snap *snapshot) *state {
	st := &state{}
	st.nextID.Store(snap.nextID)
	tenants := make([]*tenant, 0, len(snap.tenants)+64)
	byID := make(map[int64]*tenant, len(snap.tenants))
	for _, row := range snap.tenants {
		t := newTenant(row)
		tenants = append(tenants, t)
		byID[t.id] = t
		st.byName.Store(t.name, t)
	}
	slices.SortFunc(tenants, func(a, b *tenant) int { return cmp.Compare(a.id, b.id) })
	st.tenants.Store(&tenants)

	players := make(map[int64]*player, len(snap.players))
	for _, row := range snap.players {
		t := byID[row.tenantID]
		if t == nil {
			continue
		}
		p := newPlayer(row)
		players[p.id] = p
		t.players[p.id] = p
		t.playerList = append(t.playerList, p)
		st.nextID.Store(max(st.nextID.Load(), p.id+1))
	}
	competitions := make(map[int64]*competition, len(snap.competitions))
	for _, row := range snap.competitions {
		t := byID[row.tenantID]
		if t == nil {
			continue
		}
		c := newCompetition(row)
		competitions[c.id] = c
		t.competitions[c.id] = c
		t.compList = append(t.compList, c)
		st.nextID.Store(max(st.nextID.Load(), c.id+1))
	}
	for _, t := range tenants {
		slices.SortFunc(t.playerList, func(a, b *player) int { return cmp.Compare(a.id, b.id) })
		slices.SortFunc(t.compList, func(a, b *competition) int { return cmp.Compare(a.id, b.id) })
	}
	entries := map[int64][]rankEntry{}
	for _, s := range snap.scores {
		c, p := competitions[s.competitionID], players[s.playerID]
		if c == nil || p == nil || p.tenantID != c.tenantID {
			continue
		}
		entries[c.id] = append(entries[c.id], rankEntry{player: p, score: s.score, row: s.row})
	}
	for id, e := range entries {
		competitions[id].ranking.Store(newRanking(e))
	}
	for _, v := range snap.visits {
		if c := competitions[v.competitionID]; c != nil {
			if t, ok := c.visits[v.playerID]; !ok || v.at < t {
				c.visits[v.playerID] = v.at
			}
		}
	}
	for _, row := range snap.competitions {
		if c := competitions[row.id]; c != nil && row.finishedAt != 0 {
			c.fin.Store(c.bill(row.finishedAt))
			c.visits = nil
		}
	}
	return st
}

// tenant returns the tenant named name, or nil.
func (st *state) tenant(name string) *tenant {
	if t, ok := st.byName.Load(name); ok {
		return t.(*tenant)
	}
	return nil
}

// player returns the tenant's player id, or nil.
func (t *tenant) player(id int64) *player {
	t.mu.RLock()
	p := t.players[id]
	t.mu.RUnlock()
	return p
}

// competition returns the tenant's competition id, or nil.
func (t *tenant) competition(id int64) *competition {
	t.mu.RLock()
	c := t.competitions[id]
	t.mu.RUnlock()
	return c
}

// competitionsSnapshot returns the tenant's competitions, lowest id first.
func (t *tenant) competitionsSnapshot() []*competition {
	t.mu.RLock()
	list := t.compList[:len(t.compList):len(t.compList)]
	t.mu.RUnlock()
	return list
}

// billing returns the tenant's whole bill.
func (t *tenant) billing() int64 {
	var sum int64
	for _, c := range t.competitionsSnapshot() {
		if f := c.fin.Load(); f != nil {
			sum += f.yen
		}
	}
	return sum
}
