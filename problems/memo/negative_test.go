package memo

import (
	"math/rand/v2"
	"testing"
)

// TestWrongValues: a wrong password is never the right one, and every kind
// comes up; a changed id differs in one character of its kind, and a
// made-up one has the shape of the real one.
func TestWrongValues(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	kinds := map[string]bool{}
	for range 2000 {
		right := madeUp(rnd, "pw2k9xq4ma")
		kind, wrong := wrongPassword(rnd, right, func() string { return madeUp(rnd, "abcdefgh23") })
		kinds[kind] = true
		if wrong == right {
			t.Fatalf("%s: the wrong password %q is the right one", kind, wrong)
		}
	}
	if len(kinds) != 8 {
		t.Errorf("kinds of wrong passwords drawn: %v, want 8", kinds)
	}
	for _, id := range []string{"0123456789abcdef0123456789abcdef", "Zm9vYmFy-_x.sig", "42"} {
		for range 200 {
			changed, made := changeOne(rnd, id), madeUp(rnd, id)
			diff := 0
			for i := range len(id) {
				if changed[i] != id[i] {
					diff++
					if alphabetOf(id, changed[i]) != alphabetOf(id, id[i]) {
						t.Errorf("%q changed into %q: another kind of character", id, changed)
					}
				}
				if alphabetOf(id, made[i]) != alphabetOf(id, id[i]) {
					t.Errorf("%q made up as %q: another shape", id, made)
				}
			}
			if diff != 1 || len(changed) != len(id) || len(made) != len(id) {
				t.Errorf("%q changed into %q (%d characters differ), made up as %q", id, changed, diff, made)
			}
		}
	}
}
