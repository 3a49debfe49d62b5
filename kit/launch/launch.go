// Package launch starts reference apps as child processes: it builds them,
// runs them with their configuration in the environment, waits until they
// say they are listening, and stops them.
package launch

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ReadyTimeout bounds how long an app may take to start listening (a first
// start loads the initial data).
const ReadyTimeout = 5 * time.Minute

// Config says which reference app to start and where.
type Config struct {
	Lang string
	// Addr is host:port to listen on; port 0 picks a free port.
	Addr string
	// DB is the app's database DSN; empty means its embedded default.
	DB string
	// Root is the repository's root directory (where problems/ lives).
	Root string
	// Log receives the app's own output and setup progress.
	Log io.Writer
	// AppDir, if set, is the source directory to build or run instead of
	// the app's own (tests use it for a patched copy with a defect; a Rust
	// copy's own crate builds without optimisation: see BuildRust).
	AppDir string
	// Env adds NAME=VALUE variables to the app's environment (tests use it
	// to keep an app's own files in their scratch directory).
	Env []string
	// CPUs, if set, are the only CPUs the app and its children may run on,
	// as taskset lists them ("1", "2,3"); the measuring tools put the app
	// and the benchmarker on separate CPUs this way.
	CPUs string
}

// App is a running app.
type App struct {
	URL     string
	stop    func(context.Context) error
	restart func(context.Context) error
}

// NewApp wraps a running app's URL and its stop function.
func NewApp(url string, stop func(context.Context) error) *App { return &App{URL: url, stop: stop} }

// Stop stops the app and waits for it to exit.
func (a *App) Stop(ctx context.Context) error { return a.stop(ctx) }

// WithRestart returns a copy of a whose Restart calls restart: a wrapper's
// (one that adds to Stop) passing the wrapped app's Restart on.
func (a *App) WithRestart(restart func(context.Context) error) *App {
	b := *a
	b.restart = restart
	return &b
}

// CanRestart reports whether Restart can restart the app.
func (a *App) CanRestart() bool { return a.restart != nil }

// ErrNoRestart is Restart's error for an app that cannot be restarted (one
// served inside this process, whose data goes with it).
var ErrNoRestart = errors.New("this app cannot be restarted")

// Restart stops the app and starts it again at the same address, on the
// data it kept. A Restartable app only; others return ErrNoRestart.
func (a *App) Restart(ctx context.Context) error {
	if a.restart == nil {
		return ErrNoRestart
	}
	return a.restart(ctx)
}

// NotBack is Restart's error when the app, once stopped, did not start
// again as it did the first time: the app's fault, not the launcher's.
type NotBack struct{ Err error }

func (e *NotBack) Error() string { return "the app did not start again: " + e.Err.Error() }
func (e *NotBack) Unwrap() error { return e.Err }

// StopGrace is how long an app has to exit after SIGTERM before it is
// killed, as a machine's shutdown gives its services.
const StopGrace = 10 * time.Second

// Restartable returns first as an app whose Restart stops it (within
// StopGrace; a stop that fails is logged to log, and the app started again
// all the same: it has exited either way) and calls start for the address
// first listens on. Stop stops whichever process runs then. A Stop or
// Restart that waits for another gives up when its context ends.
func Restartable(first *App, log io.Writer, start func(ctx context.Context, addr string) (*App, error)) *App {
	// lock is held by a stop or a restart; one that waits for it gives up
	// when its context ends, lest a restart stuck in a start hold a stop.
	lock := make(chan struct{}, 1)
	take := func(ctx context.Context) error {
		select {
		case lock <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	cur := first
	stop := func(ctx context.Context) error {
		if err := take(ctx); err != nil {
			return err
		}
		defer func() { <-lock }()
		if cur == nil {
			return nil
		}
		err := cur.Stop(ctx)
		cur = nil
		return err
	}
	restart := func(ctx context.Context) error {
		if err := take(ctx); err != nil {
			return err
		}
		defer func() { <-lock }()
		if cur == nil {
			return errors.New("the app is not running")
		}
		u, err := url.Parse(first.URL)
		if err != nil {
			return fmt.Errorf("the app reported an unusable URL %q: %w", first.URL, err)
		}
		sctx, cancel := context.WithTimeout(ctx, StopGrace)
		defer cancel()
		if err := cur.Stop(sctx); err != nil {
			fmt.Fprintf(log, "restarting the app: %v\n", err)
		}
		cur = nil
		next, err := start(ctx, u.Host)
		if err != nil {
			return &NotBack{err}
		}
		if next.URL != first.URL {
			_ = next.Stop(sctx)
			return &NotBack{fmt.Errorf("it listens on %s, not on %s as before", next.URL, first.URL)}
		}
		cur = next
		return nil
	}
	return &App{URL: first.URL, stop: stop, restart: restart}
}

// Shell returns the command that runs command with sh -c in a process group
// of its own, all of which is killed when ctx ends: the commands the shell
// started (an ssh, say) as well as the shell.
func Shell(ctx context.Context, command string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second // for output a child that outlived it still holds
	return cmd
}

// stopWithin calls stop with a context that ends after d: past it, the app
// is killed.
func stopWithin(stop func(context.Context) error, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return stop(ctx)
}

// BuildGo builds the Go module in dir into the binary out. Builds of one
// binary take turns on a lock beside it (two test packages, or two `tunecon
// serve`, starting the same app), lest one write the file the other runs.
func BuildGo(ctx context.Context, dir, out string, log io.Writer) error {
	unlock, err := lockFile(out + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	fmt.Fprintf(log, "building %s ...\n", dir)
	// -trimpath: a fresh clone reuses the build cache of another.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %w", dir, err)
	}
	return nil
}

// Pin returns cmd to be run by taskset on the given CPUs only (a list as
// taskset takes it: "1", "2,3"), so that the app and every process it
// starts stay off the others. taskset execs the app in its place, so the
// process, its group and its signals are the app's own.
func Pin(cmd *exec.Cmd, cpus string) (*exec.Cmd, error) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return nil, fmt.Errorf("pinning the app to CPUs %s needs taskset (Debian package util-linux): %w", cpus, err)
	}
	pinned := exec.Command(taskset, append([]string{"--cpu-list", cpus, cmd.Path}, cmd.Args[1:]...)...)
	pinned.Dir, pinned.Env = cmd.Dir, cmd.Env
	return pinned, nil
}

// listening is the line every reference app logs once it accepts requests.
var listening = regexp.MustCompile(`listening on (https?://\S+)`)

// Start runs cmd (its output goes to log, each line prefixed) and returns
// once it logs "listening on URL", or fails if it exits or takes longer than
// ReadyTimeout.
func Start(ctx context.Context, cmd *exec.Cmd, name string, log io.Writer) (*App, error) {
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			fmt.Fprintf(log, "[%s] %s\n", name, sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil && !sent {
				ready <- m[1]
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()

	var once sync.Once
	var stopErr error
	stop := func(ctx context.Context) error {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case err := <-exited:
				var ee *exec.ExitError
				if err != nil && !(errors.As(err, &ee) && !ee.Exited()) {
					stopErr = fmt.Errorf("%s exited: %w", name, err)
				}
			case <-ctx.Done():
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
				stopErr = fmt.Errorf("%s did not stop in time and was killed", name)
			}
		})
		return stopErr
	}
	timer := time.NewTimer(ReadyTimeout)
	defer timer.Stop()
	select {
	case url := <-ready:
		return NewApp(url, stop), nil
	case err := <-exited:
		return nil, fmt.Errorf("%s exited before it was ready: %v (its output is above)", name, err)
	case <-timer.C:
		_ = stopWithin(stop, StopGrace)
		return nil, fmt.Errorf("%s did not start listening within %s", name, ReadyTimeout)
	case <-ctx.Done():
		_ = stopWithin(stop, StopGrace)
		return nil, ctx.Err()
	}
}

