package launch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// pidServer answers every request with its process id, at $ADDR.
const pidServer = `
import http.server, os
host, port = os.environ["ADDR"].rsplit(":", 1)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(str(os.getpid()).encode())
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer((host, int(port)), H)
print("listening on http://%s:%d" % srv.server_address, flush=True)
srv.serve_forever()
`

// pid asks the app at url for its process id.
func pid(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// startPidServer starts pidServer at addr, or, when fail, a command that
// exits before it listens.
func startPidServer(ctx context.Context, addr string, fail bool) (*App, error) {
	cmd := exec.Command("python3", "-c", pidServer)
	if fail {
		cmd = exec.Command("sh", "-c", "echo cannot open the database; exit 3")
	}
	cmd.Env = Env("ADDR=" + addr)
	return Start(ctx, cmd, "pid-server", io.Discard)
}

// TestRestartableKeepsTheAddress: a restart stops the app's process and
// starts another at the same address, which Stop then stops; a start that
// fails the second time is the app's failure (NotBack).
func TestRestartableKeepsTheAddress(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	starts := 0
	start := func(ctx context.Context, addr string) (*App, error) {
		starts++
		return startPidServer(ctx, addr, starts == 3)
	}
	first, err := start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	app := Restartable(first, io.Discard, start)
	defer app.Stop(context.Background())
	before := pid(t, app.URL)
	if err := app.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if after := pid(t, first.URL); after == before {
		t.Errorf("the same process (%s) answers after the restart", after)
	}
	err = app.Restart(ctx)
	var notBack *NotBack
	if !errors.As(err, &notBack) || !strings.Contains(err.Error(), "exited before it was ready") {
		t.Errorf("a start that fails: %v, want NotBack", err)
	}
	if _, err := http.Get(app.URL); err == nil {
		t.Errorf("an app answers at %s after its restart failed", app.URL)
	}
	if err := app.Stop(ctx); err != nil {
		t.Errorf("stopping after a failed restart: %v", err)
	}
}

// TestRestartableStopsTheNewProcess: Stop after a restart stops the process
// the restart started; a Stop that waits for a restart stuck in its start
// gives up when its context ends.
func TestRestartableStopsTheNewProcess(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := func(ctx context.Context, addr string) (*App, error) { return startPidServer(ctx, addr, false) }
	first, err := start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	app := Restartable(first, io.Discard, start)
	if err := app.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := app.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(app.URL); err == nil {
		t.Errorf("an app still answers at %s after Stop", app.URL)
	}

	stuck := make(chan struct{})
	first, err = start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	app = Restartable(first, io.Discard, func(ctx context.Context, addr string) (*App, error) {
		close(stuck)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	go app.Restart(rctx)
	<-stuck
	sctx, scancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer scancel()
	if err := app.Stop(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a Stop behind a stuck restart: %v, want it to give up", err)
	}
}
