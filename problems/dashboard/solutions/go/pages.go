package main

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"log"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	texttemplate "text/template"
	"unicode/utf8"
)

const sessionCookie = "dashboard_session"

// The rules for what people type at sign-up, in characters.
const (
	maxEmail    = 64
	minPassword = 8
	maxPassword = 64
)

// grades lists the grades from the least to the most.
var grades = []string{"micro", "small", "standard", "premium"}

// allowed lists the services each grade may subscribe to, in the manual's order, which is also the order of
// /data's answer.
var allowed = map[string][]string{
	"micro":    {"postal", "postal2", "surname"},
	"small":    {"postal", "postal2", "surname", "givenname"},
	"standard": {"postal", "postal2", "surname", "givenname", "weather"},
	"premium":  {"postal", "postal2", "surname", "givenname", "weather", "security", "attacked"},
}

// refreshMS is the dashboard's refresh interval of each grade, in milliseconds (/user.js).
var refreshMS = map[string]int{"micro": 30000, "small": 30000, "standard": 20000, "premium": 10000}

// params lists each service's parameters, the form fields of /modify.
var params = map[string][]string{
	"postal":    {"code"},
	"postal2":   {"code"},
	"surname":   {"q"},
	"givenname": {"q"},
	"weather":   {"location"},
	"security":  {"req", "token"},
	"attacked":  {"token"},
}

// paramPatterns is what each parameter may hold, as the pattern attribute of its input: always matched whole.
var paramPatterns = map[string]string{
	"code":     `[0-9]{7}`,
	"q":        `[a-z]{1,8}`,
	"location": `L[0-9]{4}`,
	"req":      `[a-z0-9]{1,16}`,
	"token":    `[0-9a-f]{32}`,
}

var paramRegexps = func() map[string]*regexp.Regexp {
	m := map[string]*regexp.Regexp{}
	for name, p := range paramPatterns {
		m[name] = regexp.MustCompile(`^(?:` + p + `)$`)
	}
	return m
}()

// The page templates are the reference's (templates/, embedded): the markup is the same.
//
//go:embed templates
var templateFS embed.FS

// Page is what every page template gets, as in the reference.
type Page struct {
	Title   string
	User    *User // nil when signed out
	Message string
	Email   string
	Grade   string
	Grades  []string
	Forms   []ServiceForm
}

// User is what a page shows of the signed-in user.
type User struct {
	ID    int64
	Email string
	Grade string
}

// Field is an input of a form of /modify.
type Field struct {
	Name, Value, Pattern string
}

// ServiceForm is the form of /modify for one service.
type ServiceForm struct {
	Service    string
	Subscribed bool
	Fields     []Field
}

// pages holds the templates and what is rendered once: the signed-out sign-in and sign-up pages, /user.js of
// each grade.
type pages struct {
	templates map[string]*template.Template
	login     []byte
	signup    []byte
	userJS    map[string][]byte
}

func newPages() (*pages, error) {
	p := &pages{templates: map[string]*template.Template{}, userJS: map[string][]byte{}}
	for _, name := range []string{"index", "signup", "login", "modify", "error"} {
		t, err := template.ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		p.templates[name] = t
	}
	var err error
	if p.login, err = p.render("login", Page{Title: "Log in"}); err != nil {
		return nil, err
	}
	if p.signup, err = p.render("signup", Page{Title: "Sign up", Grades: grades}); err != nil {
		return nil, err
	}
	// /user.js is JavaScript, not HTML: text/template, which escapes nothing; all it gets is a number.
	userJS, err := texttemplate.ParseFS(templateFS, "templates/user.js")
	if err != nil {
		return nil, err
	}
	for grade, ms := range refreshMS {
		var buf bytes.Buffer
		if err := userJS.Execute(&buf, ms); err != nil {
			return nil, err
		}
		p.userJS[grade] = buf.Bytes()
	}
	return p, nil
}

