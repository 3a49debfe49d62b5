package memo

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/memo/data"
)

// The privacy scan (MANUAL: "What every answer is scanned for"): every answer
// the app gives any agent of the run, whatever its status, is searched for
// the private memos its viewer may not see, wherever an app might put them:
// in hidden elements, attributes, comments, scripts, an error page. A private
// memo is recognised by three marks, each chosen so that no correct page can
// carry it by chance:
//
//   - its time, for an initial memo: the initial memos' times are all
//     different and show nowhere but beside their memo;
//   - its title, when no other memo has it and no memo's content shows it
//     (a title of four words or more, or a run memo's, which ends with the
//     number of the post);
//   - passages of its content: ten words or more drawn at random by the
//     generator, found again whatever the markup around them (the raw
//     Markdown and its rendering read the same once reduced to letters).
//
// The marks of the initial memos are found once per process; the run's are
// added as the benchmarker posts.

// minTitleSpaces: a title is a mark only with four words or more (three
// spaces), so that no chance phrase of a page matches one.
const minTitleSpaces = 3

// passageWords is how many words drawn at random a passage holds: enough
// that no other text of the run repeats one by chance.
const passageWords = 10

// secret names one private memo for the scan: its author, its title, and
// its id (0 for a run memo, whose id may not be known yet).
type secret struct {
	id     int64
	author string
	title  string
}

// describe names the memo in a message.
func (s *secret) describe() string {
	if s.id > 0 {
		return "the private memo " + itoa(s.id) + " of " + s.author
	}
	return "the private memo " + quote(s.title) + " of " + s.author
}

// marks is what the scan looks for: titles, times and passages, each
// mapped to its memo.
type marks struct {
	titles   map[string]*secret
	times    map[string]*secret
	passages *passageIndex
}

func newMarks(bits uint) *marks {
	return &marks{titles: map[string]*secret{}, times: map[string]*secret{}, passages: newPassageIndex(bits)}
}

// initialMarks finds the marks of the initial private memos: every memo's
// content is generated once here, on every core (a second of CPU), for the
// passages of the private ones and to leave out the titles that some
// content shows.
func initialMarks(in *initial) *marks {
	mk := newMarks(23)
	count := map[string]int{}
	for _, d := range in.memos {
		count[d.Title]++
	}
	titles := map[string]*secret{} // the titles that may be marks
	secrets := make([]*secret, len(in.memos))
	for i, d := range in.memos {
		if !d.Private {
			continue
		}
		s := &secret{id: d.ID, author: in.names[d.UserID], title: d.Title}
		secrets[i] = s
		mk.times[d.CreatedAt.Format(data.TimeFormat)] = s
		if count[d.Title] == 1 && strings.Count(d.Title, " ") >= minTitleSpaces {
			titles[d.Title] = s
		}
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	shown := make([][]string, workers) // titles some content shows, by worker
	found := make([][][]byte, len(in.memos))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(in.memos); i += workers {
				_, body, _ := strings.Cut(in.cfg.Memo(int64(i+1)).Content, "\n")
				eachPiece([]byte(body), func(p []byte) {
					if titles[string(p)] != nil {
						shown[w] = append(shown[w], string(p))
					}
				})
				if secrets[i] != nil {
					found[i] = passages(body)
				}
			}
		})
	}
	wg.Wait()
	for _, ts := range shown {
		for _, t := range ts {
			delete(titles, t)
		}
	}
	mk.titles = titles
	for i, ps := range found {
		for _, p := range ps {
			mk.passages.add(p, secrets[i])
		}
	}
	return mk
}

// runMarks are the marks of the memos the run writes, and the initial
// titles a run memo's content shows (no longer marks from then on).
type runMarks struct {
	mu     sync.RWMutex
	marks  *marks
	killed map[string]bool
}

func newRunMarks() *runMarks { return &runMarks{marks: newMarks(18), killed: map[string]bool{}} }

