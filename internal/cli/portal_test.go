package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/cli"
)

// lockedBuffer is a buffer that a command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPortalServesAContest: an admin made from the command line (the
// password from stdin, never a default) signs in to the portal that
// `tunecon portal` serves, and the portal stops cleanly when interrupted.
func TestPortalServesAContest(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "contest.db")
	admin := func(stdin string) (int, string) {
		var out, errOut bytes.Buffer
		code := cli.Run(context.Background(), []string{"portal", "admin", "create", "--db", dsn, "--login", "root"},
			cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut, Getenv: os.Getenv})
		return code, out.String() + errOut.String()
	}
	if code, out := admin("short\n"); code != cli.ExitUsage || !strings.Contains(out, "a password has 8 to 72 bytes") {
		t.Errorf("a short password: exit %d, %q", code, out)
	}
	if code, out := admin("correct horse battery\n"); code != 0 || !strings.Contains(out, "admin root created") {
		t.Fatalf("admin create: exit %d, %q", code, out)
	}
	if code, out := admin("another password\n"); code != cli.ExitUsage || !strings.Contains(out, "taken") {
		t.Errorf("a second root: exit %d, %q", code, out)
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	stderr := &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, []string{"portal", "--db", dsn, "--addr", "127.0.0.1:0", "--workers", "0"},
			cli.Env{Stdout: io.Discard, Stderr: stderr, Getenv: os.Getenv})
	}()
	started := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; {
		if m := started.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the portal did not start: %s", stderr.String())
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 5 * time.Second}
	resp, err := c.PostForm(base+"login", url.Values{"login": {"root"}, "password": {"correct horse battery"}, "next": {"/admin"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/admin" || !strings.Contains(string(body), "Save the settings") {
		t.Errorf("signing in: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	// A live stream open while the portal stops does not hold it up.
	req, _ := http.NewRequest(http.MethodGet, base+"leaderboard/events", nil)
	stream, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	stop()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("the portal exited %d: %s", code, stderr.String())
		}
	case <-time.After(cli.PortalStopWait + cli.WorkerStopWait + 5*time.Second):
		t.Fatal("the portal did not stop")
	}
}

// TestDatabasePasswordNeverShown: the commands that take --db never print
// a password written in it.
func TestDatabasePasswordNeverShown(t *testing.T) {
	dsn := "postgres://contest:s3cret-pw@127.0.0.1:1/contest?connect_timeout=1"
	for _, args := range [][]string{
		{"portal", "migrate", "--db", dsn},
		{"portal", "--db", dsn, "--addr", "127.0.0.1:0"},
		{"worker", "--db", dsn, "--name", "w1"},
	} {
		code, out, errOut := run(t, args...)
		if code == 0 || strings.Contains(out+errOut, "s3cret-pw") {
			t.Errorf("%v: exit %d, printed the password: %q %q", args, code, out, errOut)
		}
	}
}
