package portal

import (
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// NameKey is the form in which two team names are compared: two names with
// the same key look alike on the leaderboard, and only one of them may be
// a team's. It follows the idea of Unicode TS #39's skeleton, for which no
// maintained Go package exists (the one on the module proxy was last
// changed in 2021, on Unicode 13's data), with a table of our own limited
// to what passes for Latin:
//
//   - NFKC folds compatibility forms: full-width letters, ligatures,
//     superscripts, mathematical alphabets ("Ｔｅａｍ", "ﬁ", "𝐓");
//   - capital Cyrillic and Greek letters drawn like Latin ones become
//     them (Cyrillic "А", Greek "Α" become "A"), then the name is
//     case-folded ("TEAM" is "team");
//   - small Cyrillic and Greek letters drawn like Latin ones become them
//     (Cyrillic "а", "е", "о", "р", "с"), as do the digits 0 and 1 and
//     the pair "rn", which read as o, l and m;
//   - marks and invisible characters go (accents, zero-width joiners,
//     variation selectors, Hangul fillers), dashes become "-", and runs of
//     spaces one space.
//
// What it misses is what TS #39's full table has beyond Latin look-alikes
// (letters of other scripts that look like each other); names in one
// non-Latin script are compared by case and NFKC only.
func NameKey(name string) string {
	name = cases.Fold().String(strings.Map(lookalike, norm.NFKC.String(name)))
	var b strings.Builder
	space := true // no leading space
	for _, r := range norm.NFD.String(name) {
		switch {
		case invisible(r):
			continue
		case unicode.IsSpace(r):
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		case unicode.Is(unicode.Pd, r):
			r = '-'
		}
		b.WriteRune(lookalike(r))
		space = false
	}
	return strings.ReplaceAll(strings.TrimSuffix(b.String(), " "), "rn", "m")
}

// invisible reports whether r draws nothing of its own: a mark over the
// letter before it, a format character, a variation selector or another
// code point Unicode says to ignore by default.
func invisible(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Cc, unicode.Variation_Selector,
		unicode.Other_Default_Ignorable_Code_Point)
}

// lookalike returns the Latin letter a Cyrillic or Greek one is drawn as,
// in the same case, and l and o for the digits 1 and 0; any other rune as
// it is.
func lookalike(r rune) rune {
	switch r {
	case 'А', 'Α':
		return 'A'
	case 'В', 'Β':
		return 'B'
	case 'С':
		return 'C'
	case 'Е', 'Ε':
		return 'E'
	case 'Н', 'Η':
		return 'H'
	case 'І', 'Ι':
		return 'I'
	case 'Ј':
		return 'J'
	case 'К', 'Κ':
		return 'K'
	case 'М', 'Μ':
		return 'M'
	case 'Ν':
		return 'N'
	case 'О', 'Ο':
		return 'O'
	case 'Р', 'Ρ':
		return 'P'
	case 'Ԛ':
		return 'Q'
	case 'Ѕ':
		return 'S'
	case 'Т', 'Τ':
		return 'T'
	case 'Ԝ':
		return 'W'
	case 'Х', 'Χ':
		return 'X'
	case 'У', 'Υ':
		return 'Y'
	case 'Ζ':
		return 'Z'
	}
	return lookalikeSmall(r)
}

// lookalikeSmall is lookalike for small letters and digits.
func lookalikeSmall(r rune) rune {
	switch r {
	case 'а', 'α':
		return 'a'
	case 'ь':
		return 'b'
	case 'с':
		return 'c'
	case 'ԁ':
		return 'd'
	case 'е':
		return 'e'
	case 'һ':
		return 'h'
	case 'і', 'ι':
		return 'i'
	case 'ј':
		return 'j'
	case 'κ':
		return 'k'
	case 'ӏ', '1':
		return 'l'
	case 'о', 'ο', '0':
		return 'o'
	case 'р', 'ρ':
		return 'p'
	case 'ԛ':
		return 'q'
	case 'ѕ':
		return 's'
	case 'υ':
		return 'u'
	case 'ν':
		return 'v'
	case 'ԝ':
		return 'w'
	case 'х', 'χ':
		return 'x'
	case 'у':
		return 'y'
	}
	return r
}
