// Package data generates the initial data of the leagues problem, the same rows
// for the same Config on every machine: tenants, one of them huge, with their
// players, competitions, score uploads and the visit history of their rankings.
//
// Each tenant draws from streams of its own, seeded from the Config's seed and
// the tenant's id: its size, its players and competitions, its score uploads,
// its visits. So tenants can be generated in any order, and Initial computes,
// without writing anything, what a benchmarker must know of the initial state:
// every tenant, player and competition, each competition's ranking and the
// exact bill of each finished one. Ensure writes the files the reference apps
// start from (see Write).
package data

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tunecon/tunecon/kit/datagen"
)

// Version is the version of the generated data. Bump it whenever the rows Write
// writes for a Config change, so that data written by an older generator is
// replaced (see Ensure).
const Version = 1

// The span of the initial data, Unix seconds: every row's time is at or after
// Start and before End. The reference apps know End: POST /initialize deletes
// the visits at or after it.
const (
	Start int64 = 1751328000 // 2025-07-01 00:00:00 UTC
	End   int64 = 1767225600 // 2026-01-01 00:00:00 UTC
)

// The prices of the manual's billing rule, per finished competition.
const (
	YenPerScored = 100 // a player with a score
	YenPerViewer = 10  // a player without a score who read the ranking by the finish
)

// The shape of every tenant, in percent and counts.
const (
	disqualifiedPercent = 10 // players disqualified
	finishedPercent     = 50 // competitions finished
	participantPercent  = 90 // players with a score in a competition's last upload
	earlierPercent      = 60 // participants in each earlier upload
	repeatPercent       = 25 // participants with 2 or 3 rows in an upload rather than 1
	maxUploads          = 5  // a finished competition has 1 to maxUploads uploads, an open one 0 to maxUploads
	scoreSteps          = 1000
	scoreStep           = 100 // scores are multiples of scoreStep below scoreSteps*scoreStep: ties are common
	visitorPercent      = 80  // players who ever read a given competition's ranking
	maxVisits           = 24  // reads of one ranking by one visitor: 1 to maxVisits
	tenantInterval      = 60 * 60
	playerInterval      = 60
	day                 = 24 * 60 * 60
)

// Stream kinds, mixed into the seeds so that a tenant's streams differ from
// each other.
const (
	kindSize   uint64 = 0x73697a65         // "size"
	kindTenant uint64 = 0x74656e616e74     // "tenant"
	kindScores uint64 = 0x73636f726573     // "scores"
	kindVisits uint64 = 0x766973697473     // "visits"
	kindRun    uint64 = 0x72756e6e616d65   // "runname": names made during a run
	kindTitle  uint64 = 0x72756e7469746c65 // "runtitle"
)

// Config says which data to generate.
type Config struct {
	Seed uint64
	// Tenants is the number of tenants, ids 1 to Tenants. Tenant 1 is the huge
	// one.
	Tenants int
	// HugePlayers and HugeCompetitions are tenant 1's size.
	HugePlayers, HugeCompetitions int
	// The other tenants have MinPlayers to MaxPlayers players and
	// MinCompetitions to MaxCompetitions competitions.
	MinPlayers, MaxPlayers           int
	MinCompetitions, MaxCompetitions int
}

// Default returns the configuration of the problem's initial data. The
// reference apps know its number of tenants and its NextID: change them
// together (a test checks).
func Default() Config {
	return Config{
		Seed:    20220723,
		Tenants: 100, HugePlayers: 3000, HugeCompetitions: 12,
		MinPlayers: 20, MaxPlayers: 200, MinCompetitions: 2, MaxCompetitions: 12,
	}
}

func (c Config) validate() error {
	switch {
	case c.Tenants < 1 || c.Tenants > 10000:
		return fmt.Errorf("leagues data: %d tenants, want 1 to 10000", c.Tenants)
	case c.HugePlayers < 1 || c.HugeCompetitions < 1:
		return fmt.Errorf("leagues data: the huge tenant needs players and competitions")
	case c.MinPlayers < 1 || c.MaxPlayers < c.MinPlayers || c.MinCompetitions < 1 || c.MaxCompetitions < c.MinCompetitions:
		return fmt.Errorf("leagues data: bad ranges of players [%d, %d] or competitions [%d, %d]",
			c.MinPlayers, c.MaxPlayers, c.MinCompetitions, c.MaxCompetitions)
	case c.HugePlayers > 1_000_000 || c.MaxPlayers > 1_000_000 || c.HugeCompetitions > 1000 || c.MaxCompetitions > 1000:
		return fmt.Errorf("leagues data: too big")
	}
	return nil
}

