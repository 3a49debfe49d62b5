package blog_test

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/servers"
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
	t.Helper()
	sample, err := os.ReadFile("nginx/blog.conf")
	if err != nil {
		t.Fatal(err)
	}
	public, _ := filepath.Abs("webapp/public")
	conf := string(sample)
	for _, r := range [][2]string{
		{"listen 80;", "listen 127.0.0.1:{{PORT}};"},
		{"server 127.0.0.1:8080;", "server " + app.Host + ";"},
		{"alias /path/to/tunecon/problems/blog/webapp/public/;", "alias " + public + "/;"},
	} {
		if !strings.Contains(conf, r[0]) {
			t.Fatalf("nginx/blog.conf no longer contains %q", r[0])
		}
		conf = strings.ReplaceAll(conf, r[0], r[1])
	}
	dir := t.TempDir()
	var log bytes.Buffer
	n, err := servers.StartNginx(context.Background(), dir, conf, &syncWriter{w: &log})
	if err != nil {
		err = &wrapped{err, log.String()}
	}
	servers.Require(t, err)
	t.Cleanup(func() {
		n.Stop()
		if t.Failed() {
			t.Logf("nginx's log:\n%s", log.String())
		}
	})
	u, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(n.Port) + "/")
	return u
}

type wrapped struct {
	err error
	log string
}

func (w *wrapped) Error() string { return w.err.Error() + "\n" + w.log }
func (w *wrapped) Unwrap() error { return w.err }
