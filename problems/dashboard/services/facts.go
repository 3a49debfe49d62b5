package services

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/kit/datagen"
)

// Facts are the answers of postal, surname, givenname and weather under one
// secret: pure functions of their parameters (and, for weather, of the period)
// and of the secret, so that the benchmarker checks what the app relays without
// asking the services again. The code is public, the secret is not: it never
// leaves the benchmarker's process and changes from run to run, so that no app
// can compute an answer instead of asking the services for it. The same secret
// gives the same answers on every machine.
//
// Every draw comes from a pseudo-random function of the secret: AES-256, keyed
// by a hash of the secret, of a block that names what is drawn (a stream kind
// and a number). Knowing some answers tells nothing of the others, but for
// what they share by design (codes that share their first digits share the
// start of their address): not the next period's forecast, nor the address of
// a code never asked for.
//
// A Facts is never modified after NewFacts: it is safe for concurrent use.
type Facts struct {
	prf                  cipher.Block
	surnames, givenNames []string // sorted, unique
}

// The stream kinds of the facts, the first half of every block drawn. Changing
// one changes every answer of its kind.
const (
	kindSurname    = 1
	kindGivenName  = 2
	kindCity       = 3
	kindDistrict   = 4
	kindBlock      = 5
	kindPrefecture = 6
	kindWeather    = 7
)

// tagFacts keeps the facts' key apart from the secret's other use, the
// signatures of security.go.
const tagFacts = "facts|"

// NewFacts returns the facts under secret, any number of bytes (Start draws
// 32 from crypto/rand for each run). It builds the name lists: about 2 ms.
func NewFacts(secret []byte) *Facts {
	key := sha256.Sum256(append([]byte(tagFacts), secret...))
	prf, err := aes.NewCipher(key[:])
	if err != nil {
		panic(err) // cannot fail: AES takes any 32-byte key
	}
	f := &Facts{prf: prf}
	f.surnames = f.makeNames(kindSurname, surnameEndings)
	f.givenNames = f.makeNames(kindGivenName, givenNameEndings)
	return f
}

// draw returns the pseudo-random function of (kind, n) under the secret, as two
// words.
func (f *Facts) draw(kind, n uint64) (uint64, uint64) {
	var b [aes.BlockSize]byte
	binary.BigEndian.PutUint64(b[:8], kind)
	binary.BigEndian.PutUint64(b[8:], n)
	f.prf.Encrypt(b[:], b[:])
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}

// stream returns the stream of item n of kind: a datagen stream whose seed and
// id are both drawn, so that the whole state of its generator is secret.
func (f *Facts) stream(kind, n uint64) datagen.Gen {
	seed, id := f.draw(kind, n)
	return datagen.Stream(seed, kind, id)
}

// prefectures are the 47 prefectures of Japan, romanized, in their usual order
// (north to south).
var prefectures = [47]string{
	"Hokkaido", "Aomori", "Iwate", "Miyagi", "Akita", "Yamagata", "Fukushima", "Ibaraki", "Tochigi", "Gunma",
	"Saitama", "Chiba", "Tokyo", "Kanagawa", "Niigata", "Toyama", "Ishikawa", "Fukui", "Yamanashi", "Nagano",
	"Gifu", "Shizuoka", "Aichi", "Mie", "Shiga", "Kyoto", "Osaka", "Hyogo", "Nara", "Wakayama", "Tottori",
	"Shimane", "Okayama", "Hiroshima", "Yamaguchi", "Tokushima", "Kagawa", "Ehime", "Kochi", "Fukuoka", "Saga",
	"Nagasaki", "Kumamoto", "Oita", "Miyazaki", "Kagoshima", "Okinawa",
}

