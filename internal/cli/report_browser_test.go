package cli_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/cli"
	"github.com/tunecon/tunecon/kit/apptest/servers"
	"github.com/tunecon/tunecon/problems/example"
)

// screenshots is where the browser tests leave their pictures for review.
var screenshots = filepath.Join("..", "..", "build", "screenshots")

// offlineBrowser starts a headless Chromium whose every request for the
// network goes to a proxy where nothing listens: a page that asked for a
// script, a style sheet or a font from anywhere would not get it.
func offlineBrowser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	path, err := servers.Chromium()
	servers.Require(t, err)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("proxy-server", "http://127.0.0.1:9"), chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	alloc, cancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancel)
	b, cancelB := chromedp.NewContext(alloc)
	t.Cleanup(cancelB)
	if err := chromedp.Do(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// reportPage is what the test reads of the report in the browser.
type reportPage struct {
	Charts    int      `json:"charts"`
	Requests  []string `json:"requests"`
	Drawn     float64  `json:"drawn"`     // the requests line's drawn width
	Resources int      `json:"resources"` // what the page fetched besides itself
	Wide      []string `json:"wide"`      // elements wider than the viewport
	Overlaps  int      `json:"overlaps"`  // time labels that run together
	Labels    []string `json:"labels"`
}

const readReport = `(() => {
  const chart = document.querySelector('svg[data-chart=requests]');
  const line = chart.querySelector('path[data-series="requests/s"]');
  const vw = document.documentElement.clientWidth;
  const wide = [];
  if (document.documentElement.scrollWidth > vw) wide.push('html');
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (el.scrollWidth > el.clientWidth && getComputedStyle(el).overflowX !== 'visible' || r.right > vw + 0.5)
      wide.push(el.tagName + '.' + el.getAttribute('class'));
  }
  const ticks = [...chart.querySelectorAll('text.tick')].map((t) => t.getBoundingClientRect());
  let overlaps = 0;
  for (let i = 1; i < ticks.length; i++) if (ticks[i].left < ticks[i-1].right + 4) overlaps++;
  return {charts: document.querySelectorAll('svg.run-chart').length,
    requests: line.dataset.values.split(' '), drawn: line.getBoundingClientRect().width,
    resources: performance.getEntriesByType('resource').length, wide, overlaps,
    labels: [...chart.querySelectorAll('text.tick')].map((t) => t.textContent)};
})()`

// TestReportOpensOffline: bench --report writes a page that Chromium,
// with no network, shows whole: five charts, the requests' line drawn from
// the run's own timeline (as --json has it), its time labels apart, and
// nothing wider than a desktop's or a phone's screen.
func TestReportOpensOffline(t *testing.T) {
	srv := httptest.NewServer((&example.App{}).Handler())
	defer srv.Close()
	dir := t.TempDir()
	jsonPath, htmlPath := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.html")
	code, out, stderr := run(t, "bench", "example", "--target", srv.URL, "--duration", "3s", "--seed", "5",
		"--json", jsonPath, "--report", htmlPath, "--progress", "none")
	if code != cli.ExitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	var res engine.Result
	data, _ := os.ReadFile(jsonPath)
	if err := json.Unmarshal(data, &res); err != nil || len(res.Timeline) == 0 {
		t.Fatalf("the result: %v, %d seconds", err, len(res.Timeline))
	}
	var want []string
	for _, s := range res.Timeline {
		want = append(want, strconv.FormatInt(s.Requests, 10))
	}
	srv.Close() // the report needs nothing but itself

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := offlineBrowser(t, ctx)
	for _, size := range [][2]int64{{1280, 900}, {390, 844}} {
		var page reportPage
		err := chromedp.Do(b, chromedp.EmulateViewport(size[0], size[1]),
			chromedp.Navigate("file://"+htmlPath), chromedp.WaitVisible(css(`svg[data-chart=requests]`)),
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
				page, err = chromedp.Evaluate[reportPage](readReport)(ctx, tg)
				return err
			}),
			screenshot("report-"+strconv.FormatInt(size[0], 10)))
		if err != nil {
			t.Fatalf("%d px: %v", size[0], err)
		}
		if page.Charts != 5 || strings.Join(page.Requests, " ") != strings.Join(want, " ") || page.Drawn <= 0 {
			t.Errorf("%d px: %d charts, requests drawn %v (%.0f px wide), want 5 charts and %v",
				size[0], page.Charts, page.Requests, page.Drawn, want)
		}
		if page.Resources != 0 || len(page.Wide) > 0 || page.Overlaps > 0 || len(page.Labels) == 0 {
			t.Errorf("%d px: %d resources fetched, wider than the screen %v, %d labels overlapping of %v",
				size[0], page.Resources, page.Wide, page.Overlaps, page.Labels)
		}
	}
}

// css is a CSS selector.
type css = chromedp.CSS

// screenshot saves a screenshot of the whole page as
// build/screenshots/FILE.png.
func screenshot(file string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		png, err := chromedp.FullScreenshot(100)(ctx, t)
		if err != nil {
			return chromedp.Void{}, err
		}
		if err := os.MkdirAll(screenshots, 0o755); err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.Void{}, os.WriteFile(filepath.Join(screenshots, file+".png"), png, 0o644)
	}
}
