package web_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tunecon/tunecon/kit/apptest/servers"
)

// axe-core is the accessibility engine the browser tests run in every page
// they check: a release from the npm registry, pinned by the integrity hash
// the registry publishes for it, downloaded once into build/. It is the
// tests' own; the portal never serves it.
const (
	axeVersion   = "4.14.1"
	axeTarball   = "https://registry.npmjs.org/axe-core/-/axe-core-" + axeVersion + ".tgz"
	axeIntegrity = "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
)

// axeFile is where the downloaded engine is kept.
var axeFile = filepath.Join("..", "..", "..", "build", "axe-core-"+axeVersion+".min.js")

// axeSource returns axe-core's script, downloading it first if build/ lacks
// it. Without the registry the test skips, saying so, or under CI fails.
func axeSource(t *testing.T) string {
	t.Helper()
	if src, err := os.ReadFile(axeFile); err == nil {
		return string(src)
	}
	src, err := downloadAxe()
	if err != nil {
		if os.Getenv("CI") != "true" {
			t.Skipf("skipped: the accessibility engine could not be had: %v", err)
		}
		t.Fatalf("the accessibility engine: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(axeFile), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := fmt.Sprintf("%s.%d", axeFile, os.Getpid())
	if err := os.WriteFile(tmp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, axeFile); err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// downloadAxe fetches the release's tarball, checks it against the pinned
// integrity hash and returns its axe.min.js.
func downloadAxe() ([]byte, error) {
	client := &http.Client{Timeout: time.Minute}
	res, err := client.Get(axeTarball)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", axeTarball, res.Status)
	}
	tgz, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	sum := sha512.Sum512(tgz)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != axeIntegrity {
		return nil, fmt.Errorf("%s has integrity %s, want %s", axeTarball, got, axeIntegrity)
	}
	gz, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s holds no package/axe.min.js", axeTarball)
		} else if err != nil {
			return nil, err
		}
		if h.Name == "package/axe.min.js" {
			return io.ReadAll(tr)
		}
	}
}

// axeRun runs axe-core over the page and lists its serious and critical
// violations, each with up to three of the elements at fault.
const axeRun = `(async () => {
  const r = await axe.run(document, {resultTypes: ["violations"]});
  return r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v =>
    v.id + " (" + v.impact + "): " + v.help + ": " +
    v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "));
})()`

// accessible checks the page open in b with axe-core: no serious or
// critical violation.
func accessible(t *testing.T, b context.Context, name string) {
	t.Helper()
	found, err := axeViolations(b, axeSource(t))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(found) > 0 {
		t.Errorf("%s: accessibility violations:\n  %s", name, strings.Join(found, "\n  "))
	}
}

// axeViolations loads axe-core (its source src) into the page open in b,
// runs it, and returns the serious and critical violations it found.
func axeViolations(b context.Context, src string) ([]string, error) {
	if _, err := chromedp.Run(b, chromedp.Evaluate[any](src+"\n;0")); err != nil {
		return nil, fmt.Errorf("loading axe-core: %w", err)
	}
	found, err := chromedp.Run(b, chromedp.Evaluate[[]string](axeRun, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("running axe-core: %w", err)
	}
	return found, nil
}

// TestAccessibilityCheckFindsFaults: the check finds what it is there for,
// on a page with an image without a text, an unlabelled field and grey text
// on grey, and passes the same page made right.
func TestAccessibilityCheckFindsFaults(t *testing.T) {
	path, err := servers.Chromium()
	servers.Require(t, err)
	src := axeSource(t)
	pages := map[string]string{
		"faulty": `<img src="/x.png"><form><input name="q"></form><p style="color:#aaa;background:#bbb">faint</p>`,
		"right":  `<img src="/x.png" alt="logo"><form><label>Search <input name="q"></label></form><p>plain</p>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><title>t</title></head><body><main>%s</main></body></html>`,
			pages[strings.TrimPrefix(r.URL.Path, "/")])
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := browser(t, ctx, path)
	for name, want := range map[string][]string{"faulty": {"image-alt", "label", "color-contrast"}, "right": nil} {
		must(t, "opening the "+name+" page", chromedp.Do(b, chromedp.Navigate(srv.URL+"/"+name)))
		found, err := axeViolations(b, src)
		must(t, "checking the "+name+" page", err)
		all := strings.Join(found, "\n")
		for _, id := range want {
			if !strings.Contains(all, id+" (") {
				t.Errorf("the %s page: want %s among the violations, got:\n%s", name, id, all)
			}
		}
		if want == nil && len(found) > 0 {
			t.Errorf("the %s page: want no violation, got:\n%s", name, all)
		}
	}
}
