package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/tunecon/tunecon/engine"
)

func TestFetchAssetsVerifiesEveryFetch(t *testing.T) {
	t.Parallel()
	files := fstest.MapFS{
		"css/a.css": {Data: []byte("body{color:red}")},
		"js/a.js":   {Data: []byte("console.log(1)")},
		"img/a.png": {Data: []byte("\x89PNG fake")},
	}
	manifest, err := engine.ManifestFromFS(files, ".", "/static")
	if err != nil || len(manifest) != 3 || manifest["/static/css/a.css"] == "" {
		t.Fatalf("manifest %v %v", manifest, err)
	}
	manifest["/user.js"] = engine.Dynamic
	page := `<html><head><link rel="stylesheet" href="/static/css/a.css"><script src="/static/js/a.js"></script></head>
<body><img src="static/img/a.png"><img src="http://elsewhere.example/x.png">%s</body></html>`
	cases := []struct {
		name    string
		extra   string
		serve   func(w http.ResponseWriter, r *http.Request) bool
		class   engine.Class
		code    string
		wantErr bool
	}{
		{name: "all right"},
		{name: "a dynamic script is left to the scenario", extra: `<script src="/user.js"></script>`},
		{name: "one byte changed", serve: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/static/js/a.js" {
				fmt.Fprint(w, "console.log(2)")
				return true
			}
			return false
		}, wantErr: true, class: engine.ClassCritical, code: "asset-hash"},
		{name: "missing", serve: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/static/img/a.png" {
				http.NotFound(w, r)
				return true
			}
			return false
		}, wantErr: true, class: engine.ClassApplication, code: "status"},
		{name: "unknown asset", extra: `<img src="/static/img/other.png">`, wantErr: true, class: engine.ClassApplication, code: "asset-unknown"},
		{name: "an asset with a query string", extra: `<img src="/static/img/a.png?v=2">`, wantErr: true, class: engine.ClassApplication, code: "asset-unknown"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var fetched atomic.Int64
			target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/" {
					fetched.Add(1)
				}
				if c.serve != nil && c.serve(w, r) {
					return
				}
				if r.URL.Path == "/" {
					fmt.Fprintf(w, page, c.extra)
					return
				}
				http.StripPrefix("/static/", http.FileServerFS(files)).ServeHTTP(w, r)
			}))
			a := engine.NewAgent(target, engine.AgentConfig{}, manifest)
			res, err := a.Get(context.Background(), "GET /", "/")
			if err != nil {
				t.Fatal(err)
			}
			firstErr := a.FetchAssets(context.Background(), res)
			if !c.wantErr {
				if firstErr != nil || fetched.Load() != 3 {
					t.Fatalf("want 3 verified assets, got %d, err %v", fetched.Load(), firstErr)
				}
				return
			}
			var e *engine.Error
			if !errors.As(firstErr, &e) || e.Class != c.class || e.Code != c.code {
				t.Fatalf("got %v, want class %s code %s", firstErr, c.class, c.code)
			}
		})
	}
}

// TestFetchAssetsFollowsAChangedPage: an agent remembers the last page's
// asset links, and a page that changed, however little, is read again.
func TestFetchAssetsFollowsAChangedPage(t *testing.T) {
	t.Parallel()
	files := fstest.MapFS{"a.css": {Data: []byte("a{}")}}
	manifest, err := engine.ManifestFromFS(files, ".", "/static")
	if err != nil {
		t.Fatal(err)
	}
	var extra atomic.Pointer[string]
	none := ""
	extra.Store(&none)
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			fmt.Fprintf(w, `<html><head><link rel="stylesheet" href="/static/a.css">%s</head></html>`, *extra.Load())
			return
		}
		http.StripPrefix("/static/", http.FileServerFS(files)).ServeHTTP(w, r)
	}))
	a := engine.NewAgent(target, engine.AgentConfig{}, manifest)
	load := func() error {
		res, err := a.Get(context.Background(), "GET /", "/")
		if err != nil {
			t.Fatal(err)
		}
		return a.FetchAssets(context.Background(), res)
	}
	for range 2 {
		if err := load(); err != nil {
			t.Fatalf("the same page twice: %v", err)
		}
	}
	unknown := `<script src="/static/b.js"></script>`
	extra.Store(&unknown)
	var e *engine.Error
	if err := load(); !errors.As(err, &e) || e.Code != "asset-unknown" {
		t.Fatalf("a changed page's new asset: got %v, want asset-unknown", err)
	}
	extra.Store(&none)
	if err := load(); err != nil {
		t.Fatalf("the page back as it was: %v", err)
	}
}

func TestManifestFromSums(t *testing.T) {
	m, err := engine.ManifestFromSums(strings.Repeat("a", 64)+"  css/x.css\n"+strings.Repeat("b", 64)+"  img/y.png\n", "/static")
	if err != nil || len(m) != 2 || m["/static/css/x.css"] != strings.Repeat("a", 64) {
		t.Errorf("got %v %v", m, err)
	}
	if _, err := engine.ManifestFromSums("not a sum line\n", "/static"); err == nil {
		t.Error("a malformed line was accepted")
	}
}