// Tenant is one tenant as generated.
type Tenant struct {
	ID          int64
	Name        string // the host label: NAME.t.example
	DisplayName string
	CreatedAt   int64
	// Players, lowest id first, and Competitions, lowest id first.
	Players      []Player
	Competitions []Competition
}

// Billing is the tenant's whole bill: the sum of its finished competitions'
// bills.
func (t Tenant) Billing() int64 {
	var sum int64
	for _, c := range t.Competitions {
		sum += c.Billing.Yen
	}
	return sum
}

// Player is one player. Every player has the role "player"; organizers and the
// admin are not stored.
type Player struct {
	ID           int64
	DisplayName  string
	Disqualified bool
	CreatedAt    int64
}

// Competition is one competition with what its scores and visits make of it.
type Competition struct {
	ID        int64
	Title     string
	CreatedAt int64
	// FinishedAt is when it finished, Unix seconds; 0 while it runs.
	FinishedAt int64
	// Uploads is the number of score uploads (0: none yet): the last one, which
	// counts, is upload number Uploads.
	Uploads int
	// Ranking is the ranking of the last upload, best first, as the manual
	// defines it.
	Ranking []Rank
	// Billing is the competition's bill; zero while it runs.
	Billing Billing
}

// Finished reports whether the competition has finished.
func (c Competition) Finished() bool { return c.FinishedAt != 0 }

// Rank is one entry of a ranking: a player's score and the CSV row (from 1,
// after the header) of the last upload it comes from.
type Rank struct {
	PlayerID int64
	Score    int64
	Row      int
}

// Billing is a finished competition's bill.
type Billing struct {
	Scored int   // players with a score
	Viewed int   // players without a score who read the ranking at or before the finish
	Yen    int64 // YenPerScored*Scored + YenPerViewer*Viewed
}

// Initial is everything a benchmarker needs to know of the initial data.
type Initial struct {
	Tenants []Tenant // ids 1 to len(Tenants)
	// NextID is the first id the id generator hands out after the initial data;
	// players and competitions have ids 1 to NextID-1.
	NextID int64
	// ScoreRows and VisitRows count the rows of every tenant's player_score and
	// of visit_history.
	ScoreRows, VisitRows int64
}

// Tenant returns tenant id, for 1 <= id <= len(Tenants).
func (in *Initial) Tenant(id int64) *Tenant { return &in.Tenants[id-1] }

// scoreRow is one row of player_score.
type scoreRow struct {
	competition int64
	upload, row int
	player      int64
	score       int64
	at          int64
}

// visit is one row of visit_history.
type visit struct {
	player, tenant, competition, at int64
}

// sizes returns every tenant's number of players and competitions, index 0 for
// tenant 1.
func (c Config) sizes() (players, competitions []int) {
	players, competitions = make([]int, c.Tenants), make([]int, c.Tenants)
	for i := range c.Tenants {
		if i == 0 {
			players[i], competitions[i] = c.HugePlayers, c.HugeCompetitions
			continue
		}
		g := datagen.Stream(c.Seed, kindSize, uint64(i+1))
		players[i] = c.MinPlayers + g.Intn(c.MaxPlayers-c.MinPlayers+1)
		competitions[i] = c.MinCompetitions + g.Intn(c.MaxCompetitions-c.MinCompetitions+1)
	}
	return players, competitions
}

// skeletons returns every tenant with its players and competitions, without
// scores, rankings or bills, and the id generator's next id. Ids are handed out
// tenant by tenant: a tenant's players, then its competitions.
func (c Config) skeletons() ([]Tenant, int64) {
	players, competitions := c.sizes()
	tenants := make([]Tenant, c.Tenants)
	next := int64(1)
	for i := range tenants {
		tenants[i] = c.skeleton(int64(i+1), next, players[i], competitions[i])
		next += int64(players[i] + competitions[i])
	}
	return tenants, next
}

