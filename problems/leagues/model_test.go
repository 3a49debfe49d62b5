package leagues

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/leagues/data"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// at is t0 plus ms milliseconds.
func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// tinyModel is a model of one tenant with players 1 to 3 and competition 10,
// running, without scores.
func tinyModel(t *testing.T) (*model, *tenant, *competition) {
	t.Helper()
	key, err := keys.Private()
	if err != nil {
		t.Fatal(err)
	}
	cfg := data.Default()
	cfg.Tenants = 1
	in := &data.Initial{NextID: 11, Tenants: []data.Tenant{{ID: 1, Name: "tiny-league-1", DisplayName: "Tiny League",
		Players:      []data.Player{{ID: 1, DisplayName: "A"}, {ID: 2, DisplayName: "B"}, {ID: 3, DisplayName: "C"}},
		Competitions: []data.Competition{{ID: 10, Title: "Cup"}}}}}
	m := newModel(cfg, in, key)
	tn := m.tenant(1)
	return m, tn, tn.compByID[10]
}

// uploadOf returns an upload of one row: player 1 with score.
func uploadOf(score int64) *upload { return newUpload([][2]int64{{1, score}}) }

// scores returns the score of player 1 in each candidate (-1: none), in order.
func scores(us []*upload) []int64 {
	var out []int64
	for _, u := range us {
		s, ok := u.score[1]
		if !ok {
			s = -1
		}
		out = append(out, s)
	}
	return out
}

// TestNewUploadRanks: the last row of a player wins; higher scores first, then
// the earlier row.
func TestNewUploadRanks(t *testing.T) {
	u := newUpload([][2]int64{{1, 500}, {2, 700}, {3, 700}, {1, 900}, {4, 0}, {2, 100}})
	want := []rank{{1, 900, 4}, {3, 700, 3}, {2, 100, 6}, {4, 0, 5}}
	if !slices.Equal(u.ranks, want) {
		t.Errorf("ranks %v, want %v", u.ranks, want)
	}
}

// TestCandidates: a read may show the state acknowledged before it was sent, or
// any upload sent before its answer came that no acknowledged upload had
// certainly replaced; an unsure upload stays possible for good, a refused one
// never is.
func TestCandidates(t *testing.T) {
	m, _, c := tinyModel(t)
	first, second, lost, late := uploadOf(100), uploadOf(200), uploadOf(300), uploadOf(400)
	m.uploadSent(c, first, at(1000))
	m.uploadDone(c, first, true, false, at(1100))
	m.uploadSent(c, second, at(2000))
	m.uploadDone(c, second, true, false, at(2100))
	m.uploadSent(c, lost, at(3000))
	m.uploadDone(c, lost, false, false, time.Time{})
	m.uploadSent(c, late, at(4000))
	m.uploadDone(c, late, false, true, time.Time{})
	for _, tc := range []struct {
		sent, answered int
		want           []int64
	}{
		{0, 500, []int64{-1}},               // before any upload
		{900, 1050, []int64{-1, 100}},       // while the first ran
		{1200, 1300, []int64{100}},          // after it
		{1500, 2050, []int64{100, 200}},     // while the second ran
		{2200, 2300, []int64{200}},          // after it
		{2200, 5000, []int64{200, 300}},     // the lost one, sent meanwhile, may have landed
		{9000, 9100, []int64{200, 300}},     // and still may have, long after
		{1050, 2050, []int64{-1, 100, 200}}, // the first was acknowledged after this read was sent
		{500, 9100, []int64{-1, 100, 200, 300}},
	} {
		m.mu.Lock()
		got := scores(c.candidatesLocked(at(tc.sent), at(tc.answered)))
		m.mu.Unlock()
		if !slices.Equal(got, tc.want) {
			t.Errorf("a read sent at %d ms, answered at %d ms, may show %v; want %v", tc.sent, tc.answered, got, tc.want)
		}
	}
	if !c.abandoned {
		t.Error("a competition with an unsure upload is not abandoned")
	}
}

