package main

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"strconv"
	"unicode/utf8"
)

const (
	msgNoPage    = "There is no such page."
	msgNoMemo    = "There is no such memo."
	msgExpired   = "The form has expired: reload the page and try again."
	msgSignIn    = "Sign in to write a memo."
	msgWrongPass = "Wrong name or password."
	msgTaken     = "This name is taken."
)

var (
	msgBadMemo   = fmt.Sprintf("A memo is 1 to %d characters long, and its first line is its title.", maxContent)
	msgBadSignup = fmt.Sprintf("A name is 3 to 24 characters of a-z, 0-9 and _; a password is %d to %d "+
		"characters long.", minPassword, maxPassword)
)

// currentSession returns the request's session in st, or nil if it is signed out (a cookie naming no session
// counts as no cookie). A response to a signed-in session is for its user only: currentSession marks it
// Cache-Control: private.
func currentSession(w http.ResponseWriter, r *http.Request, st *state) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil
	}
	s := st.session(c.Value)
	if s != nil {
		w.Header()["Cache-Control"] = []string{"private"}
	}
	return s
}

// cookieSession is the value of the request's session cookie, "" without one.
func cookieSession(r *http.Request) string {
	if c, err := r.Cookie(sessionCookie); err == nil {
		return c.Value
	}
	return ""
}

// serverError writes the page of an error of the app's own, signed out: the session may be what failed.
func serverError(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	writeError(w, nil, http.StatusInternalServerError, "Something went wrong. Please try again.")
}

func seeOther(w http.ResponseWriter, location string) {
	w.Header()["Location"] = []string{location}
	w.WriteHeader(http.StatusSeeOther)
}

// validCSRF reports whether the form carries the session's CSRF token.
func validCSRF(r *http.Request, sess *session) bool {
	return subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf_token")), []byte(sess.csrf)) == 1
}

func (app *App) notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, currentSession(w, r, app.st.Load()), http.StatusNotFound, msgNoPage)
}

// Memo lists.

func (app *App) getIndex(w http.ResponseWriter, r *http.Request) {
	app.list(w, r, 0, false)
}

func (app *App) getRecent(w http.ResponseWriter, r *http.Request) {
	n, ok := parsePage(r.PathValue("n"))
	if !ok {
		app.notFound(w, r)
		return
	}
	app.list(w, r, n, true)
}

// list writes page n of the public memos, newest first: / is page 0, and the only page that is there even
// without a memo on it (/recent/N, recent, is 404 when empty, /recent/0 too). The total and the page come from one
// slice header, so they always agree.
func (app *App) list(w http.ResponseWriter, r *http.Request, n int64, recent bool) {
	st := app.st.Load()
	sess := currentSession(w, r, st)
	public := memos(&st.public)
	total := len(public)
	hi := int64(total) - n*pageSize
	if hi <= 0 {
		if recent {
			writeError(w, sess, http.StatusNotFound, msgNoPage)
			return
		}
		hi = 0
	}
	writeList(w, sess, n, total, public[max(0, hi-pageSize):hi])
}

// A memo.

func (app *App) getMemo(w http.ResponseWriter, r *http.Request) {
	st := app.st.Load()
	sess := currentSession(w, r, st)
	id, ok := parseID(r.PathValue("id"))
	var m *memo
	if ok {
		m = st.memo(id)
	}
	isAuthor := m != nil && sess != nil && sess.user == m.author
	if m == nil || m.private && !isAuthor {
		// To anyone but its author, a private memo does not exist.
		writeError(w, sess, http.StatusNotFound, msgNoMemo)
		return
	}
	content, err := app.content(m)
	if err != nil {
		serverError(w, err)
		return
	}
	// The older and the newer memo of the author that the viewer may see.
	list := &m.author.public
	if isAuthor {
		list = &m.author.all
	}
	older, newer := neighbours(memos(list), m.id)
	writeMemo(w, sess, m, content, older, newer)
}

// The user's own page, and writing.

func (app *App) getMypage(w http.ResponseWriter, r *http.Request) {
	sess := currentSession(w, r, app.st.Load())
	if sess == nil {
		seeOther(w, "/signin")
		return
	}
	writeMypage(w, sess, memos(&sess.user.all))
}