func (p *pages) render(name string, page Page) ([]byte, error) {
	var buf bytes.Buffer
	if err := p.templates[name].ExecuteTemplate(&buf, "layout", page); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pageUser is what a page shows of u (nil: signed out).
func pageUser(u *user) *User {
	if u == nil {
		return nil
	}
	return &User{ID: u.id, Email: u.email, Grade: u.grade}
}

func writeHTML(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"text/html; charset=utf-8"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

func (app *App) render(w http.ResponseWriter, status int, name string, page Page) {
	body, err := app.pages.render(name, page)
	if err != nil {
		app.serverError(w, err)
		return
	}
	writeHTML(w, status, body)
}

// renderError writes an error page, with the header of u (nil: signed out).
func (app *App) renderError(w http.ResponseWriter, u *user, status int, message string) {
	app.render(w, status, "error", Page{Title: fmt.Sprint(status), User: pageUser(u), Message: message})
}

// serverError writes the page of an error of the app's own, signed out.
func (app *App) serverError(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	body, rerr := app.pages.render("error", Page{Title: "500", Message: "Something went wrong."})
	if rerr != nil {
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	writeHTML(w, http.StatusInternalServerError, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		log.Printf("error: %v", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func seeOther(w http.ResponseWriter, location string) {
	w.Header()["Location"] = []string{location}
	w.WriteHeader(http.StatusSeeOther)
}

// currentUser returns the request's signed-in user and the session's token, or nil when its cookie names no
// session (or it has none). An answer to a request that carries a session cookie is for that browser only:
// currentUser marks it Cache-Control: private, even when the session is unknown, as the reference does.
func (app *App) currentUser(w http.ResponseWriter, r *http.Request) (*user, string) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, ""
	}
	w.Header()["Cache-Control"] = []string{"private"}
	return app.st.Load().session(c.Value), c.Value
}

func (app *App) notFound(w http.ResponseWriter, r *http.Request) {
	u, _ := app.currentUser(w, r)
	app.renderError(w, u, http.StatusNotFound, "There is no such page.")
}

func (app *App) getSignup(w http.ResponseWriter, r *http.Request) {
	u, _ := app.currentUser(w, r)
	if u == nil {
		writeHTML(w, http.StatusOK, app.pages.signup)
		return
	}
	app.render(w, http.StatusOK, "signup", Page{Title: "Sign up", User: pageUser(u), Grades: grades})
}

func (app *App) postSignup(w http.ResponseWriter, r *http.Request) {
	u, _ := app.currentUser(w, r)
	email := r.PostFormValue("email")
	password := r.PostFormValue("password")
	grade := r.PostFormValue("grade")
	page := Page{Title: "Sign up", User: pageUser(u), Grades: grades, Email: email, Grade: grade}
	if !utf8.ValidString(email) || strings.Count(email, "@") != 1 || utf8.RuneCountInString(email) > maxEmail ||
		!between(utf8.RuneCountInString(password), minPassword, maxPassword) || !slices.Contains(grades, grade) {
		page.Message = fmt.Sprintf("An email has one @ and at most %d characters; a password is %d to %d "+
			"characters long; the grade is one of %s.", maxEmail, minPassword, maxPassword, strings.Join(grades, ", "))
		app.render(w, http.StatusBadRequest, "signup", page)
		return
	}
	taken, err := app.signUp(email, password, grade)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if taken {
		page.Message = "This email is taken."
		app.render(w, http.StatusConflict, "signup", page)
		return
	}
	seeOther(w, "/login")
}

func (app *App) getLogin(w http.ResponseWriter, r *http.Request) {
	u, _ := app.currentUser(w, r)
	if u == nil {
		writeHTML(w, http.StatusOK, app.pages.login)
		return
	}
	app.render(w, http.StatusOK, "login", Page{Title: "Log in", User: pageUser(u)})
}

func (app *App) postLogin(w http.ResponseWriter, r *http.Request) {
	current, oldToken := app.currentUser(w, r)
	email := r.PostFormValue("email")
	u := app.authenticate(email, r.PostFormValue("password"))
	if u == nil {
		app.render(w, http.StatusForbidden, "login", Page{Title: "Log in", User: pageUser(current),
			Message: "Wrong email or password.", Email: email})
		return
	}
	token, err := app.signIn(u, oldToken)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if token == "" { // POST /initialize removed the user meanwhile
		app.render(w, http.StatusForbidden, "login", Page{Title: "Log in", User: pageUser(current),
			Message: "Wrong email or password.", Email: email})
		return
	}
	// The dashboard's first /data comes right after this page: start asking the services now.
	app.svc.Load().warm(u.subscriptions())
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode})
	w.Header()["Cache-Control"] = []string{"private"}
	seeOther(w, "/")
}

func (app *App) postLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		w.Header()["Cache-Control"] = []string{"private"}
		if err := app.signOut(c.Value); err != nil {
			app.serverError(w, err)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
			SameSite: http.SameSiteLaxMode})
	}
	seeOther(w, "/login")
}

