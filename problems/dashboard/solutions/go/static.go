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
	"time"
)

// staticFile is a file of public/, read once at start. Browsers keep it for a day (max-age) and then revalidate
// it with If-None-Match or If-Modified-Since, which costs a 304 and no body.
type staticFile struct {
	name        string
	contentType string
	modTime     time.Time
	data        []byte
	etag        string
}

const staticCacheControl = "public, max-age=86400"

// loadStatic reads every regular file under dir, keyed by its URL path (/static/...).
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
		files["/static/"+filepath.ToSlash(rel)] = f
		return nil
	})
	return files, err
}

// getStatic serves the files of public/ from memory; anything else there is not found, as in the reference.
func (app *App) getStatic(w http.ResponseWriter, r *http.Request) {
	f := app.static["/static"+path.Clean("/"+r.PathValue("file"))]
	if f == nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{f.contentType}
	h["Cache-Control"] = []string{staticCacheControl}
	h["Etag"] = []string{f.etag}
	// ServeContent answers If-None-Match and If-Modified-Since with 304, HEAD and Range, and sets Last-Modified.
	http.ServeContent(w, r, f.name, f.modTime, bytes.NewReader(f.data))
}
