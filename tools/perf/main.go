// Command perf measures the engine's efficiency on this machine:
//
//   - requests per CPU-second of a GET-and-validate loop run by the engine,
//     side by side with wrk against the same tiny target, each client held to
//     one core (taskset) and the target to the other;
//   - the memory 1,000 and 10,000 idle virtual users cost (the process's
//     file-descriptor limit is raised for them, or the run says why it
//     cannot be).
//
// The last line is "engine/wrk requests per cpu-second: R". Run it with
// `make perf`.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "target":
			serveTarget()
			return
		case "engine":
			os.Exit(engineLoop(os.Args[2:]))
		case "bare":
			os.Exit(bareLoop(os.Args[2:]))
		}
	}
	if err := measure(); err != nil {
		fmt.Fprintln(os.Stderr, "perf:", err)
		os.Exit(1)
	}
}

const page = `<!DOCTYPE html><html><head><title>perf</title></head><body><ul id="items">` +
	`<li>one</li><li>two</li><li>three</li></ul><p id="total">3</p></body></html>`

// serveTarget serves the tiny page and prints its URL.
func serveTarget() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Printf("http://%s/\n", ln.Addr())
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
}

// loop is a scenario whose users GET and validate as fast as they can.
type loop struct{ checks []engine.Check }

func (l loop) Meta() engine.Meta {
	return engine.Meta{Problem: "perf", Version: "1", Rules: engine.Rules{Weights: map[string]float64{"get": 1}},
		Load: engine.LoadPolicy{Interval: time.Hour}}
}
func (loop) Initialize(context.Context, *engine.Run) error { return nil }
func (loop) PreCheck(context.Context, *engine.Run) error   { return nil }
func (loop) FinalCheck(context.Context, *engine.Run) error { return nil }
func (l loop) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	for ctx.Err() == nil {
		res, err := u.Get(ctx, "GET /", "/")
		if err == nil {
			err = res.Check(l.checks...)
		}
		if err != nil {
			return err
		}
		u.Score("get", res)
	}
	return nil
}

// engineLoop runs the engine for a few seconds and prints its request count.
func engineLoop(args []string) int {
	kit.TuneRuntime() // measure the engine as the tunecon command runs it
	fs := flag.NewFlagSet("engine", flag.ExitOnError)
	target := fs.String("url", "", "target")
	d := fs.Duration("d", 5*time.Second, "duration")
	users := fs.Int("users", 32, "users")
	html := fs.Bool("html", true, "validate the HTML with a CSS selector too")
	profile := fs.String("cpuprofile", "", "write a CPU profile here")
	_ = fs.Parse(args)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			panic(err)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	u, _ := url.Parse(*target)
	checks := []engine.Check{engine.Status(200), engine.ContentType("text/html")}
	if *html {
		checks = append(checks, engine.Text("#total", "3"))
	}
	res := engine.New(loop{checks}, u, engine.WithLoadDuration(*d), engine.WithWorkload(*users)).Run(context.Background())
	if !res.Passed {
		fmt.Fprintln(os.Stderr, res.FailReasons, res.Messages)
		return 1
	}
	fmt.Println(res.Breakdown["get"])
	return 0
}

// bareLoop is the ceiling: net/http's client alone, no engine, no checks.
func bareLoop(args []string) int {
	kit.TuneRuntime()
	target, d, users := args[0], 5*time.Second, 32
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: users}}
	var n atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				res, err := client.Get(target)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	fmt.Println(n.Load())
	return 0
}

type sample struct {
	requests int64
	cpu      time.Duration
}

func (s sample) perCPU() float64 { return float64(s.requests) / s.cpu.Seconds() }

