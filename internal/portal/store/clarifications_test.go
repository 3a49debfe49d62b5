package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// member makes an account in a new team and returns it as it is now.
func member(t *testing.T, s *store.Store, login, team string) portal.Account {
	t.Helper()
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, login, "hash", portal.RoleContestant)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTeamFor(ctx, a.ID, team, ""); err != nil {
		t.Fatal(err)
	}
	a, _, err = s.AccountByLogin(ctx, login)
	if err != nil || a.TeamID == 0 {
		t.Fatalf("%s: %+v, %v", login, a, err)
	}
	return a
}

// TestAnnouncements: posted announcements are listed newest first, each
// audited once (a refused one not at all), and an account's unread count
// follows its read mark, which never moves back.
func TestAnnouncements(t *testing.T) { systems.Run(t, testAnnouncements) }

func testAnnouncements(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clk := &fakeClock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clk.Now)
	alice := member(t, s, "alice", "team a")
	for _, bad := range []string{"", "  \n ", strings.Repeat("x", portal.MaxAnnouncement+1)} {
		if _, err := s.Announce(ctx, root, bad); portal.ErrorCode(err) != portal.CodeInvalid {
			t.Errorf("announcing %d bytes: %v", len(bad), err)
		}
	}
	first, err := s.Announce(ctx, root, " The **load** starts at 10:00.\r\n")
	if err != nil || first.Text != "The **load** starts at 10:00." || !first.At.Equal(clk.Now()) || first.By != "root" {
		t.Fatalf("%+v, %v", first, err)
	}
	if n, err := s.NoticesFor(ctx, alice.ID, false); err != nil || n.Unread != 1 {
		t.Errorf("alice's notices %+v, %v; want 1 unread", n, err)
	}
	clk.Add(time.Minute)
	second, err := s.Announce(ctx, root, strings.Repeat("y", portal.MaxAnnouncement))
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.Announcements(ctx)
	if err != nil || len(list) != 2 || list[0].ID != second.ID || list[1].ID != first.ID {
		t.Fatalf("announcements %+v, %v", list, err)
	}
	if n, _ := s.NoticesFor(ctx, alice.ID, false); n.Unread != 2 {
		t.Errorf("alice has %d unread, want 2", n.Unread)
	}
	if err := s.ReadAnnouncements(ctx, alice.ID, second.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.ReadAnnouncements(ctx, alice.ID, first.ID); err != nil { // an older page: the mark stays
		t.Fatal(err)
	}
	if n, _ := s.NoticesFor(ctx, alice.ID, false); n.Unread != 0 {
		t.Errorf("alice has %d unread after reading, want 0", n.Unread)
	}
	if _, err := s.Announce(ctx, root, "third"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.NoticesFor(ctx, alice.ID, false); n.Unread != 1 {
		t.Errorf("alice has %d unread after a third, want 1", n.Unread)
	}
	entries, err := s.AuditLog(ctx)
	if err != nil || len(entries) != 3 {
		t.Fatalf("audit log %+v, %v; want 3 entries", entries, err)
	}
	if e := entries[0]; e.Action != portal.AuditAnnounce || e.By != root || !strings.Contains(string(e.Detail), "**load**") {
		t.Errorf("the first entry %+v (%s)", e, e.Detail)
	}
}

// TestClarifications: a team sees its own questions and the published ones,
// never another team's private one; staff see them all with the text as
// asked. A private answer keeps the question as asked; publishing may edit
// it. Each change is audited once, a save that changes nothing and a
// refused one not at all; a published clarification stays published.
func TestClarifications(t *testing.T) { systems.Run(t, testClarifications) }

func testClarifications(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clk := &fakeClock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clk.Now)
	alice, bob := member(t, s, "alice", "team a"), member(t, s, "bob", "team b")
	seenA, seenB := store.Seen{TeamID: alice.TeamID}, store.Seen{TeamID: bob.TeamID}
	ids := func(seen store.Seen) []int64 {
		t.Helper()
		cs, err := s.Clarifications(ctx, seen)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	key := func(seen store.Seen) string {
		t.Helper()
		k, err := s.ClarificationsKey(ctx, seen)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}

	if _, err := s.Ask(ctx, portal.Account{ID: 99, Login: "loner"}, "why?"); portal.ErrorCode(err) != portal.CodeDenied {
		t.Errorf("a question without a team: %v", err)
	}
	for _, bad := range []string{"", strings.Repeat("q", portal.MaxQuestion+1)} {
		if _, err := s.Ask(ctx, alice, bad); portal.ErrorCode(err) != portal.CodeInvalid {
			t.Errorf("a question of %d bytes: %v", len(bad), err)
		}
	}
	qa, err := s.Ask(ctx, alice, "Is our cache allowed to keep /api/secret?")
	if err != nil || qa.TeamName != "team a" || qa.AskedBy != "alice" || qa.Original != qa.Question {
		t.Fatalf("%+v, %v", qa, err)
	}
	clk.Add(time.Second)
	qb, err := s.Ask(ctx, bob, "May team b restart the database? Our IP is 192.0.2.7.")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := s.NoticesFor(ctx, 1, true); n.Unanswered != 2 {
		t.Errorf("%d unanswered, want 2", n.Unanswered)
	}
	if got := ids(seenA); !slices.Equal(got, []int64{qa.ID}) {
		t.Errorf("team a sees %v, want its own %d", got, qa.ID)
	}
	if got := ids(store.Seen{All: true}); !slices.Equal(got, []int64{qb.ID, qa.ID}) {
		t.Errorf("staff see %v", got)
	}
	if got := ids(store.Seen{}); len(got) != 0 {
		t.Errorf("someone in no team sees %v", got)
	}

	// A private answer: team b's view does not change, team a's does.
	keyB := key(seenB)
	if _, err := s.AnswerClarification(ctx, root, qa.ID, store.Answer{Question: "edited", Answer: "No."}); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("a private answer with an edited question: %v", err)
	}
	if _, err := s.AnswerClarification(ctx, root, qa.ID, store.Answer{Answer: " "}); portal.ErrorCode(err) != portal.CodeInvalid {
		t.Errorf("an empty answer: %v", err)
	}
	if _, err := s.AnswerClarification(ctx, root, 999, store.Answer{Answer: "No."}); portal.ErrorCode(err) != portal.CodeNotFound {
		t.Errorf("no such clarification: %v", err)
	}
	keyA := key(seenA)
	clk.Add(time.Second)
	answered, err := s.AnswerClarification(ctx, root, qa.ID, store.Answer{Answer: "No."})
	if err != nil || !answered.Answered() || !answered.AnsweredAt.Equal(clk.Now()) || answered.AnsweredBy != "root" || answered.Published {
		t.Fatalf("%+v, %v", answered, err)
	}
	if _, err := s.AnswerClarification(ctx, root, qa.ID, store.Answer{Answer: "No."}); err != nil { // nothing changes
		t.Fatal(err)
	}
	if key(seenB) != keyB || slices.Contains(ids(seenB), qa.ID) {
		t.Error("team b's view changed with team a's private answer")
	}
	if key(seenA) == keyA {
		t.Error("team a's view did not change with its answer")
	}

	// Published with its text edited: everyone sees the edited text, staff
	// the original too.
	keyA, keyB = key(seenA), key(seenB)
	edited := "May a team restart its database?"
	pub, err := s.AnswerClarification(ctx, root, qb.ID, store.Answer{Question: edited, Answer: "Yes.", Publish: true})
	if err != nil || !pub.Published || pub.Question != edited || !strings.Contains(pub.Original, "192.0.2.7") {
		t.Fatalf("%+v, %v", pub, err)
	}
	if key(seenA) == keyA || key(seenB) == keyB {
		t.Error("a publication changed not every team's view")
	}
	list, err := s.Clarifications(ctx, seenA)
	if err != nil || len(list) != 2 || list[0].ID != qb.ID || list[0].Question != edited {
		t.Fatalf("team a sees %+v, %v", list, err)
	}
	if v := list[0].ForTeam(alice.TeamID); v.Original != "" || v.AskedBy != "" || v.TeamName != "" || v.Question != edited {
		t.Errorf("team a's view of team b's published question: %+v", v)
	}
	if v := list[1].ForTeam(alice.TeamID); v.AskedBy != "alice" || v.Question != qa.Question {
		t.Errorf("team a's view of its own question: %+v", v)
	}
	if _, err := s.AnswerClarification(ctx, root, qb.ID, store.Answer{Answer: "Yes."}); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("unpublishing: %v", err)
	}
	// Publishing a private one later, its text as asked.
	if c, err := s.AnswerClarification(ctx, root, qa.ID, store.Answer{Answer: "No.", Publish: true}); err != nil || c.Question != qa.Original {
		t.Errorf("%+v, %v", c, err)
	}
	if n, _ := s.NoticesFor(ctx, 1, true); n.Unanswered != 0 {
		t.Errorf("%d unanswered, want 0", n.Unanswered)
	}

	entries, err := s.AuditLog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Action)
	}
	if want := []string{portal.AuditAnswer, portal.AuditPublish, portal.AuditPublish}; !slices.Equal(actions, want) {
		t.Fatalf("audit log %v, want %v", actions, want)
	}
	var detail map[string]portal.Change
	if err := json.Unmarshal(entries[1].Detail, &detail); err != nil {
		t.Fatal(err)
	}
	if len(detail) != 3 || detail["question"].After != edited || detail["published"].After != true || detail["answer"].After != "Yes." {
		t.Errorf("the publication's detail %s", entries[1].Detail)
	}
	if !strings.Contains(entries[1].Subject, "team b") {
		t.Errorf("the publication's subject %q", entries[1].Subject)
	}
}