// posting records a memo about to be posted by author: its content's
// pieces stop being marks (a correct page may show them from now on), and
// a private memo's title and passages become marks.
func (rm *runMarks) posting(author, title, content string, private bool, initial *marks) {
	var killed []string
	eachPiece([]byte(content), func(p []byte) {
		if initial.titles[string(p)] != nil {
			killed = append(killed, string(p))
		}
	})
	var ps [][]byte
	if private {
		ps = passages(content)
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	for _, k := range killed {
		rm.killed[k] = true
	}
	if private {
		s := &secret{author: author, title: title}
		rm.marks.titles[title] = s
		for _, p := range ps {
			rm.marks.passages.add(p, s)
		}
	}
}

// scan looks for the private memos viewer ("" signed out) may not see in
// one answer, in each of its readings (its body and header values, as sent
// and decoded; see engine.Response.Readings), and returns the first found
// as a critical error.
func (m *model) scan(res *engine.Response, viewer string) error {
	for _, text := range res.Readings() {
		if s, what := m.scanText(text, viewer); s != nil {
			to := "a signed-out visitor"
			if viewer != "" {
				to = viewer
			}
			return res.Criticalf("private-leak", "the answer (status %d) carries %s of %s, which no one but its author may see; it was served to %s",
				res.StatusCode, what, s.describe(), to)
		}
	}
	return nil
}

// scanText looks for the private memos viewer may not see in one text: its
// time, its title, a passage of its content, or a link to it. It returns
// the first found and what of it was found.
func (m *model) scanText(text []byte, viewer string) (*secret, string) {
	if s := m.in.marks.findTime(text, viewer); s != nil {
		return s, "the time"
	}
	if s := m.findLink(text, viewer); s != nil {
		return s, "a link to the page"
	}
	run := m.runMarks
	run.mu.RLock()
	defer run.mu.RUnlock()
	var leak *secret
	eachPiece(text, func(p []byte) {
		if leak != nil {
			return
		}
		if s := m.in.marks.titles[string(p)]; s != nil && s.author != viewer && !run.killed[s.title] {
			leak = s
		} else if s := run.marks.titles[string(p)]; s != nil && s.author != viewer {
			leak = s
		}
	})
	if leak != nil {
		return leak, "the title"
	}
	buf := letterBufs.Get().(*[]byte)
	defer letterBufs.Put(buf)
	*buf = appendLetters((*buf)[:0], text)
	for _, idx := range []*passageIndex{m.in.marks.passages, run.marks.passages} {
		if s := idx.find(*buf, viewer); s != nil {
			return s, "a passage of the content"
		}
	}
	return nil, ""
}

// findLink returns the private memo, not viewer's, that text links to as
// /memos/ID (its id is no one's business but its author's); nil if none.
func (m *model) findLink(text []byte, viewer string) *secret {
	const prefix = "/memos/"
	for i := 0; ; {
		j := bytes.Index(text[i:], []byte(prefix))
		if j < 0 {
			return nil
		}
		i += j + len(prefix)
		k := i
		for k < len(text) && k-i < 12 && '0' <= text[k] && text[k] <= '9' {
			k++
		}
		if k == i || k < len(text) && '0' <= text[k] && text[k] <= '9' {
			continue
		}
		id, _ := strconv.ParseInt(string(text[i:k]), 10, 64)
		if author, private := m.privateAuthor(id); private && author != viewer {
			return &secret{id: id, author: author}
		}
	}
}

// findTime returns the initial private memo whose time text shows (see
// eachTime), unless viewer wrote it; nil if none.
func (mk *marks) findTime(text []byte, viewer string) *secret {
	var found *secret
	eachTime(text, func(t []byte) bool {
		if s := mk.times[string(t)]; s != nil && s.author != viewer {
			found = s
		}
		return found == nil
	})
	return found
}

// eachTime calls f with every time text shows, as pages write it
// ("2006-01-02 15:04:05") or in ISO 8601 ("2006-01-02T15:04:05"), written
// as pages write it, until f returns false.
func eachTime(text []byte, f func(t []byte) bool) {
	const n = len(data.TimeFormat)
	var key [n]byte
	for i := 0; i+n <= len(text); {
		j := bytes.IndexByte(text[i:], ':')
		if j < 0 {
			return
		}
		k := i + j - 13 // the first ':' is the 14th byte of a time
		if k >= 0 && k+n <= len(text) && text[k+4] == '-' && text[k+7] == '-' && (text[k+10] == ' ' || text[k+10] == 'T') &&
			text[k+16] == ':' {
			copy(key[:], text[k:k+n])
			key[10] = ' '
			if !f(key[:]) {
				return
			}
		}
		i += j + 1
	}
}

// eachPiece calls f with every piece of b that has minTitleSpaces spaces or
// more: a piece is a run of letters, digits, spaces and non-ASCII bytes, so
// that a title is one piece whatever markup, quotes or punctuation surround
// it (a text node, an attribute's value, a comment, raw Markdown, JSON).
func eachPiece(b []byte, f func(p []byte)) {
	start, spaces := 0, 0
	for i := 0; i <= len(b); i++ {
		if i < len(b) && byteClass[b[i]] != 0 {
			if b[i] == ' ' {
				spaces++
			}
			continue
		}
		if spaces >= minTitleSpaces {
			if p := bytes.Trim(b[start:i], " "); bytes.Count(p, []byte{' '}) >= minTitleSpaces {
				f(p)
			}
		}
		start, spaces = i+1, 0
	}
}

// byteClass sorts bytes for the scan: 0 ends a piece and reads as nothing;
// classSpace, classLetter (a letter in lower case, a digit or a non-ASCII
// byte) and classUpper go in a piece, the last two read as letters.
var byteClass = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c == ' ':
			t[c] = classSpace
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c >= 0x80:
			t[c] = classLetter
		case 'A' <= c && c <= 'Z':
			t[c] = classUpper
		}
	}
	return t
}()