// TestBills: the scorers are billed; a player without a score who read the
// ranking is a viewer surely if the answer came before the finish was sent,
// maybe if the read was sent before a second after the finish was answered, and
// not after; before billDelay has passed since the finish, the bill may still
// show 0.
func TestBills(t *testing.T) {
	m, tn, c := tinyModel(t)
	c.initial = false // as if added during the run: the benchmarker finishes only those
	m.uploadSent(c, newUpload([][2]int64{{1, 100}}), at(0))
	m.uploadDone(c, c.uploads[1], true, false, at(100))
	read := func(p int64, sent, answered int) {
		m.readSent(c, p, at(sent))
		if answered > 0 {
			m.readAnswered(c, p, at(answered))
		}
	}
	read(1, 200, 300) // a scorer: never a viewer
	read(2, 400, 500) // surely a viewer
	read(3, 1500, 0)  // sent while the finish ran, unanswered: maybe
	m.finishSent(c, at(1000))
	m.finishDone(c, true, at(2000))
	read(1, 2500, 2600)
	check := func(sent int, wantBills []bill, wantUnbilled bool, wantSpans []span) {
		t.Helper()
		m.mu.Lock()
		defer m.mu.Unlock()
		bills, unbilled := c.billsLocked(at(sent), at(sent+10))
		if !slices.Equal(bills, wantBills) || unbilled != wantUnbilled {
			t.Errorf("a bill read at %d ms: %+v unbilled=%v; want %+v %v", sent, bills, unbilled, wantBills, wantUnbilled)
		}
		if spans := tn.billLocked(at(sent), at(sent+10)); !slices.Equal(spans, wantSpans) {
			t.Errorf("the tenant's bill read at %d ms: %v, want %v", sent, spans, wantSpans)
		}
	}
	check(500, nil, true, []span{{0, 0}})
	check(1500, []bill{{scored: 1, viewedMin: 1, viewedMax: 2}}, true, []span{{0, 0}, {110, 120}})
	check(4000, []bill{{scored: 1, viewedMin: 1, viewedMax: 2}}, true, []span{{0, 0}, {110, 120}})
	check(5000, []bill{{scored: 1, viewedMin: 1, viewedMax: 2}}, false, []span{{110, 120}})
	read(3, 2900, 3000) // 0.9 s after the finish was answered: still maybe
	read(2, 3100, 3200)
	check(6000, []bill{{scored: 1, viewedMin: 1, viewedMax: 2}}, false, []span{{110, 120}})

	// Player 3's only read a second after the finish was answered: no viewer.
	m2, _, c2 := tinyModel(t)
	c2.initial = false
	m2.finishSent(c2, at(1000))
	m2.finishDone(c2, true, at(2000))
	m2.readSent(c2, 3, at(3000))
	m2.readAnswered(c2, 3, at(3100))
	m2.mu.Lock()
	bills, unbilled := c2.billsLocked(at(6000), at(6010))
	m2.mu.Unlock()
	if !slices.Equal(bills, []bill{{}}) || unbilled {
		t.Errorf("a read sent a second after the finish counted: %+v unbilled=%v", bills, unbilled)
	}
}

// TestDisqualifiedWindow: a player is surely disqualified to a request sent
// after the disqualification was answered, maybe to one that overlapped it, and
// surely not to one answered before it was sent.
func TestDisqualifiedWindow(t *testing.T) {
	m, tn, _ := tinyModel(t)
	p := tn.byID[2]
	m.disqualifySent(p, at(1000))
	m.disqualified(p, at(1100))
	for _, tc := range []struct {
		sent, answered int
		sure, maybe    bool
	}{
		{0, 900, false, false}, {900, 1050, false, true}, {1050, 1200, false, true}, {1100, 1200, true, true},
	} {
		m.mu.Lock()
		sure, maybe := p.disqualifiedLocked(at(tc.sent), at(tc.answered))
		m.mu.Unlock()
		if sure != tc.sure || maybe != tc.maybe {
			t.Errorf("sent %d answered %d: sure %v maybe %v, want %v %v", tc.sent, tc.answered, sure, maybe, tc.sure, tc.maybe)
		}
	}
	if p.playable() {
		t.Error("a disqualified player is played")
	}
}