func (app *App) postMemo(w http.ResponseWriter, r *http.Request) {
	sess := currentSession(w, r, app.st.Load())
	if sess == nil {
		writeError(w, nil, http.StatusForbidden, msgSignIn)
		return
	}
	if !validCSRF(r, sess) {
		writeError(w, sess, http.StatusBadRequest, msgExpired)
		return
	}
	content := r.PostFormValue("content")
	if !validText(content, 1, maxContent) || title(content) == "" {
		writeError(w, sess, http.StatusBadRequest, msgBadMemo)
		return
	}
	private := r.PostFormValue("is_private") == "1"
	// Rendered before taking the write lock: the lock is held for the insert and the publishing only.
	html, err := app.renderMarkdown(content)
	if err != nil {
		serverError(w, err)
		return
	}
	id, err := app.insertMemo(sess, content, private, html)
	if errors.Is(err, errSignedOut) {
		writeError(w, nil, http.StatusForbidden, msgSignIn)
		return
	} else if err != nil {
		serverError(w, err)
		return
	}
	seeOther(w, "/memos/"+strconv.FormatInt(id, 10))
}

// Signing in and out.

func (app *App) getSignin(w http.ResponseWriter, r *http.Request) {
	writeForm(w, http.StatusOK, currentSession(w, r, app.st.Load()), &signinForm, "", "")
}

func (app *App) postSignin(w http.ResponseWriter, r *http.Request) {
	st := app.st.Load()
	sess := currentSession(w, r, st)
	username := r.PostFormValue("username")
	password := r.PostFormValue("password")
	u := st.user(username)
	if u == nil || hashPassword(u.salt, password) != u.hash {
		writeForm(w, http.StatusUnauthorized, sess, &signinForm, msgWrongPass, username)
		return
	}
	s, err := app.signIn(u, cookieSession(r))
	if errors.Is(err, errSignedOut) {
		// POST /initialize deleted the user in the meantime.
		writeForm(w, http.StatusUnauthorized, nil, &signinForm, msgWrongPass, username)
		return
	} else if err != nil {
		serverError(w, err)
		return
	}
	setSessionCookie(w, s)
	seeOther(w, "/mypage")
}

func (app *App) getSignup(w http.ResponseWriter, r *http.Request) {
	writeForm(w, http.StatusOK, currentSession(w, r, app.st.Load()), &signupForm, "", "")
}

func (app *App) postSignup(w http.ResponseWriter, r *http.Request) {
	st := app.st.Load()
	sess := currentSession(w, r, st)
	username := r.PostFormValue("username")
	password := r.PostFormValue("password")
	if !validName(username) || !validText(password, minPassword, maxPassword) {
		writeForm(w, http.StatusBadRequest, sess, &signupForm, msgBadSignup, username)
		return
	}
	if st.user(username) != nil {
		writeForm(w, http.StatusConflict, sess, &signupForm, msgTaken, username)
		return
	}
	s, err := app.insertUser(username, password, cookieSession(r))
	if errors.Is(err, errTaken) {
		writeForm(w, http.StatusConflict, sess, &signupForm, msgTaken, username)
		return
	} else if err != nil {
		serverError(w, err)
		return
	}
	setSessionCookie(w, s)
	seeOther(w, "/mypage")
}

func setSessionCookie(w http.ResponseWriter, s *session) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode})
	w.Header()["Cache-Control"] = []string{"private"}
}

func (app *App) postSignout(w http.ResponseWriter, r *http.Request) {
	sess := currentSession(w, r, app.st.Load())
	if sess != nil {
		if !validCSRF(r, sess) {
			writeError(w, sess, http.StatusBadRequest, msgExpired)
			return
		}
		if err := app.signOut(sess); err != nil {
			serverError(w, err)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
			SameSite: http.SameSiteLaxMode})
	}
	seeOther(w, "/")
}

// The rest.

// postInitialize restores the initial data by deleting everything added since, and rebuilds the memory.
func (app *App) postInitialize(w http.ResponseWriter, r *http.Request) {
	if err := app.initialize(); err != nil {
		serverError(w, err)
		return
	}
	w.Header()["Content-Type"] = []string{"application/json"}
	io.WriteString(w, `{"language":"go"}`)
}

// parsePage parses the N of /recent/N: 0, or a decimal number without a leading zero, small enough that
// (N+1)*pageSize does not overflow.
func parsePage(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	n, ok := parseID(s)
	return n, ok && n <= math.MaxInt64/pageSize-1
}

// parseID parses a memo id: a positive decimal number without a leading zero that fits an int64.
func parseID(s string) (int64, bool) {
	if s == "" || s[0] == '0' || len(s) > 19 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil
}

// validName reports whether a user name is 3 to 24 characters of a-z, 0-9 and _.
func validName(s string) bool {
	if len(s) < 3 || len(s) > 24 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// validText reports whether s is valid UTF-8 of lo to hi characters.
func validText(s string, lo, hi int) bool {
	n := utf8.RuneCountInString(s)
	return utf8.ValidString(s) && n >= lo && n <= hi
}
