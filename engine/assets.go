package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/PuerkitoBio/goquery"
)

// Manifest maps an asset's URL path (such as "/static/css/blog.css") to the
// hex SHA-256 of its exact bytes.
type Manifest map[string]string

// Dynamic, as a manifest entry's hash, names a same-origin script or
// stylesheet the app renders per request (a user's settings as JavaScript):
// FetchAssets neither fetches nor verifies it; the scenario asks for it and
// checks it as a page of its own.
const Dynamic = "dynamic"

// ManifestFromFS hashes every file under dir in fsys and maps it to prefix +
// its path below dir.
func ManifestFromFS(fsys fs.FS, dir, prefix string) (Manifest, error) {
	m := Manifest{}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		rel := p
		if dir != "." {
			rel = strings.TrimPrefix(p, dir+"/")
		}
		m[path.Join(prefix, rel)] = sha256Hex(data)
		return nil
	})
	return m, err
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// AssetLinks lists the same-origin assets an HTML page references, in order,
// without repeats: stylesheets, scripts and images.
func AssetLinks(res *Response) ([]string, error) {
	doc, err := res.Document()
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	add := func(ref string) {
		if ref == "" {
			return
		}
		u, err := res.URL.Parse(ref)
		if err != nil || u.Host != res.URL.Host {
			return
		}
		if p := u.RequestURI(); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	doc.Find("link[href]").Each(func(_ int, s *goquery.Selection) {
		if rel, _ := s.Attr("rel"); rel == "stylesheet" || rel == "icon" {
			add(s.AttrOr("href", ""))
		}
	})
	doc.Find("script[src], img[src]").Each(func(_ int, s *goquery.Selection) {
		add(s.AttrOr("src", ""))
	})
	return out, nil
}

// FetchAssets fetches the assets a page references as a browser would (a few
// at a time, through the agent's cache) and verifies each fetched body against
// the manifest. It returns the first failure in the page's order: a hash
// mismatch is critical; a reference that is not a manifest path exactly (an
// unknown path, or any query string) and an asset answered with another
// status than 200 are application errors.
//
// It returns no count on purpose: points come from what users accomplish (a
// page read with its assets verified), never from asset requests, which an
// app can multiply and which good caching avoids.
func (a *Agent) FetchAssets(ctx context.Context, page *Response) error {
	links, err := a.assetLinks(page)
	if err != nil {
		return err
	}
	errs := make([]error, len(links))
	sem := make(chan struct{}, DefaultAssetParallelism)
	var wg sync.WaitGroup
	for i, p := range links {
		want, known := a.manifest[p]
		if want == Dynamic {
			continue
		}
		if !known {
			errs[i] = page.Applicationf("asset-unknown",
				"page references %s, which is not one of the problem's assets (assets are referenced by their path alone, without a query)", p)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = a.fetchAsset(ctx, p, want)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// linksMemo is the asset links of the last page an agent fetched assets for.
type linksMemo struct {
	url, body string
	links     []string
}

// assetLinks is AssetLinks, remembering the last page's: a user who opens a
// page again unchanged (a single-page app's shell, each session) costs no
// second parse.
func (a *Agent) assetLinks(page *Response) ([]string, error) {
	u := page.URL.String()
	if m := a.links.Load(); m != nil && m.url == u && m.body == string(page.Body) {
		return m.links, nil
	}
	links, err := AssetLinks(page)
	if err == nil {
		a.links.Store(&linksMemo{url: u, body: string(page.Body), links: links})
	}
	return links, err
}

func (a *Agent) fetchAsset(ctx context.Context, p, want string) error {
	res, err := a.do(ctx, "GET "+p, http.MethodGet, p, nil, nil, true, 0)
	if err != nil {
		return err
	}
	if res.FromCache {
		return nil
	}
	if err := res.Check(Status(200)); err != nil {
		return err
	}
	if res.Revalidated {
		return nil // the cached body was verified when it was fetched
	}
	if got := sha256Hex(res.Body); got != want {
		return res.Criticalf("asset-hash", "asset content differs from the original (%s instead of %s)", shortHash(got), shortHash(want))
	}
	return nil
}

func shortHash(h string) string {
	if len(h) > 12 {
		return "sha256:" + h[:12]
	}
	return "sha256:" + h
}

// ManifestFromSums reads the output of `sha256sum` (a hex hash, two spaces,
// a path, per line) into a manifest, prefixing each path with prefix. A line
// of another shape is an error: a manifest must not silently lose an asset.
func ManifestFromSums(sums, prefix string) (Manifest, error) {
	m := Manifest{}
	for i, line := range strings.Split(strings.TrimRight(sums, "\n"), "\n") {
		sum, file, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 || file == "" {
			return nil, fmt.Errorf("manifest line %d is not `sha256  path`: %q", i+1, line)
		}
		m[path.Join(prefix, file)] = sum
	}
	return m, nil
}

// MustManifestFromSums is ManifestFromSums for a manifest embedded in the
// program: a malformed one is a bug that every test run catches.
func MustManifestFromSums(sums, prefix string) Manifest {
	m, err := ManifestFromSums(sums, prefix)
	if err != nil {
		panic(err)
	}
	return m
}
