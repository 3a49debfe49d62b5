package blog_test

import (
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/tunecon/tunecon/kit/apptest"
)

// TestConformance runs the pre-check and a short load against every
// language and store, and the Go app behind nginx with the sample
// configuration: each must pass with 0 fails, the apps scoring pages,
// comments and articles.
func TestConformance(t *testing.T) {
	apps.Conformance(t, 10*time.Second, "page", "comment", "article")
	t.Run("go+sqlite+nginx", func(t *testing.T) {
		apptest.ExpectClean(t, bench(t, behindNginx(t, startApp(t, "go", "sqlite")), 10*time.Second), "page")
	})
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
