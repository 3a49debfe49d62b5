package memo

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tunecon/tunecon/problems/memo/data"
)

// TestSettle: a memo whose post failed is settled by its author's /mypage
// when it is listed there (under an id the rule allows), stays unsure when
// it is not, and its author is lent again only once nothing is unsure.
func TestSettle(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	newUser := func() (*model, *user) {
		m := newModel(newInitial(data.Config{Seed: 1, Users: 3, Memos: 20}))
		return m, m.borrow(rand.New(rand.NewPCG(1, 2)))
	}
	post := func(m *model, u *user, title string, at time.Time) *memo {
		p := m.begin(u, false, title, "# "+title, at)
		m.failed(u, p)
		return p
	}

	t.Run("listed", func(t *testing.T) {
		m, u := newUser()
		p := post(m, u, "a 1", t0)
		if id := m.settle(u, []entry{{id: 21, title: "a 1"}}, t0.Add(2*time.Second)); id != 0 {
			t.Fatalf("settle refused id %d", id)
		}
		if p.id != 21 || p.failed || u.unsure || m.lookup(21) == nil {
			t.Fatalf("not settled: id %d, failed %v, user unsure %v", p.id, p.failed, u.unsure)
		}
		if !p.certain(t0.Add(3*time.Second)) || p.certain(t0.Add(2500*time.Millisecond)) {
			t.Fatal("a settled memo must be certain from a second after the page that showed it, not before")
		}
	})
	t.Run("not listed", func(t *testing.T) {
		m, u := newUser()
		p := post(m, u, "a 1", t0)
		m.settle(u, []entry{{id: 7, title: "an initial memo"}}, t0.Add(2*time.Second))
		if p.id != 0 || !p.failed || !u.unsure {
			t.Fatalf("settled without being listed: id %d, failed %v, user unsure %v", p.id, p.failed, u.unsure)
		}
		m.giveBack(u)
		if len(m.free) != 2 {
			t.Fatal("a user with an unsure memo was lent again")
		}
	})
	t.Run("an id below one acknowledged before", func(t *testing.T) {
		m, u := newUser()
		q := m.begin(u, false, "first", "# first", t0)
		if !m.stored(q, 30, t0.Add(time.Second)) {
			t.Fatal("stored refused id 30")
		}
		post(m, u, "second", t0.Add(2*time.Second))
		if id := m.settle(u, []entry{{id: 29, title: "second"}}, t0.Add(4*time.Second)); id != 29 {
			t.Fatalf("settle took id 29, below memo 30 acknowledged before the post; returned %d", id)
		}
		if !u.unsure {
			t.Fatal("the user is sure after a refused settlement")
		}
	})
}