const (
	classSpace = 1 + iota
	classLetter
	classUpper
)

var letterBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// appendLetters appends what text of b reads once reduced to letters: the
// letters (in lower case), digits and non-ASCII bytes of its text,
// comments and attribute values, without the markup (tags, entities) or
// anything else. A passage reads the same whether the app wrote the raw
// Markdown, its rendering, or either escaped.
func appendLetters(dst, b []byte) []byte {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; byteClass[c] {
		case classLetter:
			dst = append(dst, c)
		case classUpper:
			dst = append(dst, c+'a'-'A')
		case 0:
			switch c {
			case '<':
				if bytes.HasPrefix(b[i:], []byte("<!--")) {
					i += 3 // a comment's text is read as text
				} else {
					dst, i = appendTag(dst, b, i+1, '>')
				}
			case '&':
				if bytes.HasPrefix(b[i:], []byte("&lt;")) {
					dst, i = appendTag(dst, b, i+4, '&') // escaped markup is markup
				} else if k := bytes.IndexByte(b[i:min(len(b), i+12)], ';'); k > 0 {
					i += k // an entity reads as nothing
				}
			}
		}
	}
	return dst
}

// appendTag reads the tag that starts at b[i] (after its "<", or "&lt;"
// when end is '&'), appending the letters of its quoted attribute values,
// and returns the index of its last byte.
func appendTag(dst, b []byte, i int, end byte) ([]byte, int) {
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"' || c == '\'':
			j := bytes.IndexByte(b[i+1:], c)
			if j < 0 {
				j = len(b) - i - 1
			}
			dst = appendLetters(dst, b[i+1:i+1+j])
			i += j + 1
		case c == '>' || c == end && bytes.HasPrefix(b[i:], []byte("&gt;")):
			if c == '&' {
				i += 3
			}
			return dst, i
		}
	}
	return dst, i
}

