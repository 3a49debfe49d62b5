package kit_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems/example"
)

func TestTryServesBenchesAndStops(t *testing.T) {
	res, err := kit.Try(context.Background(), example.Problem, kit.ServeConfig{Log: io.Discard},
		engine.WithLoadDuration(time.Second), engine.WithSeed(9))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome() != engine.Passed || res.Seed != 9 || res.Problem != example.Name {
		t.Errorf("outcome %s seed %d problem %q reasons %q", res.Outcome(), res.Seed, res.Problem, res.FailReasons)
	}
}

func TestServeRefusesWhatTheProblemLacks(t *testing.T) {
	ctx := context.Background()
	if _, err := example.Problem.Serve(ctx, kit.ServeConfig{Lang: "cobol", Log: io.Discard}); err == nil || !strings.Contains(err.Error(), "cobol") {
		t.Errorf("an unknown language: %v", err)
	}
	if _, err := example.Problem.Serve(ctx, kit.ServeConfig{Addr: "127.0.0.1:0", DB: "mysql://x", Log: io.Discard}); err == nil {
		t.Error("an in-memory problem accepted a database")
	}
	if _, err := example.Problem.Serve(ctx, kit.ServeConfig{Lang: kit.TunedLang, Log: io.Discard}); err == nil {
		t.Error("a problem without a tuned solution served one")
	}
}

func TestFindRoot(t *testing.T) {
	root, err := kit.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "problems", "problems.go")); err != nil {
		t.Errorf("root %s: %v", root, err)
	}
	if _, err := kit.FindRoot(t.TempDir()); err == nil {
		t.Error("found a root outside the tree")
	}
}
