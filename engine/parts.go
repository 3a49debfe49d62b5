package engine

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"

	"github.com/google/pprof/profile"
)

// PartLabel is the profiler label that names a part of the benchmarker.
const PartLabel = "tunecon_part"

// Part runs f as the named part of the benchmarker: the CPU that f and every
// goroutine it starts use (their labels are inherited: a server's connections,
// say) is counted as the part's when the scenario lists the part in
// Meta.Parts. A scenario that hosts services for the app starts them this way,
// so that the result says how much of the benchmarker's CPU they took.
func Part(ctx context.Context, name string, f func(context.Context)) {
	pprof.Do(ctx, pprof.Labels(PartLabel, name), f)
}

// PartCPU is the CPU one part of the benchmarker used during the load phase,
// estimated from the profiler's samples (100 a second).
type PartCPU struct {
	Name       string  `json:"name"`
	CPUSeconds float64 `json:"cpu_seconds"`
	// Share is the part's share of the benchmarker's sampled CPU.
	Share float64 `json:"share"`
}

// partProfile samples the benchmarker's CPU during the load phase, to be
// split by part.
type partProfile struct {
	parts []string
	buf   bytes.Buffer
	err   error // the profiler could not start (another profile runs)
}

func startPartProfile(parts []string) *partProfile {
	if len(parts) == 0 {
		return nil
	}
	p := &partProfile{parts: parts}
	if err := pprof.StartCPUProfile(&p.buf); err != nil {
		p.err = err
	}
	return p
}

// finish stops the profile and returns each part's CPU, or why it is unknown.
func (p *partProfile) finish() ([]PartCPU, string) {
	if p == nil {
		return nil, ""
	}
	if p.err != nil {
		return nil, fmt.Sprintf("the CPU of %v is unknown: %v", p.parts, p.err)
	}
	pprof.StopCPUProfile()
	prof, err := profile.Parse(&p.buf)
	if err != nil {
		return nil, fmt.Sprintf("the CPU of %v is unknown: reading the profile: %v", p.parts, err)
	}
	return splitParts(prof, p.parts)
}

// splitParts sums a CPU profile's samples by part.
func splitParts(prof *profile.Profile, parts []string) ([]PartCPU, string) {
	idx := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Sprintf("the CPU of %v is unknown: the profile has no cpu samples", parts)
	}
	by := map[string]int64{}
	var total int64
	for _, s := range prof.Sample {
		v := s.Value[idx]
		total += v
		if l := s.Label[PartLabel]; len(l) > 0 {
			by[l[0]] += v
		}
	}
	out := make([]PartCPU, 0, len(parts))
	for _, name := range parts {
		pc := PartCPU{Name: name, CPUSeconds: float64(by[name]) / 1e9}
		if total > 0 {
			pc.Share = float64(by[name]) / float64(total)
		}
		out = append(out, pc)
	}
	return out, ""
}
