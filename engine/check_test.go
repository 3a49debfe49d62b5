package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/engine"
)

// TestEveryCheckCanFail: each kind of check passes on a right answer and
// fails, with its code and the request's name, on a wrong one.
func TestEveryCheckCanFail(t *testing.T) {
	t.Parallel()
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "private, max-age=0")
			fmt.Fprint(w, `<html><body><ul id="l"><li>a</li><li>b</li></ul><h1 id="t"> Title </h1></body></html>`)
		case "/bad":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(500)
			fmt.Fprint(w, `<html><body><ul id="l"><li>a</li></ul><h1 id="t">Other</h1></body></html>`)
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"n": 3}`)
		case "/badjson":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"n": "three"`)
		case "/go":
			http.Redirect(w, r, "/there", http.StatusSeeOther)
		case "/go-near":
			http.Redirect(w, r, "/there?x=1", http.StatusSeeOther)
		case "/nostore":
			w.Header().Set("Cache-Control", "no-store")
		case "/privately":
			w.Header().Set("Cache-Control", "max-age=0, privately")
		case "/stay":
			fmt.Fprint(w, "no redirect")
		}
	}))
	a := engine.NewAgent(target, engine.AgentConfig{}, nil)
	defer a.Close()
	get := func(path string) *engine.Response {
		res, err := a.Get(context.Background(), "GET "+path, path)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	var payload struct{ N int }
	toThere := func(loc string) string {
		if loc != "/there" {
			return "expected /there"
		}
		return ""
	}
	cases := []struct {
		name      string
		check     engine.Check
		good, bad string
		code      string
	}{
		{"status", engine.Status(200), "/good", "/bad", "status"},
		{"header", engine.Header("Cache-Control", "private, max-age=0"), "/good", "/bad", "header"},
		{"header token", engine.HeaderHasToken("Cache-Control", "private"), "/good", "/bad", "header"},
		{"content type", engine.ContentType("text/html"), "/good", "/bad", "content-type"},
		{"count", engine.Count("#l li", 2), "/good", "/bad", "html"},
		{"exists", engine.Exists("#l li + li"), "/good", "/bad", "html"},
		{"text", engine.Text("#t", "Title"), "/good", "/bad", "html"},
		{"html func", engine.HTML(func(d *goquery.Document) error {
			if d.Find("li").First().Text() != "a" || d.Find("h1").Text() == "Other" {
				return engine.Fail("html", "wrong page")
			}
			return nil
		}), "/good", "/bad", "html"},
		{"json", engine.JSON(&payload), "/json", "/badjson", "json"},
		{"json content type", engine.JSON(&payload), "/json", "/good", "content-type"},
		{"redirect", engine.RedirectTo(toThere), "/go", "/stay", "status"},
		{"redirect exactly", engine.RedirectExactly("/there"), "/go", "/go-near", "redirect"},
		{"private", engine.Private(), "/good", "/nostore", "cache-control"},
		{"private token", engine.Private(), "/good", "/privately", "cache-control"},
		{"private or no-store", engine.Private("no-store"), "/nostore", "/bad", "cache-control"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := get(c.good).Check(c.check); err != nil {
				t.Fatalf("a right answer failed: %v", err)
			}
			err := get(c.bad).Check(c.check)
			var e *engine.Error
			if !errors.As(err, &e) {
				t.Fatalf("a wrong answer passed (err %v)", err)
			}
			if e.Code != c.code || e.Class != engine.ClassApplication || e.Request != "GET "+c.bad {
				t.Errorf("got code %q class %s request %q, want %q application %q", e.Code, e.Class, e.Request, c.code, "GET "+c.bad)
			}
			if !strings.HasPrefix(err.Error(), "GET "+c.bad+": ") {
				t.Errorf("message %q does not name the request", err)
			}
			crit := get(c.bad).Check(engine.Critical(c.check))
			if !errors.As(crit, &e) || e.Class != engine.ClassCritical {
				t.Errorf("Critical() did not raise the class: %v", crit)
			}
		})
	}
}

func TestRedirectsAreNotFollowedAndCookiesAreKeptPerAgent(t *testing.T) {
	t.Parallel()
	target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "alice", Path: "/"})
			http.Redirect(w, r, "/me", http.StatusFound)
		case "/me":
			c, err := r.Cookie("s")
			if err != nil {
				fmt.Fprint(w, "nobody")
				return
			}
			fmt.Fprint(w, c.Value)
		}
	}))
	alice := engine.NewAgent(target, engine.AgentConfig{}, nil)
	bob := engine.NewAgent(target, engine.AgentConfig{}, nil)
	ctx := context.Background()
	res, err := alice.Get(ctx, "GET /login", "/login")
	if err != nil || res.StatusCode != http.StatusFound {
		t.Fatalf("want the 302 itself, got %v %v", res, err)
	}
	for _, c := range []struct {
		a    *engine.Agent
		want string
	}{{alice, "alice"}, {bob, "nobody"}} {
		res, err := c.a.Get(ctx, "GET /me", "/me")
		if err != nil || string(res.Body) != c.want {
			t.Errorf("got %q %v, want %q", res.Body, err, c.want)
		}
	}
}