// skeleton draws tenant id's names, players and competitions; its ids start at
// first.
func (c Config) skeleton(id, first int64, nPlayers, nCompetitions int) Tenant {
	g := datagen.Stream(c.Seed, kindTenant, uint64(id))
	adj, noun := g.Pick(adjectives), g.Pick(nouns)
	t := Tenant{
		ID:          id,
		Name:        adj + "-" + noun + "-" + strconv.FormatInt(id, 10),
		DisplayName: capital(adj) + " " + capital(noun) + " " + g.Pick(leagueWords),
		CreatedAt:   Start + (id-1)*tenantInterval,
	}
	t.Players = make([]Player, nPlayers)
	for i := range t.Players {
		t.Players[i] = Player{
			ID:           first + int64(i),
			DisplayName:  playerName(g),
			Disqualified: g.Intn(100) < disqualifiedPercent,
			CreatedAt:    t.CreatedAt + int64(i+1)*playerInterval,
		}
	}
	// Competitions start from 10 days after Start to 10 days before End, in
	// order, and last 1 hour to 9 days.
	from, span := Start+10*day, End-Start-20*day
	slot := span / int64(nCompetitions)
	t.Competitions = make([]Competition, nCompetitions)
	for j := range t.Competitions {
		comp := Competition{
			ID:        first + int64(nPlayers+j),
			Title:     g.Pick(seasons) + " " + g.Pick(events) + " #" + strconv.Itoa(j+1),
			CreatedAt: from + int64(j)*slot + g.Int63n(slot/2+1),
		}
		if g.Intn(100) < finishedPercent {
			comp.FinishedAt = comp.CreatedAt + 60*60 + g.Int63n(8*day)
		}
		t.Competitions[j] = comp
	}
	return t
}

// scores draws t's uploads, in competition order, and sets each competition's
// Uploads and Ranking.
func (c Config) scores(t *Tenant) []scoreRow {
	g := datagen.Stream(c.Seed, kindScores, uint64(t.ID))
	var rows []scoreRow
	for j := range t.Competitions {
		comp := &t.Competitions[j]
		if comp.Finished() {
			comp.Uploads = 1 + g.Intn(maxUploads)
		} else {
			comp.Uploads = g.Intn(maxUploads + 1)
		}
		if comp.Uploads == 0 {
			continue
		}
		var participants []int64
		for _, p := range t.Players {
			if g.Intn(100) < participantPercent {
				participants = append(participants, p.ID)
			}
		}
		end := End
		if comp.Finished() {
			end = comp.FinishedAt
		}
		var upload []scoreRow
		for u := 1; u <= comp.Uploads; u++ {
			upload = upload[:0]
			for _, p := range participants {
				if u < comp.Uploads && g.Intn(100) >= earlierPercent {
					continue
				}
				n := 1
				if g.Intn(100) < repeatPercent {
					n = 2 + g.Intn(2)
				}
				for range n {
					upload = append(upload, scoreRow{player: p, score: scoreStep * g.Int63n(scoreSteps)})
				}
			}
			for i := len(upload) - 1; i > 0; i-- {
				k := g.Intn(i + 1)
				upload[i], upload[k] = upload[k], upload[i]
			}
			at := comp.CreatedAt + int64(u)*(end-comp.CreatedAt)/int64(comp.Uploads+1)
			for i := range upload {
				upload[i].competition, upload[i].upload, upload[i].row, upload[i].at = comp.ID, u, i+1, at
			}
			rows = append(rows, upload...)
		}
		comp.Ranking = ranking(upload)
	}
	return rows
}

// ranking applies the manual's rules to one upload's rows: the last row of a
// player wins; higher scores first, then earlier rows.
func ranking(upload []scoreRow) []Rank {
	last := map[int64]int{}
	for i, r := range upload {
		last[r.player] = i
	}
	ranks := make([]Rank, 0, len(last))
	for _, i := range last {
		ranks = append(ranks, Rank{PlayerID: upload[i].player, Score: upload[i].score, Row: upload[i].row})
	}
	slices.SortFunc(ranks, func(a, b Rank) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(a.Row, b.Row)
	})
	return ranks
}

// visits draws t's visit history, competition by competition and player by
// player. If bill, it also sets the bill of each finished competition, whose
// Ranking must be set.
func (c Config) visits(t *Tenant, bill bool) []visit {
	g := datagen.Stream(c.Seed, kindVisits, uint64(t.ID))
	var rows []visit
	for j := range t.Competitions {
		comp := &t.Competitions[j]
		var scored map[int64]bool
		if bill && comp.Finished() {
			scored = make(map[int64]bool, len(comp.Ranking))
			for _, r := range comp.Ranking {
				scored[r.PlayerID] = true
			}
		}
		viewed := 0
		for _, p := range t.Players {
			if g.Intn(100) >= visitorPercent {
				continue
			}
			first := End
			for range 1 + g.Intn(maxVisits) {
				at := comp.CreatedAt + g.Int63n(End-comp.CreatedAt)
				first = min(first, at)
				rows = append(rows, visit{player: p.ID, tenant: t.ID, competition: comp.ID, at: at})
			}
			if scored != nil && first <= comp.FinishedAt && !scored[p.ID] {
				viewed++
			}
		}
		if scored != nil {
			comp.Billing = Billing{Scored: len(scored), Viewed: viewed,
				Yen: YenPerScored*int64(len(scored)) + YenPerViewer*int64(viewed)}
		}
	}
	return rows
}

