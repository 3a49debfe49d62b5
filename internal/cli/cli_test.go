package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/internal/cli"
	"github.com/tunecon/tunecon/problems/example"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(context.Background(), args, cli.Env{Stdout: &out, Stderr: &errOut, Getenv: os.Getenv})
	return code, out.String(), errOut.String()
}

func TestBadUsageIsOneLineAndExit2(t *testing.T) {
	t.Parallel()
	cases := [][]string{
		{},
		{"frobnicate"},
		{"bench"},
		{"bench", "nosuch", "--target", "http://127.0.0.1:1"},
		{"bench", "example"},
		{"bench", "example", "--target", "ftp://x"},
		{"bench", "example", "--target", "http://127.0.0.1:1", "--duration", "0s"},
		{"bench", "example", "--target", "http://127.0.0.1:1", "--duration", "soon"},
		{"bench", "example", "--target", "http://127.0.0.1:1", "--workload", "-1"},
		{"bench", "example", "--target", "http://127.0.0.1:1", "--repeat", "0"},
		{"bench", "example", "--target", "http://127.0.0.1:1", "--nosuchflag"},
		{"bench", "example", "extra", "--target", "http://127.0.0.1:1"},
		{"try", "example", "--lang", "cobol"},
		{"problems", "extra"},
		{"bench", "example", "--target", "http://127.0.0.1:1", "--progress", "loud"},
		{"version", "extra"},
	}
	for _, args := range cases {
		code, _, stderr := run(t, args...)
		if code != cli.ExitUsage {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if len(args) > 0 && !strings.Contains(stderr, "tunecon: ") {
			t.Errorf("%q: no one-line error, stderr %q", args, stderr)
		}
	}
}

func TestProblemsListsExample(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, "problems")
	if code != 0 || !strings.Contains(out, "example") {
		t.Errorf("exit %d, out %q", code, out)
	}
}