// TestOpenQuestionsLimit: a team has at most portal.MaxOpenQuestions
// questions waiting, even when its members ask at once; an answer makes
// room for one more.
func TestOpenQuestionsLimit(t *testing.T) { systems.Run(t, testOpenQuestionsLimit) }

func testOpenQuestionsLimit(t *testing.T, db storetest.System) {
	ctx := context.Background()
	s := open(t, db.NewDSN(t), nil)
	alice := member(t, s, "alice", "team a")
	bob := member(t, s, "bob", "team b")
	var first portal.Clarification
	for i := range portal.MaxOpenQuestions - 3 {
		c, err := s.Ask(ctx, alice, "question")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = c
		}
	}
	// Eight at once for the last three places.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = s.Ask(ctx, alice, "at once") })
	}
	wg.Wait()
	okays := 0
	for _, err := range errs {
		switch portal.ErrorCode(err) {
		case "":
			okays++
		case portal.CodeConflict:
			if !strings.Contains(err.Error(), "20 questions waiting") {
				t.Errorf("the refusal says %q", err)
			}
		default:
			t.Errorf("asking at once: %v", err)
		}
	}
	if okays != 3 {
		t.Errorf("%d of the questions asked at once went in, want 3", okays)
	}
	if _, err := s.Ask(ctx, bob, "another team's"); err != nil {
		t.Errorf("team b is held back by team a's questions: %v", err)
	}
	if _, err := s.AnswerClarification(ctx, root, first.ID, store.Answer{Answer: "See the manual."}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(ctx, alice, "one more"); err != nil {
		t.Errorf("after an answer: %v", err)
	}
	if _, err := s.Ask(ctx, alice, "and another"); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("past the limit again: %v", err)
	}
}

