package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
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
	gz          []byte // data gzipped, for text files when it is smaller; nil otherwise
	gzEtag      string
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
		if strings.HasPrefix(f.contentType, "text/") || strings.Contains(f.contentType, "javascript") {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			zw.Write(data)
			zw.Close()
			if buf.Len() < len(data) {
				f.gz = buf.Bytes()
				f.gzEtag = `"` + hex.EncodeToString(sum[:12]) + `-gz"`
			}
		}
		files["/static/"+filepath.ToSlash(rel)] = f
		return nil
	})
	return files, err
}

// getStatic serves the files of public/ from memory; anything else there (a directory, a missing file) is not
// found, as in the reference.
func (app *App) getStatic(w http.ResponseWriter, r *http.Request) {
	f := app.static["/static"+path.Clean("/"+r.PathValue("file"))]
	if f == nil {
		app.notFound(w, r)
		return
	}
	h := w.Header()
	h["Content-Type"] = []string{f.contentType}
	h["Cache-Control"] = []string{staticCacheControl}
	data, etag := f.data, f.etag
	if f.gz != nil {
		h["Vary"] = []string{"Accept-Encoding"}
		if acceptsGzip(r.Header.Get("Accept-Encoding")) && r.Header.Get("Range") == "" {
			h["Content-Encoding"] = []string{"gzip"}
			// ServeContent leaves out Content-Length when there is a Content-Encoding; a length saves chunking.
			h["Content-Length"] = []string{strconv.Itoa(len(f.gz))}
			data, etag = f.gz, f.gzEtag
		}
	}
	h["Etag"] = []string{etag}
	// ServeContent answers If-None-Match and If-Modified-Since with 304, HEAD and Range, and sets Last-Modified.
	http.ServeContent(w, r, f.name, f.modTime, bytes.NewReader(data))
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			v, err := strconv.ParseFloat(q, 64)
			return err == nil && v > 0
		}
		return true
	}
	return false
}
