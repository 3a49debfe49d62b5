// Package example is the engine's worked example: a tiny notes app served in
// process, and a scenario for it. It shows a problem author every part of a
// scenario (pre-check with a negative case, users that read and write, a
// freshness check, assets, JSON) in one page of code, and gives `make demo`
// something to run before any real problem exists.
package example

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"sync"
	"time"
)

//go:embed static
var static embed.FS

// Page size of the note list on /.
const listSize = 5

type note struct {
	ID      int
	Text    string
	Created time.Time
}

// App is the example target: notes kept in memory.
type App struct {
	mu    sync.Mutex
	notes []note
}

var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>notes</title><link rel="stylesheet" href="/static/example.css"></head>
<body><h1>Notes</h1><p id="total">{{.Total}}</p><ol id="notes">{{range .Notes}}<li class="note" id="note-{{.ID}}">{{.Text}}</li>{{end}}</ol>
<form method="post" action="/notes"><textarea name="text"></textarea><button>Add</button></form></body></html>`))

// Handler serves the example app's HTTP contract.
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /initialize", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.notes = nil
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"language":"go"}`)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		total := len(a.notes)
		newest := make([]note, 0, listSize)
		for i := total - 1; i >= 0 && len(newest) < listSize; i-- {
			newest = append(newest, a.notes[i])
		}
		a.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = page.Execute(w, map[string]any{"Total": total, "Notes": newest})
	})
	mux.HandleFunc("POST /notes", func(w http.ResponseWriter, r *http.Request) {
		text := r.FormValue("text")
		if text == "" || len(text) > 200 {
			http.Error(w, "text must be 1 to 200 bytes", http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		id := len(a.notes) + 1
		a.notes = append(a.notes, note{ID: id, Text: text, Created: time.Now()})
		a.mu.Unlock()
		http.Redirect(w, r, "/notes/"+strconv.Itoa(id), http.StatusSeeOther)
	})
	mux.HandleFunc("GET /notes/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.Atoi(r.PathValue("id"))
		a.mu.Lock()
		defer a.mu.Unlock()
		if id < 1 || id > len(a.notes) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "text": a.notes[id-1].Text})
	})
	mux.Handle("GET /static/", http.FileServerFS(static))
	return mux
}
