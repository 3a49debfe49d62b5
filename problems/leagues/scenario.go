package leagues

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems/leagues/data"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// Version of the scenario: bump it when a check, a number or the user mix
// changes, so that results say which rules they were scored by.
const Version = "10"

// Score tags (MANUAL: "Scenario and scoring"): the writes, then the reads.
const (
	tagAddTenant      = "add-tenant"
	tagAddPlayers     = "add-players"
	tagDisqualify     = "disqualify"
	tagAddCompetition = "add-competition"
	tagUpload         = "upload"
	tagFinish         = "finish"
	tagRanking        = "ranking"
	tagProfile        = "profile"
	tagCompetitions   = "competitions"
	tagPlayers        = "players"
	tagBilling        = "billing"
	tagAdminBilling   = "admin-billing"
)

// The rules' numbers, each stated in the manual.
const (
	weightWrite = 10
	weightRead  = 1
	// Each error deducts a percentage of the raw score: percentWrite for an
	// error on a write (a POST), percentRead for any other; failPercent of
	// deductions fails the run.
	percentWrite = 10
	percentRead  = 1
	failPercent  = 100
	// A player whose ranking reads took longer than leaveAfter leaveAfterReads
	// times leaves the run; the seat stays empty for seatEmpty before another
	// player takes it.
	leaveAfter      = 1200 * time.Millisecond
	leaveAfterReads = 3
	seatEmpty       = 5 * time.Second
	// billDelay: a tenant's bill must be exact once a competition's finish has
	// been answered this long before the bill was asked. viewerGrace: a ranking
	// read sent this long after a finish was answered is no viewer.
	billDelay   = 3 * time.Second
	viewerGrace = time.Second
	// rankingPage and billingPage are the manual's page sizes.
	rankingPage = 100
	billingPage = 10
	// requestTimeout bounds every request but the bills.
	requestTimeout = 30 * time.Second
	// reportTimeout bounds a bill, a report (the reference apps' take seconds
	// under load, and tens of seconds for a page of the admin's with MariaDB;
	// the original also gave its admin's bills 60 s).
	reportTimeout = 60 * time.Second
	// tokenLife is how long the tokens the benchmarker signs are valid.
	tokenLife = 24 * time.Hour
	// hostSuffix follows the label in the Host of every request.
	hostSuffix = ".t.localhost"
	// indexAsset is the manifest's path of the single-page app, served at /.
	indexAsset = "/static/index.html"
)

// The users (MANUAL: "Scenario and scoring").
const (
	// The sessions' shares: of every 20 sessions started, 15 are a player's, 4
	// an organizer's and 1 the admin's; the admin plays one session at a time
	// (a second is a player's instead).
	sharePlayer    = 15
	shareOrganizer = 4
	shareAdmin     = 1
	// A player reads minRounds to maxRounds rankings in a session, the second
	// page of one in secondPageEvery, and after each ranking minProfiles to
	// maxProfiles profiles of players on it.
	minRounds       = 3
	maxRounds       = 6
	secondPageEvery = 5
	minProfiles     = 1
	maxProfiles     = 2
	// openShare in 10 of a player's picks are a running competition, when the
	// tenant has one.
	openShare = 9
	// liveShare in 4 of the players play a tenant other than the huge one that
	// an organizer is working on, when there is one; hugeShare in 8 of the
	// others (and of the organizers) play the huge tenant.
	liveShare = 3
	hugeShare = 1
	// An organizer adds newPlayersMin to newPlayersMax players
	// (newTenantPlayers, twice, to a tenant that has none), in one organizer
	// session in addPlayersEvery; works on an initial running competition
	// rather than a new one in one session in reuseEvery; uploads minUploads to
	// maxUploads score files; disqualifies a player in one session in
	// disqualifyEvery; tries an upload after the finish in one in
	// lateUploadEvery.
	newPlayersMin    = 5
	newPlayersMax    = 20
	newTenantPlayers = 40
	addPlayersEvery  = 2
	reuseEvery       = 3
	minUploads       = 2
	maxUploads       = 4
	disqualifyEvery  = 4
	lateUploadEvery  = 4
	badFileEvery     = 8
	// An upload has a score for participateMin to participateMax percent of the
	// tenant's players, a second or third row for repeatPercent percent of
	// those, scores multiples of scoreStep below scoreSteps*scoreStep (ties are
	// common), and at most maxRows rows.
	participateMin = 50
	participateMax = 90
	repeatPercent  = 25
	scoreStep      = 100
	scoreSteps     = 1000
	maxRows        = 5000
	// The load controller: the run starts with startUsers and adds users (up to
	// growth times as many at a time, fastGrowth while the mean response stays
	// under 5 ms) while at most maxSlowRate of the requests take over
	// slowRequest, up to maxUsers.
	startUsers  = 20
	growth      = 1.0
	fastGrowth  = 3.0
	maxUsers    = 20000
	slowRequest = leaveAfter
	maxSlowRate = 0.05
	// The bills are reports that take long by nature and are read now and then:
	// the controller counts them slow only past reportSlow, lest one bill be a
	// large share of the slow requests while the users are few.
	reportSlow = 10 * time.Second
	// The final check reads the rankings of finalRankings competitions added
	// during the run, the first page of the admin's bills, then bills of the
	// tenants organizers worked on and at most finalAdminPages pages in all,
	// starting no read finalBudget after it began.
	finalRankings   = 10
	finalAdminPages = 5
	finalBudget     = 12 * time.Second
)

