package report

import (
	"embed"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
)

//go:embed templates
var files embed.FS

// templates are the page's and the charts' (parsed once per call: a report
// is written once per run, and no package state is kept).
func templates() *template.Template {
	return template.Must(template.New("page.html").ParseFS(files, "templates/*.html"))
}

// chartsView is the charts' section: the charts, when the load began,
// and the marks' colours for its key.
type chartsView struct {
	Charts                          []Chart
	Start                           time.Time
	Freeze                          bool
	Grow, Shrink, Hold, FreezeColor string
}

func newChartsView(res *engine.Result, opts Options) chartsView {
	cs := Charts(res, opts)
	v := chartsView{Charts: cs, Start: LoadStart(res), Grow: colorGrow, Shrink: colorShrink, Hold: colorHold,
		FreezeColor: colorFreeze}
	for _, c := range cs {
		v.Freeze = v.Freeze || !math.IsNaN(c.FreezeAt)
	}
	return v
}

// HTML is the run's charts as a section of a page, with their key; empty
// when the run has no load to chart. Its look needs ChartCSS's rules.
func HTML(res *engine.Result, opts Options) (template.HTML, error) {
	v := newChartsView(res, opts)
	if len(v.Charts) == 0 {
		return "", nil
	}
	var b strings.Builder
	if err := templates().ExecuteTemplate(&b, "charts", v); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

// ChartCSS is the style sheet's rules for HTML's section, for a page
// that serves its styles from a file of its own.
func ChartCSS() string {
	var b strings.Builder
	_ = templates().ExecuteTemplate(&b, "chartcss", nil)
	return b.String()
}

// pageView is the whole report's.
type pageView struct {
	Result  *engine.Result
	Charts  chartsView
	Summary string
}

// Write writes the run's report, one HTML page with everything inline
// (its style, its charts, the text summary): it opens offline, from a
// file, in any browser.
func Write(w io.Writer, res *engine.Result, opts Options) error {
	var sum strings.Builder
	if err := res.WriteSummary(&sum); err != nil {
		return err
	}
	var b strings.Builder
	err := templates().ExecuteTemplate(&b, "page.html", pageView{Result: res, Charts: newChartsView(res, opts),
		Summary: sum.String()})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, b.String())
	return err
}