// Initial generates the whole data in memory, writing nothing, and returns what
// a benchmarker needs of it.
func (c Config) Initial() (*Initial, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	tenants, next := c.skeletons()
	in := &Initial{Tenants: tenants, NextID: next}
	for i := range tenants {
		in.ScoreRows += int64(len(c.scores(&tenants[i])))
		in.VisitRows += int64(len(c.visits(&tenants[i], true)))
	}
	return in, nil
}

// Name returns the n-th display name the benchmarker gives a player it adds
// during a run, like the initial players' names.
func (c Config) Name(n uint64) string { return playerName(datagen.Stream(c.Seed, kindRun, n)) }

// Title returns the n-th title the benchmarker gives a competition it adds
// during a run.
func (c Config) Title(n uint64) string {
	g := datagen.Stream(c.Seed, kindTitle, n)
	return g.Pick(seasons) + " " + g.Pick(events) + " " + strconv.FormatUint(n, 10)
}

// header is the first line of the data's VERSION file; Ensure compares it to
// tell whether the data is current.
func (c Config) header() string {
	return fmt.Sprintf("tunecon leagues initial data v%d seed=%d tenants=%d huge=%dx%d players=%d-%d competitions=%d-%d",
		Version, c.Seed, c.Tenants, c.HugePlayers, c.HugeCompetitions, c.MinPlayers, c.MaxPlayers,
		c.MinCompetitions, c.MaxCompetitions)
}

// playerName draws a person's name: given and family names, in English or
// Japanese.
func playerName(g datagen.Gen) string {
	if g.Intn(3) == 0 {
		return g.Pick(jaFamily) + " " + g.Pick(jaGiven)
	}
	return g.Pick(enGiven) + " " + g.Pick(enFamily)
}

// capital returns word with its first letter in upper case (ASCII words only).
func capital(word string) string { return strings.ToUpper(word[:1]) + word[1:] }

// The vocabulary. No word may hold a quote, a backslash, a semicolon or a
// control character: the dump writes them unescaped, and the tests check.
// Adjectives and nouns are lowercase ASCII letters: they make host names.
var (
	adjectives = strings.Fields(`
		swift bold crimson silver golden iron rapid silent northern southern eastern western lucky brave quiet
		mighty royal electric cosmic frozen blazing hidden wild noble stellar neon shadow lunar solar ancient`)
	nouns = strings.Fields(`
		falcons tigers wolves dragons ravens foxes owls sharks bears lions hawks comets titans knights pilots
		rangers rockets wizards pandas otters cranes vipers phoenix storm legion guild arena circuit`)
	leagueWords = strings.Fields(`League Cup Circuit Series Club Association Federation`)
	seasons     = strings.Fields(`Spring Summer Autumn Winter Midseason Preseason Championship Regional Open Invitational`)
	events      = strings.Fields(`Cup Clash Showdown Qualifier Masters Derby Sprint Marathon Gauntlet Trials`)
	enGiven     = strings.Fields(`
		Alice Bruno Chloe Diego Emma Felix Grace Hugo Iris Jonas Kira Liam Maya Noah Olga Pablo Quinn Rosa Sam
		Tara Umar Vera Wade Xena Yusuf Zoe Ava Ben Cleo Dan Eli Finn Gina Hana Ivan Jade Kai Lena Max Nora`)
	enFamily = strings.Fields(`
		Smith Garcia Muller Rossi Novak Silva Kowalski Jensen Dubois Nguyen Kim Okafor Haddad Petrov Larsen
		Moreau Costa Fischer Walker Reyes Ito Chen Singh Brown Lopez Schmidt Weber Martin Evans Clark`)
	jaFamily = strings.Fields(`佐藤 鈴木 高橋 田中 伊藤 渡辺 山本 中村 小林 加藤 吉田 山田 佐々木 松本 井上 木村 林 清水`)
	jaGiven  = strings.Fields(`翔太 陽菜 蓮 結衣 大翔 美咲 悠斗 葵 颯太 さくら 湊 凛 樹 芽依 大和 ひなた 悠真 心春`)
)
