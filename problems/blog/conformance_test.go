package blog_test

import (
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/apptest"
)

// TestConformance runs the pre-check and a short load against every
// language and store, and the Go app behind nginx with the sample
// configuration: each must pass with 0 fails.
func TestConformance(t *testing.T) {
	cases := []struct {
		lang, store string
		nginx       bool
	}{
		{"go", "sqlite", false},
		{"go", "mariadb", false},
		{"python", "sqlite", false},
		{"python", "mariadb", false},
		{"go", "sqlite", true},
	}
	for _, c := range cases {
		name := c.lang + "+" + c.store
		if c.nginx {
			name += "+nginx"
		}
		t.Run(name, func(t *testing.T) {
			target := startApp(t, c.lang, c.store)
			if c.nginx {
				target = behindNginx(t, target)
			}
			res := bench(t, target, 10*time.Second)
			if !res.Passed || res.Errors.Charged() != 0 || res.Breakdown["page"] == 0 {
				t.Fatalf("passed=%v errors=%+v reasons=%q messages=%q", res.Passed, res.Errors, res.FailReasons, res.Messages)
			}
		})
	}
}

// behindNginx starts nginx with problems/blog/nginx/blog.conf in front of
// app, changing only its three placeholders: the port, the app's address and
// the path of the static files.
func behindNginx(t *testing.T, app *url.URL) *url.URL {
	public, _ := filepath.Abs("webapp/public")
	return apptest.BehindNginx(t, "nginx/blog.conf", app,
		[2]string{"listen 80;", "listen 127.0.0.1:{{PORT}};"},
		[2]string{"server 127.0.0.1:8080;", "server {{APP}};"},
		[2]string{"alias /path/to/tunecon/problems/blog/webapp/public/;", "alias " + public + "/;"})
}