// TestClaimClarification: one staff member claims a waiting question and
// alone answers it; another's claim and answer are refused until the
// claim is given up; an answered question is claimed by nobody.
func TestClaimClarification(t *testing.T) { systems.Run(t, testClaimClarification) }

func testClaimClarification(t *testing.T, db storetest.System) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	s := open(t, db.NewDSN(t), clock.Now)
	a, err := s.CreateAccount(ctx, "alice", "x", portal.RoleContestant)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTeamFor(ctx, a.ID, "Cats", ""); err != nil {
		t.Fatal(err)
	}
	a.TeamID = 1
	q, err := s.Ask(ctx, a, "May we?")
	if err != nil {
		t.Fatal(err)
	}
	ann, bea := portal.Actor{ID: 1, Login: "ann"}, portal.Actor{ID: 2, Login: "bea"}
	if err := s.ClaimClarification(ctx, ann, q.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimClarification(ctx, ann, q.ID, true); err != nil {
		t.Errorf("claiming one's own claim again: %v", err)
	}
	if err := s.ClaimClarification(ctx, bea, q.ID, true); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("a second claim: %v, want a conflict", err)
	}
	if _, err := s.AnswerClarification(ctx, bea, q.ID, store.Answer{Answer: "Yes."}); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("an answer by another: %v, want a conflict", err)
	}
	if err := s.ClaimClarification(ctx, bea, q.ID, false); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("giving up another's claim: %v, want a conflict", err)
	}
	if c, err := s.Clarification(ctx, q.ID); err != nil || c.ClaimedBy != "ann" {
		t.Errorf("claimed by %q (%v), want ann", c.ClaimedBy, err)
	}
	if _, err := s.AnswerClarification(ctx, ann, q.ID, store.Answer{Answer: "Yes."}); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimClarification(ctx, bea, q.ID, true); portal.ErrorCode(err) != portal.CodeConflict {
		t.Errorf("claiming an answered question: %v, want a conflict", err)
	}
	if _, err := s.AnswerClarification(ctx, bea, q.ID, store.Answer{Answer: "Yes, within the rules."}); err != nil {
		t.Errorf("another changing an answered question's answer: %v", err)
	}
}
