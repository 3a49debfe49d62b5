package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// staticFile is a file of public/, read once at start.
type staticFile struct {
	name        string
	contentType string
	modTime     time.Time
	data        []byte
	etag        string
}

// Browsers keep the assets for a day and then revalidate them (If-None-Match, If-Modified-Since: a 304 without a
// body). The page itself is revalidated every time.
const (
	staticCacheControl = "public, max-age=86400"
	indexCacheControl  = "no-cache"
)

// loadStatic reads every regular file under dir, keyed by its path below dir ("leagues.js").
func loadStatic(dir string) (map[string]*staticFile, error) {
	files := map[string]*staticFile{}
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := os.Stat(p) // follows a link
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		f := &staticFile{
			name:        filepath.Base(p),
			contentType: mime.TypeByExtension(filepath.Ext(p)),
			modTime:     info.ModTime(),
			data:        data,
			etag:        `"` + hex.EncodeToString(sum[:12]) + `"`,
		}
		if f.contentType == "" {
			f.contentType = http.DetectContentType(data)
		}
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	return files, err
}

func (app *App) getIndex(w http.ResponseWriter, r *http.Request) {
	f := app.static["index.html"]
	if f == nil {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	serveStatic(w, r, f, indexCacheControl)
}

// getStatic serves the files under public/ from memory; anything else there (a directory, a missing file) is not
// found, as in the reference.
func (app *App) getStatic(w http.ResponseWriter, r *http.Request) {
	f := app.static[strings.TrimPrefix(path.Clean("/"+r.PathValue("file")), "/")]
	if f == nil {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	if strings.HasSuffix(r.URL.Path, "/index.html") {
		// As http.ServeFile, which the reference uses, does.
		w.Header().Set("Location", "./")
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	serveStatic(w, r, f, staticCacheControl)
}

func serveStatic(w http.ResponseWriter, r *http.Request, f *staticFile, cacheControl string) {
	h := w.Header()
	h["Content-Type"] = []string{f.contentType}
	h["Cache-Control"] = []string{cacheControl}
	h["Etag"] = []string{f.etag}
	// ServeContent answers If-None-Match and If-Modified-Since with 304, HEAD and Range, and sets Last-Modified.
	http.ServeContent(w, r, f.name, f.modTime, bytes.NewReader(f.data))
}
