package engine

import (
	"context"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// TestSplitParts: a profile's CPU samples are summed by the part label, as
// shares of all samples.
func TestSplitParts(t *testing.T) {
	t.Parallel()
	prof := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	add := func(ns int64, part string) {
		s := &profile.Sample{Value: []int64{1, ns}}
		if part != "" {
			s.Label = map[string][]string{PartLabel: {part}}
		}
		prof.Sample = append(prof.Sample, s)
	}
	add(3e9, "services")
	add(1e9, "services")
	add(4e9, "")
	add(2e9, "other")
	got, note := splitParts(prof, []string{"services", "missing"})
	if note != "" || len(got) != 2 || got[0] != (PartCPU{"services", 4, 0.4}) || got[1] != (PartCPU{"missing", 0, 0}) {
		t.Errorf("%+v %q", got, note)
	}
	prof.SampleType = prof.SampleType[:1]
	if _, note := splitParts(prof, []string{"services"}); !strings.Contains(note, "no cpu samples") {
		t.Errorf("a profile without cpu samples: %q", note)
	}
}

// TestPartProfile: the CPU of a goroutine run as a part, and of the goroutines
// it starts, is the part's; when another CPU profile runs, the part's CPU is
// unknown and the note says so.
func TestPartProfile(t *testing.T) {
	// Not parallel: the process has one CPU profiler.
	p := startPartProfile([]string{"busy"})
	done := make(chan struct{})
	go Part(context.Background(), "busy", func(context.Context) {
		go func() { // inherits the label
			defer close(done)
			for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
			}
		}()
	})
	<-done
	parts, note := p.finish()
	if note != "" || len(parts) != 1 || parts[0].Share < 0.5 {
		t.Errorf("a busy part: %+v %q, want most of the CPU", parts, note)
	}

	if err := pprof.StartCPUProfile(new(strings.Builder)); err != nil {
		t.Fatal(err)
	}
	defer pprof.StopCPUProfile()
	if parts, note := startPartProfile([]string{"busy"}).finish(); parts != nil || !strings.Contains(note, "unknown") {
		t.Errorf("with a profile already running: %+v %q", parts, note)
	}
	if startPartProfile(nil) != nil {
		t.Error("no parts, yet a profile")
	}
}
