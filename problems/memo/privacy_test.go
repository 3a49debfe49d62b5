package memo

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/memo/data"
)

// answer is an answer of status with body, as the scan sees it.
func answer(status int, body string) *engine.Response {
	return &engine.Response{Endpoint: "GET /", Method: http.MethodGet, URL: &url.URL{Path: "/"}, StatusCode: status, Body: []byte(body)}
}

// render renders a memo's content as the app would show it.
func render(t testing.TB, m *model, content string) string {
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(content), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// raceSample: under the race detector, which finds nothing in one goroutine
// and makes them about 6 times slower (2.5 min), the exhaustive scans check
// every raceSample-th memo; `make test` also runs them whole without it
// (test-exhaustive).
const raceSample = 10

// sampleStep is the step between the memos an exhaustive scan checks.
func sampleStep() int64 {
	if raceEnabled {
		return raceSample
	}
	return 1
}

// TestScanFindsNothingPublic: no initial public memo, rendered or raw, nor
// any memo the run writes, carries a mark of a private memo, for a viewer
// signed out; and the marks cover most private memos.
func TestScanFindsNothingPublic(t *testing.T) {
	if testing.Short() {
		t.Skip("renders the 50,000 initial memos")
	}
	start := time.Now()
	in := loadInitial()
	t.Logf("marks: %d titles, %d times, %d passage keys, found in %v (once per process)",
		len(in.marks.titles), len(in.marks.times), len(in.marks.passages.byKey), time.Since(start))
	m := newModel(in)
	withPassage := map[*secret]bool{}
	for _, ps := range in.marks.passages.byKey {
		for _, p := range ps {
			withPassage[p.memo] = true
		}
	}
	if n := len(in.marks.times); len(withPassage) < n*6/10 || len(in.marks.titles) < n/2 {
		t.Errorf("of %d private memos, %d have a passage and %d a title as marks: want most", n, len(withPassage), len(in.marks.titles))
	}
	step := sampleStep()
	for id := int64(1); id <= in.lastMemo(); id += step {
		d := in.cfg.Memo(id)
		page := "<li><a>" + d.Title + "</a> <span>" + d.CreatedAt.Format(data.TimeFormat) + "</span></li>\n" +
			"<div id=\"memo-content\">" + render(t, m, d.Content) + "</div>\n<!--\n" + d.Content + "\n-->"
		viewer := ""
		if d.Private {
			viewer = in.names[d.UserID] // its author sees it all
		}
		if err := m.scan(answer(200, page), viewer); err != nil {
			t.Fatalf("memo %d (private: %v) shown to %q: %v", id, d.Private, viewer, err)
		}
	}
	for n := int64(1); n <= 20000; n++ {
		title := titleOf(n)
		content := "# " + title + "\n\n" + in.cfg.Content(uint64(n))
		m.runMarks.posting("someone", title, content, false, in.marks)
		if n%step != 0 {
			continue
		}
		if err := m.scan(answer(200, render(t, m, content)+content), ""); err != nil {
			t.Fatalf("run memo %d: %v", n, err)
		}
	}
}

// TestScanFindsPrivate: a private memo in an answer to anyone but its
// author is found by its time, its title, or a passage of its content, in
// hidden markup, an attribute, a comment or an error page.
func TestScanFindsPrivate(t *testing.T) {
	in := newInitial(data.Config{Seed: 3, Users: 20, Memos: 400})
	m := newModel(in)
	var d data.Memo
	for id := in.lastMemo(); id > 0; id-- {
		if d = in.cfg.Memo(id); d.Private && in.marks.titles[d.Title] != nil && len(passages(d.Content)) > 0 {
			break
		}
	}
	if !d.Private {
		t.Fatal("no private memo with every mark in the test data")
	}
	author := in.names[d.UserID]
	_, raw, _ := strings.Cut(d.Content, "\n")
	body := render(t, m, raw)
	for _, c := range []struct{ name, page, want string }{
		{"its item in a hidden list", `<ol hidden><li id="memo-1">` + d.Title + ` <span>` + d.CreatedAt.Format(data.TimeFormat) + `</span></li></ol>`, "the time"},
		{"its title in an attribute", `<ol id="memos" data-newest="` + d.Title + `"></ol>`, "the title"},
		{"its title in a comment", `<!--` + d.Title + `-->`, "the title"},
		{"its title in JSON", `<script>var m = {"title":"` + d.Title + `"};</script>`, "the title"},
		{"its content rendered in a 404", `<section id="error"><h1>Not Found</h1></section><div style="display:none">` + body + `</div>`, "a passage"},
		{"its content raw in a comment", `<p>x</p><!-- ` + raw + ` -->`, "a passage"},
		{"its content in an attribute", `<div data-content="` + strings.ReplaceAll(strings.ReplaceAll(body, `&`, `&amp;`), `"`, `&#34;`) + `"></div>`, "a passage"},
		{"its content escaped", `<p>` + strings.ReplaceAll(strings.ReplaceAll(body, `<`, `&lt;`), `>`, `&gt;`) + `</p>`, "a passage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := m.scan(answer(404, c.page), "")
			if err == nil || !strings.Contains(err.Error(), c.want) || engine.AsError(err).Class != engine.ClassCritical {
				t.Errorf("signed out: got %v, want a critical error naming %s", err, c.want)
			}
			if err := m.scan(answer(404, c.page), "someone_else"); err == nil {
				t.Error("another user: found nothing")
			}
			if err := m.scan(answer(404, c.page), author); err != nil {
				t.Errorf("its author: %v", err)
			}
		})
	}
	t.Run("a run memo's title", func(t *testing.T) {
		m.runMarks.posting("writer1", titleOf(7), "# "+titleOf(7)+"\n\nshort", true, in.marks)
		if err := m.scan(answer(200, `<!-- `+titleOf(7)+` -->`), ""); err == nil {
			t.Error("found nothing")
		}
		if err := m.scan(answer(200, `<p>`+titleOf(71)+`</p>`), ""); err != nil {
			t.Errorf("another title, the first's number and a digit: %v", err)
		}
	})
}

// BenchmarkScan measures the scan of a list page of 100 memos.
func BenchmarkScan(b *testing.B) {
	in := loadInitial()
	m := newModel(in)
	var page strings.Builder
	for _, id := range in.public[len(in.public)-pageSize:] {
		d := in.memos[id-1]
		page.WriteString(`<li class="memo" id="memo-` + itoa(id) + `"><a class="memo-title" href="/memos/` + itoa(id) + `">` +
			d.Title + `</a> <span class="memo-author">` + in.names[d.UserID] + `</span> <span class="memo-created">` +
			d.CreatedAt.Format(data.TimeFormat) + "</span></li>\n")
	}
	res := answer(200, page.String())
	b.SetBytes(int64(len(res.Body)))
	for b.Loop() {
		if err := m.scan(res, ""); err != nil {
			b.Fatal(err)
		}
	}
}
