package services

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tunecon/tunecon/kit/datagen"
)

// The answers of postal, surname, givenname and weather are pure functions of
// their parameters (and, for weather, of the period), so that the benchmarker
// checks what the app relays without asking the services again. Everything here
// comes from fixed seeds: the same on every machine, every run and every
// Config.

// Fixed seeds and stream kinds of the generated facts. Changing one changes
// every answer.
const (
	factSeed      = 0x64617368626f6172 // "dashboar"
	kindSurname   = 1
	kindGivenName = 2
	kindCity      = 3
	kindDistrict  = 4
	kindBlock     = 5
)

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
func Address(code string) (string, bool) {
	if !consistsOf(code, 7, 7, digits) {
		return "", false
	}
	n := func(k int) uint64 { v, _ := strconv.ParseUint(code[:k], 10, 64); return v }
	pref := prefectures[datagen.Mix(factSeed^n(2))%uint64(len(prefectures))]

	g := datagen.Stream(factSeed, kindCity, n(3))
	city := capitalize(placeName(g, 2+g.Intn(2))) + g.Pick(citySuffixes)

	g = datagen.Stream(factSeed, kindDistrict, n(5))
	district := capitalize(placeName(g, 2) + g.Pick(districtSuffixes))

	g = datagen.Stream(factSeed, kindBlock, n(7))
	return pref + ", " + city + ", " + district + " " + strconv.Itoa(1+g.Intn(9)) + "-" + strconv.Itoa(1+g.Intn(30)), true
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

// The name lists, built on first use. They are never modified after: the
// exported functions hand out copies.
var (
	surnames   = sync.OnceValue(func() []string { return makeNames(kindSurname, surnameEndings) })
	givenNames = sync.OnceValue(func() []string { return makeNames(kindGivenName, givenNameEndings) })
)

// Surnames returns every surname the surname service knows, sorted, each unique
// and of letters a-z.
func Surnames() []string { return slices.Clone(surnames()) }

// GivenNames returns every given name the givenname service knows, sorted, each
// unique and of letters a-z.
func GivenNames() []string { return slices.Clone(givenNames()) }

// makeNames draws namesPerList distinct names of two or three syllables and one
// of endings.
func makeNames(kind uint64, endings []string) []string {
	g := datagen.Stream(factSeed, kind, 0)
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
// period (normally a period's start): a hash of the location and the period.
func Forecast(location string, period time.Time) (forecast string, temperature int) {
	h := fnv.New64a()
	h.Write([]byte(location))
	x := datagen.Mix(h.Sum64() ^ datagen.Mix(uint64(WeatherPeriodAt(period).UnixMilli())))
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
