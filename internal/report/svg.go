package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// A chart's geometry, in the SVG's own units: the page scales the whole
// (its width is the container's), so these are proportions, and the text's
// size is chosen to stay readable from a phone's 350 px to a desktop's
// 600 px.
const (
	width, height = 480, 230
	plotLeft      = 50
	plotRight     = width - 28
	plotTop       = 30
	plotBottom    = height - 26
	fontSize      = 12
	// minTickGap is the least room between two time labels ("15:04:05" at
	// fontSize is about 55 units wide), so that they never run together.
	minTickGap = 84
)

// SVG draws the chart as an inline <svg> element.
func (c Chart) SVG() template.HTML {
	var b strings.Builder
	b.Grow(4096 + c.Seconds*(120+40*len(c.Series))) // the hover's columns are most of it
	top, step := c.yScale()
	fmt.Fprintf(&b, `<svg class="run-chart" data-chart="%s" viewBox="0 0 %d %d" width="100%%" role="img" aria-labelledby="chart-%s-title" font-family="system-ui, sans-serif" font-size="%d">`,
		c.ID, width, height, c.ID, fontSize)
	fmt.Fprintf(&b, `<title id="chart-%s-title">%s</title>`, c.ID, esc(c.Title))
	fmt.Fprintf(&b, `<text x="4" y="16" font-weight="600" fill="#1d2330">%s</text>`, esc(c.Title))
	c.legend(&b)
	c.yAxis(&b, top, step)
	c.xAxis(&b)
	c.hover(&b)
	for _, s := range c.Series {
		c.path(&b, s, top)
	}
	c.marks(&b)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// x is the horizontal position of a time sec seconds into the load.
func (c Chart) x(sec float64) float64 {
	return plotLeft + sec/float64(max(c.Seconds, 1))*(plotRight-plotLeft)
}

// y is the vertical position of v on a scale from 0 to top.
func y(v, top float64) float64 {
	return plotBottom - v/top*(plotBottom-plotTop)
}

// yScale is the value axis: its top, a round number at or above every
// value (1 when all are 0), and the round step of its grid lines.
func (c Chart) yScale() (top, step float64) {
	m := 0.0
	for _, s := range c.Series {
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				m = max(m, v)
			}
		}
	}
	if m <= 0 {
		return 1, 0.25
	}
	step = niceStep(m / 4)
	return math.Ceil(m/step) * step, step
}