func TestBenchPassesAndWritesJSON(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer((&example.App{}).Handler())
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "result.json")
	code, out, stderr := run(t, "bench", "example", "--target", srv.URL, "--duration", "2s", "--seed", "5", "--json", path)
	if code != cli.ExitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, line := range []string{"Result:   SUCCESS", "RawScore: ", "Fails:    0", "Score:    "} {
		if !strings.Contains(out, line) {
			t.Errorf("summary lacks %q:\n%s", line, out)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"problem", "passed", "score", "raw_score", "deduction", "errors", "messages",
		"endpoints", "timeline", "benchmarker", "seed", "engine_version", "scenario_version"} {
		if _, ok := res[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
	if res["seed"].(float64) != 5 || res["passed"] != true {
		t.Errorf("seed %v passed %v", res["seed"], res["passed"])
	}
}

func TestBenchFailsWithExit1(t *testing.T) {
	t.Parallel()
	// Nothing listens on port 1: initialize fails, the run fails.
	code, out, _ := run(t, "bench", "example", "--target", "http://127.0.0.1:1", "--duration", "1s")
	if code != cli.ExitFail || !strings.Contains(out, "Result:   FAIL") {
		t.Errorf("exit %d, out %q", code, out)
	}
}

func TestTryRepeatReportsVariance(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.json")
	code, out, stderr := run(t, "try", "example", "--duration", "1s", "--repeat", "2", "--json", path)
	if code != cli.ExitPass || !strings.Contains(out, "Scores over 2 runs: mean ") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	var rep engine.Repeat
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Runs) != 2 || rep.Mean <= 0 {
		t.Errorf("repeat JSON: %v %+v", err, rep)
	}
}

// TestTryPin: try says where the app and the benchmarker run; --pin on
// fails when they cannot be split (the example serves inside this process)
// and a --pin other than auto, on or off is a usage error. Splitting for
// real changes the process's CPUs, which kit's own test does in a child.
func TestTryPin(t *testing.T) {
	t.Parallel()
	code, _, stderr := run(t, "try", "example", "--duration", "1s")
	if code != cli.ExitPass || !strings.HasPrefix(stderr, "not pinned: problem example serves its app inside this process") {
		t.Errorf("auto: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := run(t, "try", "example", "--duration", "1s", "--pin", "on"); code == cli.ExitPass ||
		!strings.Contains(stderr, "--pin on: problem example serves its app inside this process") {
		t.Errorf("on: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := run(t, "try", "example", "--pin", "half"); code != cli.ExitUsage || !strings.Contains(stderr, `not "half"`) {
		t.Errorf("half: exit %d\n%s", code, stderr)
	}
}

// TestProgressJSONL: with --progress jsonl, stdout is JSON lines only: a
// progress line every second of the run and a result line at the end of
// each run, then a repeat line; the summary goes to stderr.
func TestProgressJSONL(t *testing.T) {
	t.Parallel()
	code, out, stderr := run(t, "try", "example", "--duration", "2s", "--repeat", "2", "--seed", "3", "--progress", "jsonl")
	if code != cli.ExitPass || !strings.Contains(stderr, "Result:   SUCCESS") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	events := map[string]int{}
	phases := map[string]bool{}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var ev struct {
			Event   string              `json:"event"`
			Run     int                 `json:"run"`
			Phase   string              `json:"phase"`
			Elapsed *float64            `json:"elapsed_s"`
			Errors  *engine.ErrorCounts `json:"errors"`
			Users   int                 `json:"users"`
			Outcome string              `json:"outcome"`
			Result  *engine.Result      `json:"result"`
			Mean    float64             `json:"score_mean"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, line)
		}
		events[ev.Event]++
		switch ev.Event {
		case "progress":
			if ev.Run < 1 || ev.Run > 2 || ev.Phase == "" || ev.Elapsed == nil || ev.Errors == nil {
				t.Errorf("line %d: incomplete progress %s", i+1, line)
			}
			phases[ev.Phase] = true
		case "result":
			if ev.Outcome != "passed" || ev.Result == nil || ev.Result.Seed != 3 || !ev.Result.Passed {
				t.Errorf("line %d: result %s", i+1, line)
			}
		case "repeat":
			if ev.Mean <= 0 {
				t.Errorf("line %d: repeat %s", i+1, line)
			}
		default:
			t.Errorf("line %d: unknown event %q", i+1, ev.Event)
		}
	}
	if events["result"] != 2 || events["repeat"] != 1 || events["progress"] < 4 || !phases["load"] || !phases["done"] {
		t.Errorf("events %v, phases %v", events, phases)
	}
}

func TestProblemsJSONIsTheDescriptors(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, "problems", "--json")
	var ps []struct {
		Name   string   `json:"name"`
		Langs  []string `json:"langs"`
		Stores []string `json:"stores"`
		Manual string   `json:"manual"`
	}
	if err := json.Unmarshal([]byte(out), &ps); code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	names := map[string]bool{}
	for _, p := range ps {
		names[p.Name] = true
		if len(p.Langs) == 0 || len(p.Stores) == 0 || p.Manual == "" {
			t.Errorf("incomplete descriptor %+v", p)
		}
		if _, err := os.Stat(filepath.Join("..", "..", p.Manual)); err != nil {
			t.Errorf("%s's manual: %v", p.Name, err)
		}
	}
	for _, want := range []string{"blog", "bank", "example"} {
		if !names[want] {
			t.Errorf("--json lacks %s", want)
		}
	}
}

func TestRepeatSeedStep(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.json")
	code, out, stderr := run(t, "try", "example", "--duration", "1s", "--repeat", "2", "--seed", "5", "--seed-step", "10", "--json", path)
	if code != cli.ExitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	var rep engine.Repeat
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Runs) != 2 || rep.Runs[0].Seed != 5 || rep.Runs[1].Seed != 15 {
		t.Errorf("repeat JSON: %v %+v", err, rep)
	}
}

// TestBenchRestartCommand: --restart-command runs between the load and the
// final check, in a phase of its own; a command that fails is the
// benchmarker's error (exit 3), not the app's.
func TestBenchRestartCommand(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer((&example.App{}).Handler())
	defer srv.Close()
	dir := t.TempDir()
	marker, path := filepath.Join(dir, "restarted"), filepath.Join(dir, "result.json")
	code, out, stderr := run(t, "bench", "example", "--target", srv.URL, "--duration", "1s", "--json", path,
		"--restart-command", "touch "+marker)
	if code != cli.ExitPass {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the restart command did not run: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res engine.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, p := range res.Phases {
		phases = append(phases, p.Name)
	}
	if got := strings.Join(phases, " "); got != "initialize pre-check load restart final-check" {
		t.Errorf("phases %q", got)
	}
	code, out, _ = run(t, "bench", "example", "--target", srv.URL, "--duration", "1s", "--restart-command", "exit 7")
	if code != cli.ExitInternal || !strings.Contains(out, "restart") {
		t.Errorf("a restart command that fails: exit %d, want %d\n%s", code, cli.ExitInternal, out)
	}
}