// passages returns the passages of a memo's content (its Markdown, without
// the title line) that the scan looks for, reduced to letters: runs of
// passageWords words drawn at random, from its paragraphs and its bullet
// lists (whose text reads the same rendered or raw; headings, numbered lists,
// links and code do not, or are not random enough).
func passages(content string) [][]byte {
	var out [][]byte
	var words []string
	random := 0
	flush := func() {
		words, random = words[:0], 0
	}
	code := false
	for _, line := range strings.Split(content, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			code = !code
			flush()
			continue
		case code || line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "参考:") ||
			len(line) > 2 && line[0] >= '0' && line[0] <= '9' && line[1] == '.':
			flush()
			continue
		}
		list := strings.HasPrefix(line, "- ")
		for _, w := range strings.Fields(strings.TrimPrefix(line, "- ")) {
			// A word drawn from the vocabulary is random; a Japanese
			// sentence, one of a few, is not, and starts no passage (whose
			// first letters are its key).
			isRandom := list || isASCII(w)
			if !isRandom && len(words) == 0 {
				continue
			}
			words = append(words, w)
			if isRandom {
				random++
			}
			if random == passageWords {
				if p := appendLetters(nil, []byte(strings.Join(words, " "))); len(p) >= passageKey {
					out = append(out, p)
				}
				flush()
			}
		}
		if !list {
			flush() // a paragraph is one line; a list goes on over its items
		}
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// passageKey is how many bytes of a passage its index is keyed by: a
// rolling hash of every window of this length in an answer finds the
// passages that may start there.
const passageKey = 24

// passageIndex finds passages in text reduced to letters: a bitset of the
// keys' hashes rejects nearly every window at the cost of one bit test, and
// a map gives the passages of a key for an exact comparison.
type passageIndex struct {
	bits  []uint64
	shift uint // 64 - log2 of the bitset's size
	byKey map[uint64][]passage
}

type passage struct {
	text []byte
	memo *secret
}

const (
	hashBase = 0x100000001b3
	hashMix  = 0x9e3779b97f4a7c15
)

// hashPow is hashBase to the power passageKey: what the byte leaving a
// window weighs in its hash.
var hashPow = func() uint64 {
	p := uint64(1)
	for range passageKey {
		p *= hashBase
	}
	return p
}()

// newPassageIndex returns an index whose bitset has 2^bits bits: about a
// hundred for each passage it will hold.
func newPassageIndex(bits uint) *passageIndex {
	return &passageIndex{bits: make([]uint64, 1<<bits/64), shift: 64 - bits, byKey: map[uint64][]passage{}}
}

func (x *passageIndex) keyBit(h uint64) (int, uint64) {
	b := (h * hashMix) >> x.shift
	return int(b / 64), 1 << (b % 64)
}

func (x *passageIndex) add(text []byte, s *secret) {
	h := uint64(0)
	for _, c := range text[:passageKey] {
		h = h*hashBase + uint64(c)
	}
	i, bit := x.keyBit(h)
	x.bits[i] |= bit
	x.byKey[h] = append(x.byKey[h], passage{text: text, memo: s})
}

// find returns the memo of the first passage in text that viewer did not
// write; nil if none.
func (x *passageIndex) find(text []byte, viewer string) *secret {
	if len(x.byKey) == 0 {
		return nil
	}
	h := uint64(0)
	for i, c := range text {
		h = h*hashBase + uint64(c)
		if i < passageKey-1 {
			continue
		}
		if i >= passageKey {
			h -= uint64(text[i-passageKey]) * hashPow
		}
		if w, bit := x.keyBit(h); x.bits[w]&bit == 0 {
			continue
		}
		start := i + 1 - passageKey
		for _, p := range x.byKey[h] {
			if p.memo.author != viewer && bytes.HasPrefix(text[start:], p.text) {
				return p.memo
			}
		}
	}
	return nil
}
