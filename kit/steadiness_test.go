package kit

import (
	"strings"
	"testing"
	"time"
)

// TestRandomCycle: the memory work's chain visits every word once before
// it comes back to the first, so no walk stays in a small loop the caches
// hold.
func TestRandomCycle(t *testing.T) {
	const n = 1000
	c := randomCycle(n, 7)
	seen := make([]bool, n)
	at := uint32(0)
	for i := range n {
		if seen[at] {
			t.Fatalf("word %d came back after %d steps of %d", at, i, n)
		}
		seen[at] = true
		at = c[at]
	}
	if at != 0 {
		t.Errorf("after %d steps the walk is at %d, not back at 0", n, at)
	}
}

// TestWorkRates: both kinds of work give a rate for each set of CPUs; an
// unknown kind, a bad list and a CPU the machine lacks are errors, and the
// work on the other sets still ends.
func TestWorkRates(t *testing.T) {
	for _, kind := range []string{Compute, Memory} {
		rates, err := WorkRates(kind, []string{"", ""}, 100*time.Millisecond)
		if err != nil || len(rates) != 2 || rates[0] <= 0 || rates[1] <= 0 {
			t.Errorf("WorkRates(%s) = %v, %v", kind, rates, err)
		}
	}
	for _, c := range []struct {
		kind string
		sets []string
		want string
	}{
		{"disk", []string{""}, `no kind of work "disk"`},
		{Compute, []string{"x"}, "not a CPU number"},
		{Compute, []string{"", "1000"}, `on CPUs "1000"`},
	} {
		if _, err := WorkRates(c.kind, c.sets, 10*time.Millisecond); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WorkRates(%s, %q) = %v; want an error with %q", c.kind, c.sets, err, c.want)
		}
	}
}
