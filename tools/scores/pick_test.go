package main

import (
	"slices"
	"testing"
)

// TestPick: -langs keeps the problem's order, empty means every language,
// and a language the problem lacks is refused, naming those it has.
func TestPick(t *testing.T) {
	have := []string{"go", "python", "rust"}
	for _, c := range []struct {
		list string
		want []string
	}{
		{"", have},
		{"rust,go", []string{"go", "rust"}},
		{"python", []string{"python"}},
	} {
		if got, err := pick(have, c.list); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("pick(%q) = %v, %v; want %v", c.list, got, err, c.want)
		}
	}
	if _, err := pick(have, "go,cobol"); err == nil {
		t.Error("pick(go,cobol): no error for a language the problem lacks")
	}
}