// pinned returns a command held to one core, with one Go thread.
func pinned(core int, name string, args ...string) *exec.Cmd {
	cmd := exec.Command("taskset", append([]string{"-c", strconv.Itoa(core), name}, args...)...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	return cmd
}

func run(cmd *exec.Cmd) (string, time.Duration, error) {
	out, err := cmd.Output()
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	return string(out), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

func measure() error {
	if _, err := exec.LookPath("wrk"); err != nil {
		return fmt.Errorf("wrk is not installed (Debian package wrk; `make perf` installs it when run as root)")
	}
	if runtime.NumCPU() < 2 {
		return fmt.Errorf("needs 2 cores: one for the target, one for the client")
	}
	// Before the target starts, so that it inherits the limit too: it holds
	// the other end of every idle user's connection.
	files := uint64(idleCounts[len(idleCounts)-1]) + 256
	if err := kit.RaiseFileLimit(files); err != nil {
		return fmt.Errorf("the idle-user measure needs %d open files: %w; run `ulimit -n %d` first, or make perf as root", files, err, files)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	u, stop, err := startTarget(self)
	if err != nil {
		return err
	}
	defer stop()
	c := clients{self: self, url: u, seconds: 5, conns: 32}
	fmt.Printf("target %s on core 1; clients on core 0, %d connections, %ds each\n", u, c.conns, c.seconds)
	plain, err := c.engine(false)
	if err != nil {
		return err
	}
	eng, err := c.engine(true)
	if err != nil {
		return err
	}
	wrk, err := c.wrk()
	if err != nil {
		return err
	}
	bare, err := c.bare()
	if err != nil {
		return err
	}
	report := func(name string, s sample) {
		fmt.Printf("%-40s %9d requests %6.2f cpu-s %9.0f req/cpu-s\n", name, s.requests, s.cpu.Seconds(), s.perCPU())
	}
	report("engine, GET + status + content type", plain)
	report("engine, GET + status + type + HTML text", eng)
	report("net/http client alone (no engine)", bare)
	report("wrk (no validation)", wrk)

	mbs, err := idleUsers(u, idleCounts)
	if err != nil {
		return err
	}
	for i, n := range idleCounts {
		fmt.Printf("%d idle virtual users (one keep-alive connection each): %.1f MB\n", n, mbs[i])
	}
	fmt.Printf("engine/wrk requests per cpu-second: %.2f\n", eng.perCPU()/wrk.perCPU())
	return nil
}

// startTarget starts this program's target on core 1 and returns its URL
// and a function that stops it.
func startTarget(self string) (string, func(), error) {
	target := pinned(1, self, "target")
	stdout, err := target.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := target.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = target.Process.Kill(); _ = target.Wait() }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("target did not start: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}

// clients runs each client on core 0 against the target at url, for
// seconds with conns connections.
type clients struct {
	self, url      string
	seconds, conns int
}

// engine measures the engine's GET loop, with an HTML text check or without.
func (c clients) engine(html bool) (sample, error) {
	out, cpu, err := run(pinned(0, c.self, "engine", "-url", c.url, "-d", fmt.Sprintf("%ds", c.seconds),
		"-users", strconv.Itoa(c.conns), "-html="+strconv.FormatBool(html)))
	if err != nil {
		return sample{}, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	return sample{n, cpu}, err
}

var wrkRequests = regexp.MustCompile(`(\d+) requests in`)

// wrk measures wrk, which validates nothing.
func (c clients) wrk() (sample, error) {
	out, cpu, err := run(pinned(0, "wrk", "-t1", "-c"+strconv.Itoa(c.conns), fmt.Sprintf("-d%ds", c.seconds), c.url))
	if err != nil {
		return sample{}, err
	}
	m := wrkRequests.FindStringSubmatch(out)
	if m == nil {
		return sample{}, fmt.Errorf("cannot read wrk's output: %q", out)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return sample{n, cpu}, nil
}

// bare measures Go's net/http client alone.
func (c clients) bare() (sample, error) {
	out, cpu, err := run(pinned(0, c.self, "bare", c.url))
	if err != nil {
		return sample{}, err
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	return sample{n, cpu}, nil
}

// idleCounts are the numbers of idle users measured, one after the other.
var idleCounts = []int{1000, 10000}

// idleUsers creates agents that each made one request and hold their
// connection, up to each of counts in turn, and returns the memory (heap and
// stacks) each number of them takes.
func idleUsers(target string, counts []int) ([]float64, error) {
	u, _ := url.Parse(target)
	measure := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	before := measure()
	var agents []*engine.Agent
	out := make([]float64, len(counts))
	for i, n := range counts {
		for len(agents) < n {
			a := engine.NewAgent(u, engine.AgentConfig{}, nil)
			if _, err := a.Get(context.Background(), "GET /", "/"); err != nil {
				return nil, fmt.Errorf("idle user %d: %w", len(agents)+1, err)
			}
			agents = append(agents, a)
		}
		out[i] = float64(measure()-before) / (1 << 20)
	}
	runtime.KeepAlive(agents)
	return out, nil
}