// Think times.
var (
	thinkMin      = 500 * time.Millisecond // a player between two pages
	thinkMax      = time.Second
	emptyThinkMin = 500 * time.Millisecond // a player who found an empty ranking, before picking again
	emptyThinkMax = time.Second
	uploadGapMin  = 300 * time.Millisecond // an organizer between two uploads
	uploadGapMax  = 600 * time.Millisecond
)

// Roles of the sessions.
const (
	rolePlayer    = keys.RolePlayer
	roleOrganizer = keys.RoleOrganizer
	roleAdmin     = keys.RoleAdmin
)

// Scenario is the leagues benchmark.
type Scenario struct {
	m        *model
	mix      *engine.Mix
	manifest engine.Manifest
	// other is a key that is not the problem's, of the same size: tokens it
	// signs must be refused.
	other *rsa.PrivateKey
	// forge makes the tokens of the load's negative cases and counts them.
	forge *forger
}

var _ engine.Scenario = (*Scenario)(nil)

// NewScenario returns a scenario for one run. It keeps the initial seats'
// signed tokens in env's cache directory, if it has one.
func NewScenario(env kit.Env) (*Scenario, error) {
	cfg := data.Default()
	in, err := cfg.Initial()
	if err != nil {
		return nil, err
	}
	key, err := keys.Private()
	if err != nil {
		return nil, err
	}
	other, err := rsa.GenerateKey(rand.Reader, keys.Bits)
	if err != nil {
		return nil, err
	}
	m := newModel(cfg, in, key)
	path := "" // no cache directory: signed for this run alone
	if env.CacheDir != "" {
		path = filepath.Join(env.CacheDir, seatTokensFile)
	}
	if err := m.loadSeatTokens(path, time.Now()); err != nil {
		return nil, fmt.Errorf("the tokens of the initial seats: %w", err)
	}
	return &Scenario{
		m: m,
		mix: engine.NewMix(engine.Share{Role: rolePlayer, Weight: sharePlayer},
			engine.Share{Role: roleOrganizer, Weight: shareOrganizer}, engine.Share{Role: roleAdmin, Weight: shareAdmin}),
		manifest: Manifest(),
		other:    other,
		forge:    newForger(key, other),
	}, nil
}

// Meta declares the rules.
func (s *Scenario) Meta() engine.Meta {
	weights := map[string]float64{}
	for _, tag := range []string{tagAddTenant, tagAddPlayers, tagDisqualify, tagAddCompetition, tagUpload, tagFinish} {
		weights[tag] = weightWrite
	}
	for _, tag := range []string{tagRanking, tagProfile, tagCompetitions, tagPlayers, tagBilling, tagAdminBilling} {
		weights[tag] = weightRead
	}
	return engine.Meta{
		Problem: Name,
		Version: Version,
		Rules: engine.Rules{
			Weights:   weights,
			Deduction: deduction,
			Pass:      []engine.PassRule{deductionBelowFull},
		},
		Assets: s.manifest,
		Agent:  engine.AgentConfig{FirstByteTimeout: requestTimeout, RequestTimeout: requestTimeout, MaxIdlePerUser: 1},
		Load: engine.LoadPolicy{StartUsers: startUsers, Growth: growth, FastGrowth: fastGrowth, MaxUsers: maxUsers, SlowRequest: slowRequest,
			MaxSlowRate: maxSlowRate, SlowFor: map[string]time.Duration{epAdminBilling: reportSlow, epOrgBilling: reportSlow}},
	}
}

// isWrite reports whether an error's request was a write: a POST.
func isWrite(request string) bool { return strings.HasPrefix(request, "POST ") }

// percent is the share of the raw score the errors deduct, in percent.
func percent(t engine.Tally) int64 {
	var p int64
	for request, n := range t.ErrorsByRequest {
		if isWrite(request) {
			p += percentWrite * n
		} else {
			p += percentRead * n
		}
	}
	return p
}

// deduction takes percent of the raw score off, all of it at most.
func deduction(t engine.Tally) float64 { return t.Raw * float64(min(percent(t), 100)) / 100 }

// deductionBelowFull fails a run whose errors deduct failPercent or more.
func deductionBelowFull(t engine.Tally, _ float64) string {
	if p := percent(t); p >= failPercent {
		return fmt.Sprintf("the errors deduct %d%% of the raw score (%d%% for each error on a write, %d%% on a read); %d%% fails the run",
			p, percentWrite, percentRead, failPercent)
	}
	return ""
}
