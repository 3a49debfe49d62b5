package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

func (app *App) serverError(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	http.Error(w, "Internal Server Error", http.StatusInternalServerError)
}

func (app *App) errorPage(w http.ResponseWriter, status int, title, message string) {
	p := beginPage(appendEscaped(nil, title))
	p.b = append(p.b, `<section id="error"><h2>`...)
	p.b = appendEscaped(p.b, title)
	p.b = append(p.b, `</h2><p class="error-message">`...)
	p.b = appendEscaped(p.b, message)
	p.b = append(p.b, `</p><p><a href="/">Back to the top page</a></p></section>`...)
	p.send(w, app, status)
}

func (app *App) notFound(w http.ResponseWriter, r *http.Request) {
	app.errorPage(w, http.StatusNotFound, "Not found", "There is no such page.")
}

func (app *App) badRequest(w http.ResponseWriter, message string) {
	app.errorPage(w, http.StatusBadRequest, "Bad request", message)
}

func (app *App) getIndex(w http.ResponseWriter, r *http.Request) {
	p := beginPage(nil)
	p.b = append(p.b, "<section id=\"articles\">\n"...)
	for _, a := range app.mem.latest(10) {
		p.b = append(p.b, a.html...)
		p.b = append(p.b, '\n')
	}
	p.b = append(p.b, "</section>"...)
	p.send(w, app, http.StatusOK)
}

func (app *App) getArticle(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		app.notFound(w, r)
		return
	}
	a := app.mem.article(id)
	if a == nil {
		app.notFound(w, r)
		return
	}
	cl, err := app.comments(a)
	if err != nil {
		app.serverError(w, err)
		return
	}
	p := beginPage(a.title)
	p.b = append(p.b, a.html...)
	p.b = append(p.b, "\n<section id=\"comments\"><h3>Comments (<span id=\"comment-count\">"...)
	p.b = strconv.AppendInt(p.b, int64(cl.count), 10)
	p.b = append(p.b, "</span>)</h3><ol id=\"comment-list\">\n"...)
	p.b = append(p.b, cl.html...)
	p.b = append(p.b, "</ol></section>\n<h3 class=\"form-title\">Leave a comment</h3>\n"+
		`<form id="comment-form" method="post" action="/articles/`...)
	p.b = strconv.AppendInt(p.b, id, 10)
	p.b = append(p.b, `/comments"><input name="name"><textarea name="body"></textarea>`+
		`<button type="submit">Comment</button></form>`...)
	p.send(w, app, http.StatusOK)
}

var postTitle = []byte("Write an article")

func (app *App) getPost(w http.ResponseWriter, r *http.Request) {
	p := beginPage(postTitle)
	p.b = append(p.b, "<h2 class=\"form-title\">Write an article</h2>\n"+
		`<form id="post-form" method="post" action="/articles"><input name="title"><textarea name="body"></textarea>`+
		`<button type="submit">Post</button></form>`...)
	p.send(w, app, http.StatusOK)
}

func (app *App) postArticle(w http.ResponseWriter, r *http.Request) {
	title := r.PostFormValue("title")
	body := r.PostFormValue("body")
	if !validText(title, 1, maxTitle) || strings.ContainsAny(title, "\r\n") {
		app.badRequest(w, fmt.Sprintf("The title must be one line of 1 to %d characters.", maxTitle))
		return
	}
	if !validText(body, 1, maxArticleBody) {
		app.badRequest(w, fmt.Sprintf("The body must be 1 to %d characters long.", maxArticleBody))
		return
	}
	app.wmu.Lock()
	id, err := app.insertArticle(title, body)
	app.wmu.Unlock()
	if err != nil {
		app.serverError(w, err)
		return
	}
	w.Header().Set("Location", "/articles/"+strconv.FormatInt(id, 10))
	w.WriteHeader(http.StatusSeeOther)
}

func (app *App) postComment(w http.ResponseWriter, r *http.Request) {
	articleID, ok := parseID(r.PathValue("id"))
	if !ok {
		app.notFound(w, r)
		return
	}
	a := app.mem.article(articleID)
	if a == nil {
		app.notFound(w, r)
		return
	}
	name := r.PostFormValue("name")
	body := r.PostFormValue("body")
	if !validText(name, 0, maxName) {
		app.badRequest(w, fmt.Sprintf("The name must be at most %d characters long.", maxName))
		return
	}
	if !validText(body, 1, maxCommentBody) {
		app.badRequest(w, fmt.Sprintf("The comment must be 1 to %d characters long.", maxCommentBody))
		return
	}
	for {
		// Lock order: the article, then the writer lock (initialize takes only the writer lock).
		a.mu.Lock()
		app.wmu.Lock()
		if cur := app.mem.article(articleID); cur != a {
			// POST /initialize rebuilt the memory while we waited: retry with the new article, if it still exists.
			app.wmu.Unlock()
			a.mu.Unlock()
			if a = cur; a == nil {
				app.notFound(w, r)
				return
			}
			continue
		}
		id, err := app.insertComment(a, name, body)
		app.wmu.Unlock()
		a.mu.Unlock()
		if err != nil {
			app.serverError(w, err)
			return
		}
		w.Header().Set("Location", "/articles/"+strconv.FormatInt(articleID, 10)+"#comment-"+strconv.FormatInt(id, 10))
		w.WriteHeader(http.StatusSeeOther)
		return
	}
}

// postInitialize restores the initial data by deleting everything added since, and rebuilds the memory.
func (app *App) postInitialize(w http.ResponseWriter, r *http.Request) {
	if err := app.initialize(); err != nil {
		app.serverError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"language":"go"}`)
}

// parseID parses a positive decimal id, digits only.
func parseID(s string) (int64, bool) {
	if s == "" || len(s) > 18 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// validText reports whether s is valid UTF-8 of lo to hi characters.
func validText(s string, lo, hi int) bool {
	n := utf8.RuneCountInString(s)
	return utf8.ValidString(s) && n >= lo && n <= hi
}
