package services

import (
	"strings"
	"testing"
)

// TestPrefecturesArePlaceLike: every prefecture's name, which an address
// starts with, is a word a place may be; so is a district made of pieces.
// A name drawn from syllables can be "kumamoto" or "wakayama", and the leak
// scan took two of them in one user's own answer for another user's names.
func TestPrefecturesArePlaceLike(t *testing.T) {
	t.Parallel()
	for _, p := range prefectures {
		if !PlaceLike(strings.ToLower(p)) {
			t.Errorf("prefecture %s is not place-like", p)
		}
	}
	if !PlaceLike("kitayama") || PlaceLike("zzzzzz") {
		t.Errorf("pieces: kitayama %v, zzzzzz %v", PlaceLike("kitayama"), PlaceLike("zzzzzz"))
	}
}
