package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"
)

func (app *App) serverError(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	http.Error(w, "Internal Server Error", http.StatusInternalServerError)
}

func (app *App) notFound(w http.ResponseWriter, r *http.Request) {
	writeHTML(w, http.StatusNotFound, false, notFoundPage)
}

// sessionToken returns the value of the request's bank_session cookie, as the reference reads it.
func sessionToken(r *http.Request) (string, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return "", false
	}
	return c.Value, true
}

// setSession sends the cookie of a new session, as http.SetCookie writes it in the reference.
func setSession(w http.ResponseWriter, token string) {
	w.Header()["Set-Cookie"] = []string{sessionCookie + "=" + token + "; Path=/; HttpOnly; SameSite=Lax"}
}

func seeOther(w http.ResponseWriter, location string) {
	w.Header()["Location"] = []string{location}
	w.WriteHeader(http.StatusSeeOther)
}

func (app *App) getIndex(w http.ResponseWriter, r *http.Request) {
	notice := uint8(noticeNone)
	if token, ok := sessionToken(r); ok {
		notice = app.sessions.takeNotice(token)
	}
	writeHTML(w, http.StatusOK, true, indexPages[notice])
}

func (app *App) postLogin(w http.ResponseWriter, r *http.Request) {
	login := r.PostFormValue("login")
	password := r.PostFormValue("password")
	ip := clientIP(r)
	old, hasOld := sessionToken(r)
	token, ok, err := app.attempt(login, password, ip, old, hasOld)
	if err != nil {
		app.serverError(w, err)
		return
	}
	setSession(w, token)
	if ok {
		seeOther(w, "/mypage")
	} else {
		seeOther(w, "/")
	}
}

func (app *App) getMypage(w http.ResponseWriter, r *http.Request) {
	ss := &app.sessions
	token, hasCookie := sessionToken(r)
	var (
		found, loggedIn bool
		userIdx         int32
		at              int64
		ip              string
	)
	if hasCookie {
		ss.mu.Lock()
		if s := ss.m[token]; s != nil {
			found = true
			if s.user >= 0 {
				loggedIn, userIdx, at, ip = true, s.user, s.lastAt, s.lastIP
			} else {
				s.notice = noticeLoginRequired
			}
		}
		ss.mu.Unlock()
	}
	if loggedIn {
		writeMypage(w, app.users[userIdx].login, at, ip)
		return
	}
	// Back to the login page, with a notice in the session (a new one if it has none).
	if !found {
		token := newToken()
		ss.replace("", false, token, &session{user: -1, notice: noticeLoginRequired, created: time.Now().Unix()})
		setSession(w, token)
	}
	seeOther(w, "/")
}

// getReport lists every banned address and every locked user.
func (app *App) getReport(w http.ResponseWriter, r *http.Request) {
	body, err := app.reportBody()
	if err != nil {
		app.serverError(w, err)
		return
	}
	w.Header()["Content-Type"] = []string{"application/json"}
	w.Write(body)
}

// postInitialize restores the initial data by deleting everything added since, and the memory with it.
func (app *App) postInitialize(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if err := app.initialize(); err != nil {
		app.serverError(w, err)
		return
	}
	log.Printf("initialized in %v", time.Since(start).Round(time.Microsecond))
	w.Header()["Content-Type"] = []string{"application/json"}
	io.WriteString(w, `{"language":"go"}`)
}

// clientIP is the first address in X-Forwarded-For (the app is meant to sit behind a proxy), or the address of
// the connection's other end when the header is absent or its first entry empty.
func clientIP(r *http.Request) string {
	first, _, _ := strings.Cut(r.Header.Get("X-Forwarded-For"), ",")
	if ip := strings.Trim(first, " \t"); ip != "" {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