// placeParts are the pieces that generated city and district names are made of.
var placeParts = []string{
	"kita", "minami", "higashi", "nishi", "naka", "kami", "shimo", "saku", "ra", "yama", "kawa", "shima", "ta",
	"no", "hara", "mori", "oka", "sawa", "da", "hama", "mi", "na", "tsu", "matsu", "take", "ishi", "iwa", "hashi",
	"ike", "numa", "ura", "sato", "hiro", "aki", "fuji", "tama", "kuro", "shiro", "ao", "asa", "yoshi", "chi",
	"wa", "ga", "se", "to", "ki", "ku",
}

var (
	citySuffixes     = []string{"-shi", "-shi", "-shi", "-machi", "-cho", "-mura"}
	districtSuffixes = []string{"", "", "dai", "gaoka", "cho", "machi"}
)

// Address returns the address of a postal code of 7 digits, and false for
// anything else. Codes that share their first 2 digits share a prefecture,
// their first 3 a city, their first 5 a district, as real ones roughly do.
func (f *Facts) Address(code string) (string, bool) {
	if !consistsOf(code, 7, 7, digits) {
		return "", false
	}
	n := func(k int) uint64 { v, _ := strconv.ParseUint(code[:k], 10, 64); return v }
	p, _ := f.draw(kindPrefecture, n(2))
	pref := prefectures[p%uint64(len(prefectures))]

	g := f.stream(kindCity, n(3))
	city := capitalize(placeName(g, 2+g.Intn(2))) + g.Pick(citySuffixes)

	g = f.stream(kindDistrict, n(5))
	district := capitalize(placeName(g, 2) + g.Pick(districtSuffixes))

	g = f.stream(kindBlock, n(7))
	return pref + ", " + city + ", " + district + " " + strconv.Itoa(1+g.Intn(9)) + "-" + strconv.Itoa(1+g.Intn(30)), true
}

// PlaceLike reports whether word is a prefecture's name or can be cut into
// the pieces place names are made of, so that an address may carry it as one
// of its words. A name drawn from syllables can be a prefecture's too
// ("kumamoto").
func PlaceLike(word string) bool {
	if slices.ContainsFunc(prefectures[:], func(p string) bool { return strings.EqualFold(p, word) }) {
		return true
	}
	can := make([]bool, len(word)+1) // can[i]: word[:i] is made of pieces
	can[0] = true
	for i := range len(word) {
		if !can[i] {
			continue
		}
		for _, part := range placeParts {
			if strings.HasPrefix(word[i:], part) {
				can[i+len(part)] = true
			}
		}
	}
	return can[len(word)]
}