// TestAdoption: players and a competition a list showed while their creation
// ran are taken back when the answer comes, not called taken; one whose
// creation failed stays abandoned.
func TestAdoption(t *testing.T) {
	m, tn, _ := tinyModel(t)
	m.playersSent(tn, []string{"D", "E"})
	m.mu.Lock()
	m.unpendPlayerLocked(tn, "D")
	d := m.addPlayerLocked(tn, 11, "D")
	d.adopted = true
	m.mu.Unlock()
	if why := m.playersAdded(tn, []string{"D", "E"}, []int64{11, 12}, 10, at(100)); why != "" {
		t.Fatalf("players shown before their answer: %s", why)
	}
	if len(tn.players) != 5 || tn.byID[12] == nil || tn.byID[11].adopted || len(tn.pendingPlay) != 0 {
		t.Errorf("players %d, pending %v", len(tn.players), tn.pendingPlay)
	}
	if why := m.playersAdded(tn, []string{"F"}, []int64{12}, 12, at(200)); why == "" {
		t.Error("an id taken by another player was accepted")
	}
	m.competitionSent(tn, "Shown")
	m.mu.Lock()
	c := m.addCompetitionLocked(tn, 13, "Shown")
	c.abandoned, c.adopted = true, true
	m.mu.Unlock()
	got, why := m.competitionAdded(tn, "Shown", 13, 12, at(300))
	if why != "" || got != c || c.abandoned || !c.busy {
		t.Errorf("a competition shown before its answer: %q, abandoned %v busy %v", why, c.abandoned, c.busy)
	}
	if _, why := m.competitionAdded(tn, "Other", 13, 12, at(400)); why == "" {
		t.Error("a competition given a taken id was accepted")
	}
	if _, why := m.competitionAdded(tn, "Below", 14, 14, at(400)); why == "" {
		t.Error("a competition given an id not above the last one handed out was accepted")
	}
}

// TestMergeSpans: overlapping spans merge; past maxSpans they become one.
func TestMergeSpans(t *testing.T) {
	if got := mergeSpans([]span{{10, 20}, {0, 0}, {15, 30}, {40, 40}}); !slices.Equal(got, []span{{0, 0}, {10, 30}, {40, 40}}) {
		t.Errorf("merged %v", got)
	}
	var many []span
	for i := range maxSpans + 1 {
		many = append(many, span{int64(10 * i), int64(10 * i)})
	}
	if got := mergeSpans(many); !slices.Equal(got, []span{{0, int64(10 * maxSpans)}}) {
		t.Errorf("past the cap: %v", got)
	}
	if !inSpans([]span{{0, 0}, {110, 120}}, 110) || inSpans([]span{{0, 0}, {110, 120}}, 100) {
		t.Error("inSpans")
	}
}

// TestUnknownPlayer: a player the model does not know may show in the
// organizer's list only while a player of that name is being added, not
// disqualified, with an id nothing else holds; each refusal names its reason.
func TestUnknownPlayer(t *testing.T) {
	pj := func(id int64, name string, dq bool) playerJSON {
		return playerJSON{ID: &id, DisplayName: &name, IsDisqualified: &dq}
	}
	known := []playerJSON{pj(1, "A", false), pj(2, "B", false), pj(3, "C", false)}
	for _, tc := range []struct {
		name    string
		pending bool
		extra   playerJSON
		want    string
	}{
		{"not being added", false, pj(11, "D", false), "never added"},
		{"disqualified", true, pj(11, "D", true), "shows as disqualified"},
		{"a competition's id", true, pj(10, "D", false), `the id of competition 10 ("Cup")`},
		{"adopted", true, pj(11, "D", false), ""},
	} {
		m, tn, _ := tinyModel(t)
		if tc.pending {
			m.playersSent(tn, []string{"D"})
		}
		res := &engine.Response{URL: &url.URL{Path: "/api/organizer/players"}, StatusCode: 200}
		err := m.checkPlayers(res, tn, append(slices.Clone(known), tc.extra))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
