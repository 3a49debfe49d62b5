package main

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The reference's checks (../../webapp/go/main.go), which the tuned app does by hand: they must agree on every
// input.
var (
	refTenantName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,61}[a-z0-9]$`)
	refID         = regexp.MustCompile(`^[1-9][0-9]{0,17}$`)
	refNumber     = regexp.MustCompile(`^[0-9]{1,18}$`)
	refScore      = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})$`)
)

func refParseScores(body []byte) ([]csvRow, bool) {
	if !utf8.Valid(body) {
		return nil, false
	}
	lines := strings.Split(string(body), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil, false
	}
	for i, line := range lines {
		lines[i] = strings.TrimSuffix(line, "\r")
	}
	if lines[0] != "player_id,score" {
		return nil, false
	}
	rows := []csvRow{}
	for _, line := range lines[1:] {
		id, score, ok := strings.Cut(line, ",")
		if !ok || !refID.MatchString(id) || !refScore.MatchString(score) {
			return nil, false
		}
		r := csvRow{}
		r.playerID, _ = strconv.ParseInt(id, 10, 64)
		r.score, _ = strconv.ParseInt(score, 10, 64)
		rows = append(rows, r)
	}
	return rows, true
}

// randomText draws a string from pieces that sit on the edges of the formats.
func randomText(rng *rand.Rand, pieces []string, n int) string {
	var b strings.Builder
	for range rng.IntN(n + 1) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

var numberPieces = []string{"0", "1", "9", "5", "00", "123456789", "999999999", "1000000000", "-", "+", " ", "a", "\x00", "é", "\xff", ",", "\r", "\n"}

func TestParsersAgreeWithTheReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(name, s string, got, want bool) {
		if got != want {
			t.Errorf("%s(%q) = %v, the reference says %v", name, s, got, want)
		}
	}
	fixed := []string{"", "0", "1", "01", "10", strings.Repeat("9", 18), strings.Repeat("9", 19), "1" + strings.Repeat("0", 17),
		"999999999", "1000000000", "-1", "+1", " 1", "1 ", "1\n", "١"}
	var inputs []string
	inputs = append(inputs, fixed...)
	for range 20000 {
		inputs = append(inputs, randomText(rng, numberPieces, 6))
	}
	for _, s := range inputs {
		_, ok := parseID(s)
		check("parseID", s, ok, refID.MatchString(s))
		_, ok = parseNumber(s)
		check("parseNumber", s, ok, refNumber.MatchString(s))
		_, ok = parseScore(s)
		check("parseScore", s, ok, refScore.MatchString(s))
		if v, ok := parseNumber(s); ok {
			if want, _ := strconv.ParseInt(s, 10, 64); v != want {
				t.Errorf("parseNumber(%q) = %d, want %d", s, v, want)
			}
		}
	}
	namePieces := []string{"a", "z", "m", "0", "9", "-", "A", "_", ".", "é", "--", "ab"}
	names := []string{"", "a", "ab", "a-", "-a", "a-b", "a1", "1a", "admin", strings.Repeat("a", 63), strings.Repeat("a", 64),
		"a" + strings.Repeat("-", 61) + "b", "a" + strings.Repeat("-", 62) + "b"}
	for range 20000 {
		names = append(names, randomText(rng, namePieces, 40))
	}
	for _, s := range names {
		check("validTenantName", s, validTenantName(s), refTenantName.MatchString(s))
	}
}

func TestParseScoresAgreesWithTheReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	linePieces := []string{"player_id,score", "player_id", ",score", "12,34", "12,0", "0,1", "12,01", "99,999999999", "99,1000000000",
		"1,2,3", ",", "12", "", "\r", "\n", "\r\n", " ", "\xff", "é", "12,-1", "\"12\",3"}
	bodies := []string{"", "\n", "\r\n", "player_id,score", "player_id,score\n", "player_id,score\r\n", "player_id,score\n\n",
		"player_id,score\n1,2", "player_id,score\n1,2\n", "player_id,score\n1,2\n\n", "player_id,score\r\n1,2\r\n", "player_id,score\n1,2\r",
		"player_id,score\n\r\n", "\nplayer_id,score\n", "player_id,score\n1,2\r\r\n"}
	for range 50000 {
		b := randomText(rng, linePieces, 8)
		if rng.IntN(2) == 0 {
			b = "player_id,score\n" + b
		}
		bodies = append(bodies, b)
	}
	for _, b := range bodies {
		got, ok := parseScores([]byte(b))
		want, wantOK := refParseScores([]byte(b))
		if ok != wantOK || (ok && !slices.Equal(got, want)) {
			t.Errorf("parseScores(%q) = %v %v, the reference says %v %v", b, got, ok, want, wantOK)
		}
	}
}
