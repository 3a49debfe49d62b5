package portal

import "testing"

// TestNameKeyFoldsLookAlikes: names that pass for each other on the board
// share a key; names that read differently do not.
func TestNameKeyFoldsLookAlikes(t *testing.T) {
	same := [][2]string{
		{"Team Rocket", "team rocket"},
		{"Team Rocket", "TEAM ROCKET"},
		{"Team Rocket", "\u0422\u0435\u0430m R\u043e\u0441k\u0435t"}, // Cyrillic Т е а о с е
		{"Team Rocket", "Τeam Rοcket"},                               // Greek Τ ο
		{"Team Rocket", "Team Ro\u200bcket"},                         // zero-width space
		{"Team Rocket", "Team  Rocket "},
		{"Team Rocket", "Ｔｅａｍ Ｒｏｃｋｅｔ"}, // full width
		{"Team Rocket", "Team Rocket\ufe0f"},
		{"Team Rocket", "Team Rockét"},
		{"Team Rocket", "Team Rocke\u0301t"},
		{"Team Rocket", "Team Rocket\u3164"}, // Hangul filler
		{"modern", "rnodern"},
		{"l33t", "133t"},
		{"ozone", "0zone"},
		{"A-Team", "A–Team"}, // en dash
		{"ﬁsh", "fish"},
	}
	for _, p := range same {
		if a, b := NameKey(p[0]), NameKey(p[1]); a != b {
			t.Errorf("%q and %q: keys %q and %q, want one", p[0], p[1], a, b)
		}
	}
	differ := [][2]string{
		{"Team Rocket", "Team Rockets"},
		{"TeamRocket", "Team Rocket"},
		{"Команда", "Команды"},
		{"alpha", "beta"},
	}
	for _, p := range differ {
		if a, b := NameKey(p[0]), NameKey(p[1]); a == b {
			t.Errorf("%q and %q share the key %q", p[0], p[1], a)
		}
	}
}