// niceStep is the least of 1, 2, 2.5 and 5 times a power of ten at or
// above v.
func niceStep(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// legend names the series at the title's right, each in its colour.
func (c Chart) legend(b *strings.Builder) {
	fmt.Fprintf(b, `<text x="%d" y="16" text-anchor="end">`, width-4)
	for i, s := range c.Series {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(b, `<tspan fill="%s">■ %s</tspan>`, s.Color, esc(s.Name))
	}
	b.WriteString(`</text>`)
}

// yAxis draws the value axis's grid lines and labels, 0 to top.
func (c Chart) yAxis(b *strings.Builder, top, step float64) {
	for i := 0; float64(i)*step <= top*(1+1e-9); i++ {
		v := float64(i) * step
		py := y(v, top)
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e3e6eb"/>`, plotLeft, plotRight, py, py)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" fill="#5d6575">%s</text>`, plotLeft-4, py+4, compact(v))
	}
}

// timeStep is the least of the round spans, in seconds, that keeps the
// time labels minTickGap apart.
func (c Chart) timeStep() int {
	fit := max(1, int((plotRight-plotLeft)/minTickGap))
	for _, s := range []int{1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200} {
		if c.Seconds/s <= fit {
			return s
		}
	}
	return 3600 * (c.Seconds/3600/fit + 1)
}

// xAxis labels the time axis in 24-hour UTC, at round times of the clock.
func (c Chart) xAxis(b *strings.Builder) {
	step := time.Duration(c.timeStep()) * time.Second
	layout := "15:04:05"
	if step >= time.Minute {
		layout = "15:04"
	}
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#5d6575"/>`, plotLeft, plotRight, plotBottom, plotBottom)
	end := c.Start.Add(time.Duration(c.Seconds) * time.Second)
	for t := c.Start.Truncate(step); !t.After(end); t = t.Add(step) {
		if t.Before(c.Start) {
			continue
		}
		px := c.x(t.Sub(c.Start).Seconds())
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#5d6575"/>`, px, px, plotBottom, plotBottom+4)
		fmt.Fprintf(b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle" fill="#5d6575">%s</text>`,
			px, plotBottom+17, t.UTC().Format(layout))
	}
}

// hover puts a transparent column over each second whose title gives its
// figures, for a pointer to show. (Written with appends rather than
// fmt: it is most of a chart's bytes.)
func (c Chart) hover(b *strings.Builder) {
	if c.Seconds > 1800 {
		return // a long run's seconds are too narrow to point at
	}
	names := make([]string, len(c.Series))
	for k, s := range c.Series {
		names[k] = "\n" + esc(s.Name) + ": "
	}
	buf := make([]byte, 0, 256)
	for i := range c.Seconds {
		x0, x1 := c.x(float64(i)), c.x(float64(i+1))
		buf = append(buf[:0], `<rect x="`...)
		buf = strconv.AppendFloat(buf, x0, 'f', 1, 64)
		buf = append(buf, `" y="`+strconv.Itoa(plotTop)+`" width="`...)
		buf = strconv.AppendFloat(buf, x1-x0, 'f', 2, 64)
		buf = append(buf, `" height="`+strconv.Itoa(plotBottom-plotTop)+`" fill="transparent"><title>`...)
		buf = c.Start.Add(time.Duration(i)*time.Second).AppendFormat(buf, "15:04:05")
		buf = append(buf, " UTC"...)
		for k, s := range c.Series {
			buf = append(buf, names[k]...)
			if v := s.Values[i]; math.IsNaN(v) {
				buf = append(buf, "—"...)
			} else {
				buf = strconv.AppendFloat(buf, v, 'f', -1, 64)
			}
		}
		buf = append(buf, `</title></rect>`...)
		b.Write(buf)
	}
}

// path draws a series, pen up over its gaps.
func (c Chart) path(b *strings.Builder, s Series, top float64) {
	var d, vals []byte
	up := true
	point := func(op byte, x, yv float64) {
		d = append(d, op)
		d = strconv.AppendFloat(d, x, 'f', 1, 64)
		d = append(d, ' ')
		d = strconv.AppendFloat(d, yv, 'f', 1, 64)
	}
	for i, v := range s.Values {
		if i > 0 {
			vals = append(vals, ' ')
		}
		vals = strconv.AppendFloat(vals, v, 'f', -1, 64)
		if math.IsNaN(v) {
			up = true
			continue
		}
		op := byte('L')
		if up {
			op = 'M'
		}
		up = false
		if s.Step {
			point(op, c.x(float64(i)), y(v, top))
			d = append(d, 'H')
			d = strconv.AppendFloat(d, c.x(float64(i+1)), 'f', 1, 64)
		} else {
			point(op, c.x(float64(i)+0.5), y(v, top))
		}
	}
	fmt.Fprintf(b, `<path data-series="%s" data-values="%s" d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"/>`,
		esc(s.Name), vals, d, s.Color)
}

// marks draws the load controller's decisions (and the freeze) as
// vertical lines, each with a title saying what happened.
func (c Chart) marks(b *strings.Builder) {
	for _, ch := range c.Changes {
		color, dash := colorHold, ` stroke-dasharray="3 3"`
		switch ch.Kind {
		case engine.Grow:
			color, dash = colorGrow, ""
		case engine.Shrink:
			color, dash = colorShrink, ""
		}
		px := c.x(ch.AtSeconds)
		fmt.Fprintf(b, `<g class="decision" data-kind="%s"><title>%s UTC: %s</title>`,
			esc(ch.Kind), c.Start.Add(time.Duration(ch.AtSeconds*float64(time.Second))).Format("15:04:05"), esc(decision(ch)))
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s" stroke-width="1.5"%s/>`, px, px, plotTop, plotBottom, color, dash)
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="transparent" stroke-width="8"/></g>`, px, px, plotTop, plotBottom)
	}
	if !math.IsNaN(c.FreezeAt) {
		px := c.x(c.FreezeAt)
		fmt.Fprintf(b, `<g class="freeze"><title>The board froze</title><line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="6 3"/>`,
			px, px, plotTop-4, plotBottom, colorFreeze)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="end" fill="%s">freeze</text></g>`, px-3, plotTop+8, colorFreeze)
	}
}

// decision says what one of the controller's decisions did.
func decision(ch engine.LoadChange) string {
	s := fmt.Sprintf("%s %d → %d users", ch.Kind, ch.From, ch.To)
	if ch.Kind == engine.Hold {
		s = fmt.Sprintf("hold at %d users", ch.From)
	}
	if ch.Cause != "" {
		s += ": " + ch.Cause
	}
	if ch.Times > 1 {
		s += fmt.Sprintf(" (%d times, until %.0f s)", ch.Times, ch.LastAtSeconds)
	}
	return s
}

// compact writes a value axis's label: 1200 as 1.2k, 2500000 as 2.5M.
func compact(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case v >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func esc(s string) string { return template.HTMLEscapeString(s) }
