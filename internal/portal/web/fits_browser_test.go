package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// viewports are the sizes every page is checked at: a laptop's window and a
// phone's.
var viewports = [][2]int64{{1280, 900}, {390, 844}}

// settle is how long a page may take to lay itself out again at a new
// viewport: its resize handlers run after the resize event, a frame later.
const settle = 300 * time.Millisecond

// overflowing lists what does not fit: the page scrolling sideways, an
// element whose content is wider than its box (scrollWidth > clientWidth:
// something cut off or scrolled), or one reaching past the viewport's right
// edge.
const overflowing = `(() => {
  const vw = document.documentElement.clientWidth, out = [];
  const name = e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (e.className ? "." + String(e.className).trim().replace(/\s+/g, ".") : "");
  if (document.documentElement.scrollWidth > vw) out.push("the page: " + document.documentElement.scrollWidth + " px");
  for (const e of document.querySelectorAll("body *")) {
    if (e.scrollWidth > e.clientWidth) out.push(name(e) + " " + e.scrollWidth + ">" + e.clientWidth);
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > vw + 0.5) out.push(name(e) + " to " + Math.round(r.right) + " px");
  }
  return out;
})()`

// fits checks the page open in b at each of the viewports: nothing wider
// than its box or the screen; and it runs the accessibility check
// (accessible) at the first. It leaves a screenshot of each,
// build/screenshots/NAME-WIDTH.png, and the browser at the first size.
func fits(t *testing.T, b context.Context, name string) {
	t.Helper()
	accessible(t, b, name)
	for _, vp := range viewports {
		if err := chromedp.Do(b, chromedp.EmulateViewport(vp[0], vp[1])); err != nil {
			t.Fatal(err)
		}
		time.Sleep(settle) // the page's resize handlers (the charts') run
		over, err := chromedp.Run(b, chromedp.Evaluate[[]string](overflowing))
		if err != nil {
			t.Fatalf("%s at %d px: %v", name, vp[0], err)
		}
		if len(over) > 0 {
			t.Errorf("%s at %d px: wider than their box or the screen: %s", name, vp[0], strings.Join(over, ", "))
		}
		if err := chromedp.Do(b, screenshot(fmt.Sprintf("%s-%d", name, vp[0]))); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(b, chromedp.EmulateViewport(viewports[0][0], viewports[0][1])); err != nil {
		t.Fatal(err)
	}
}

// must ends the test when a browser step named what failed.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