func (app *App) getIndex(w http.ResponseWriter, r *http.Request) {
	u, _ := app.currentUser(w, r)
	if u == nil {
		seeOther(w, "/login")
		return
	}
	// A user's email and grade never change: the page is rendered once per user.
	page := u.index.Load()
	if page == nil {
		body, err := app.pages.render("index", Page{Title: "Dashboard", User: pageUser(u)})
		if err != nil {
			app.serverError(w, err)
			return
		}
		page = &body
		u.index.Store(page)
	}
	writeHTML(w, http.StatusOK, *page)
}

func (app *App) getUserJS(w http.ResponseWriter, r *http.Request) {
	u, _ := app.currentUser(w, r)
	if u == nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "sign in first\n")
		return
	}
	body := app.pages.userJS[u.grade]
	h := w.Header()
	h["Content-Type"] = []string{"application/javascript"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.Write(body)
}

func (app *App) getModify(w http.ResponseWriter, r *http.Request) {
	u, _ := app.currentUser(w, r)
	if u == nil {
		seeOther(w, "/login")
		return
	}
	subs := u.subscriptions()
	var forms []ServiceForm
	for _, service := range allowed[u.grade] {
		current, subscribed := subs[service]
		form := ServiceForm{Service: service, Subscribed: subscribed}
		for _, name := range params[service] {
			form.Fields = append(form.Fields, Field{Name: name, Value: current[name], Pattern: paramPatterns[name]})
		}
		forms = append(forms, form)
	}
	app.render(w, http.StatusOK, "modify", Page{Title: "Services", User: pageUser(u), Forms: forms})
}

func (app *App) postModify(w http.ResponseWriter, r *http.Request) {
	u, token := app.currentUser(w, r)
	if u == nil {
		app.renderError(w, nil, http.StatusForbidden, "Sign in to change your services.")
		return
	}
	service := r.PostFormValue("service")
	if _, ok := params[service]; !ok {
		app.renderError(w, u, http.StatusBadRequest, "There is no such service.")
		return
	}
	if !slices.Contains(allowed[u.grade], service) {
		app.renderError(w, u, http.StatusForbidden, fmt.Sprintf("The %s grade cannot subscribe to %s.", u.grade, service))
		return
	}
	var values map[string]string // nil: a removal
	if r.PostFormValue("remove") != "1" {
		values = map[string]string{}
		for _, name := range params[service] {
			v := r.PostFormValue(name)
			if !paramRegexps[name].MatchString(v) {
				app.renderError(w, u, http.StatusBadRequest, fmt.Sprintf("%s: %s %q is not valid.", service, name, v))
				return
			}
			values[name] = v
		}
	}
	ok, err := app.subscribe(token, u, service, values)
	if err != nil {
		app.serverError(w, err)
		return
	}
	if !ok { // signed out (or POST /initialize) meanwhile
		app.renderError(w, nil, http.StatusForbidden, "Sign in to change your services.")
		return
	}
	if values != nil {
		// The next /data needs the new parameters' answer: ask for it now.
		app.svc.Load().warm(Subscriptions{service: values})
	}
	seeOther(w, "/modify")
}

// postInitialize restores the initial data, takes the services' base URLs and starts every cache afresh.
func (app *App) postInitialize(w http.ResponseWriter, r *http.Request) {
	var body struct {
		HTTP  *string `json:"http"`
		HTTPS *string `json:"https"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.HTTP == nil || body.HTTPS == nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `want a JSON body {"http": "URL", "https": "URL"}`})
		return
	}
	httpURL, httpsURL := strings.TrimRight(*body.HTTP, "/"), strings.TrimRight(*body.HTTPS, "/")
	if err := app.initialize(httpURL, httpsURL); err != nil {
		app.serverError(w, err)
		return
	}
	app.svc.Swap(newWorld(httpURL, httpsURL)).close()
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func between(n, lo, hi int) bool { return lo <= n && n <= hi }
