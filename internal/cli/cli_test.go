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
	var rep cli.Repeat
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Runs) != 2 || rep.Mean <= 0 {
		t.Errorf("repeat JSON: %v %+v", err, rep)
	}
}