// placeName joins parts pieces of placeParts, never the same twice in a row.
func placeName(g datagen.Gen, parts int) string {
	var b strings.Builder
	prev := ""
	for range parts {
		p := g.Pick(placeParts)
		for p == prev {
			p = g.Pick(placeParts)
		}
		b.WriteString(p)
		prev = p
	}
	return b.String()
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// MaxNames is the most names surname and givenname return.
const MaxNames = 30

// namesPerList is how many names Surnames and GivenNames hold.
const namesPerList = 3000

// commonSyllables are those the benchmarker's prefixes are made of (see the
// dashboard data package); names mostly start with them, so that most prefixes
// find names.
var commonSyllables = []string{"a", "ka", "ki", "ko", "sa", "shi", "su", "ta", "to", "na", "no", "ha", "hi", "ma",
	"mi", "mo", "ya", "yo", "ra", "ri", "wa", "i", "u", "e", "o", "ku", "se", "te", "ni", "fu", "mu", "ro"}

// otherSyllables are rarer in names.
var otherSyllables = []string{"ke", "so", "chi", "tsu", "nu", "ne", "he", "ho", "me", "yu", "ru", "re", "ga",
	"gi", "gu", "ge", "go", "za", "ji", "zu", "ze", "zo", "da", "de", "do", "ba", "bi", "bu", "be", "bo"}

// The endings of the two kinds of names, "" meaning none.
var (
	surnameEndings   = []string{"", "", "da", "ta", "moto", "mura", "kawa", "yama", "no", "hara", "shima", "zaki", "gawa", "ki"}
	givenNameEndings = []string{"", "", "ko", "mi", "ka", "ro", "ta", "ki", "ya", "na", "to", "suke", "ji", "n", "e"}
)

// Surnames returns every surname the surname service knows, sorted, each unique
// and of letters a-z: a copy.
func (f *Facts) Surnames() []string { return slices.Clone(f.surnames) }

// GivenNames returns every given name the givenname service knows, sorted, each
// unique and of letters a-z: a copy.
func (f *Facts) GivenNames() []string { return slices.Clone(f.givenNames) }

// SearchSurnames returns the surname service's answer for prefix:
// SearchNames of Surnames.
func (f *Facts) SearchSurnames(prefix string) []string { return SearchNames(f.surnames, prefix) }

// SearchGivenNames returns the givenname service's answer for prefix:
// SearchNames of GivenNames.
func (f *Facts) SearchGivenNames(prefix string) []string { return SearchNames(f.givenNames, prefix) }

// makeNames draws namesPerList distinct names of two or three syllables and one
// of endings.
func (f *Facts) makeNames(kind uint64, endings []string) []string {
	g := f.stream(kind, 0)
	syllable := func() string {
		if g.Intn(10) < 7 {
			return g.Pick(commonSyllables)
		}
		return g.Pick(otherSyllables)
	}
	seen := make(map[string]bool, namesPerList)
	names := make([]string, 0, namesPerList)
	for len(names) < namesPerList {
		name := syllable() + syllable()
		if g.Intn(2) == 0 {
			name += syllable()
		}
		name += g.Pick(endings)
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// SearchNames returns, in order, the first MaxNames of the sorted names that
// start with prefix (an empty list, not nil, when none does).
func SearchNames(names []string, prefix string) []string {
	i, _ := slices.BinarySearch(names, prefix)
	out := []string{}
	for ; i < len(names) && len(out) < MaxNames && strings.HasPrefix(names[i], prefix); i++ {
		out = append(out, names[i])
	}
	return out
}

// WeatherPeriod is how long a forecast lasts; periods start at the Unix times
// that are multiples of it.
const WeatherPeriod = 3 * time.Second

// WeatherPeriodAt returns the start of the weather period that holds t, in UTC.
func WeatherPeriodAt(t time.Time) time.Time {
	ms, p := t.UnixMilli(), WeatherPeriod.Milliseconds()
	start := ms - ms%p
	if ms%p < 0 { // before 1970, % keeps the sign: round down, not towards zero
		start -= p
	}
	return time.UnixMilli(start).UTC()
}

// forecasts are the weathers a forecast may be.
var forecasts = []string{"sunny", "cloudy", "rain", "snow", "storm", "fog"}

// The range of temperatures, in degrees Celsius.
const (
	minTemperature = -10
	maxTemperature = 35
)

// Forecast returns the forecast of location for the weather period that holds
// period (normally a period's start): a draw of a hash of the location and the
// period.
func (f *Facts) Forecast(location string, period time.Time) (forecast string, temperature int) {
	h := fnv.New64a()
	h.Write([]byte(location))
	x, _ := f.draw(kindWeather, h.Sum64()^datagen.Mix(uint64(WeatherPeriodAt(period).UnixMilli())))
	return forecasts[x%uint64(len(forecasts))], minTemperature + int((x>>32)%(maxTemperature-minTemperature+1))
}

// Characters of the parameters.
const (
	digits   = "0123456789"
	letters  = "abcdefghijklmnopqrstuvwxyz"
	hexChars = "0123456789abcdef"
	reqChars = letters + digits
)

// consistsOf reports whether s has lo to hi bytes, each one of chars.
func consistsOf(s string, lo, hi int, chars string) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(chars, s[i]) < 0 {
			return false
		}
	}
	return true
}