// Env returns the current environment plus the given variables.
func Env(vars ...string) []string { return append(os.Environ(), vars...) }

// EnsureVenv makes a Python virtualenv at dir with the packages of
// requirements installed, unless it already holds exactly those (a stamp
// file keeps the requirements' hash). Two apps started at once (a test's
// runs side by side, two `tunecon serve`) take turns on a lock file beside
// dir, lest one run pip in a virtualenv the other is still making.
func EnsureVenv(ctx context.Context, dir, requirements string, log io.Writer) error {
	want, err := os.ReadFile(requirements)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(want)
	stamp := filepath.Join(dir, ".requirements.sha256")
	ready := func() bool {
		got, err := os.ReadFile(stamp)
		return err == nil && string(got) == hex.EncodeToString(sum[:])
	}
	if ready() {
		return nil
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	if ready() {
		return nil
	}
	run := func(name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "bin", "python")); err != nil {
		fmt.Fprintf(log, "creating a Python virtualenv in %s ...\n", dir)
		if err := run("python3", "-m", "venv", dir); err != nil {
			return fmt.Errorf("%w (on Debian the venv module is in the package python3-venv)", err)
		}
	}
	fmt.Fprintf(log, "installing %s into %s ...\n", requirements, dir)
	if err := run(filepath.Join(dir, "bin", "pip"), "install", "--quiet", "--disable-pip-version-check", "-r", requirements); err != nil {
		return err
	}
	return os.WriteFile(stamp, []byte(hex.EncodeToString(sum[:])), 0o644)
}

// lockFile waits for an exclusive lock on the file at path, made if
// missing, and returns its release.
func lockFile(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

// IsPython reports whether the app in dir is a Python app: it has a
// requirements.txt.
func IsPython(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "requirements.txt"))
	return err == nil
}
