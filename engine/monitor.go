package engine

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tunecon/tunecon/engine/internal/proc"
)

// Self-monitoring thresholds: past either, the benchmarker was the bottleneck
// and the score measures it rather than the target.
const (
	// SaturatedCPUShare is the share of the cores it may use that the
	// benchmarker used during the load phase.
	SaturatedCPUShare = 0.85
	// BusyCPUShare is the share of its cores past which a lagging
	// benchmarker counts as saturated rather than starved by other processes.
	BusyCPUShare = 0.4
	// SaturatedSchedLag is the 99th percentile of how late a 10 ms timer fired:
	// past it, the benchmarker's goroutines wait for a CPU instead of running.
	SaturatedSchedLag = 20 * time.Millisecond
	monitorTick       = 10 * time.Millisecond
)

// BenchmarkerStats is how the benchmarker itself fared during the load phase.
type BenchmarkerStats struct {
	Saturated    bool    `json:"saturated"`
	Reason       string  `json:"reason,omitempty"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	CPUShare     float64 `json:"cpu_share"`
	Cores        int     `json:"cores"`
	SchedLagP99  float64 `json:"sched_lag_p99_ms"`
	SchedLagMax  float64 `json:"sched_lag_max_ms"`
	GCCycles     uint32  `json:"gc_cycles"`
	GCPauseMs    float64 `json:"gc_pause_ms"`
	MaxGoroutine int     `json:"max_goroutines"`
	// Parts is the CPU of each part the scenario named in Meta.Parts (the
	// services it hosts for the app, say), and PartsNote why it is missing.
	Parts     []PartCPU `json:"parts,omitempty"`
	PartsNote string    `json:"parts_note,omitempty"`
	// ClockStepS is how far the machine's wall clock moved, during the load
	// phase, beyond the time that passed (a time sync setting it, a virtual
	// machine resumed from a pause); 0 when under clockStepFloor.
	ClockStepS float64 `json:"clock_step_s,omitempty"`
}

// clockStepFloor is the smallest wall-clock step the result reports: a time
// sync that slews the clock moves it by milliseconds a minute.
const clockStepFloor = time.Second

// monitor watches the benchmarker's own CPU use, GC and scheduling lag.
type monitor struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	lag  *hdrhistogram.Histogram
	maxG int
	// ticks and late count the timer's ticks and those late by
	// SaturatedSchedLag or more, for the load controller.
	ticks, late atomic.Int64
	startCPU    time.Duration
	startWall   time.Time
	startGC     runtime.MemStats
	parts       *partProfile
}

// startMonitor starts watching; parts, if any, are the parts of the
// benchmarker whose CPU is measured (see Part).
func startMonitor(parts []string) *monitor {
	m := &monitor{stop: make(chan struct{}), done: make(chan struct{}), lag: hdrhistogram.New(1, 60_000_000, 2)}
	m.parts = startPartProfile(parts)
	m.startCPU = proc.CPU()
	m.startWall = time.Now()
	runtime.ReadMemStats(&m.startGC)
	go m.loop()
	return m
}

func (m *monitor) loop() {
	defer close(m.done)
	t := time.NewTicker(monitorTick)
	defer t.Stop()
	last := time.Now()
	for n := 0; ; n++ {
		select {
		case <-m.stop:
			return
		case <-t.C:
			// The ticker's own timestamp is taken when it fires, not when this
			// goroutine gets to run: read the clock here to see the lag.
			now := time.Now()
			late := now.Sub(last) - monitorTick
			last = now
			m.ticks.Add(1)
			if late >= SaturatedSchedLag {
				m.late.Add(1)
			}
			m.mu.Lock()
			_ = m.lag.RecordValue(max(late.Microseconds(), 1))
			if n%50 == 0 {
				m.maxG = max(m.maxG, runtime.NumGoroutine())
			}
			m.mu.Unlock()
		}
	}
}

func (m *monitor) finish() BenchmarkerStats {
	close(m.stop)
	<-m.done
	parts, note := m.parts.finish()
	wall := time.Since(m.startWall)
	step := wallStepSince(m.startWall)
	cpu := proc.CPU() - m.startCPU
	var gc runtime.MemStats
	runtime.ReadMemStats(&gc)
	cores := min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	s := BenchmarkerStats{
		CPUSeconds:   cpu.Seconds(),
		Cores:        cores,
		GCCycles:     gc.NumGC - m.startGC.NumGC,
		GCPauseMs:    float64(gc.PauseTotalNs-m.startGC.PauseTotalNs) / 1e6,
		MaxGoroutine: m.maxG,
		Parts:        parts,
		PartsNote:    note,
	}
	if step.Abs() >= clockStepFloor {
		s.ClockStepS = step.Seconds()
	}
	if wall > 0 {
		s.CPUShare = cpu.Seconds() / (wall.Seconds() * float64(cores))
	}
	m.mu.Lock()
	s.SchedLagP99 = float64(m.lag.ValueAtQuantile(99)) / 1000
	s.SchedLagMax = float64(m.lag.Max()) / 1000
	m.mu.Unlock()
	s.Saturated, s.Reason = judgeSaturation(s.CPUShare, s.SchedLagP99, cores)
	return s
}

// judgeSaturation decides from the load phase's CPU share and timer lag
// (p99, ms) whether the benchmarker was the bottleneck, and says why; a
// lagging but idle benchmarker was starved by other processes, which is
// reported without the flag.
func judgeSaturation(cpuShare, lagP99 float64, cores int) (bool, string) {
	lagged := lagP99 >= float64(SaturatedSchedLag.Milliseconds())
	switch {
	case cpuShare >= SaturatedCPUShare:
		return true, fmt.Sprintf("the benchmarker used %.0f%% of its %d core(s) (limit %.0f%%)", 100*cpuShare, cores, 100*SaturatedCPUShare)
	case lagged && cpuShare >= BusyCPUShare:
		return true, fmt.Sprintf("the benchmarker used %.0f%% of its %d core(s) and its timers fired up to %.0f ms late (p99; limit %s)",
			100*cpuShare, cores, lagP99, SaturatedSchedLag)
	case lagged:
		return false, fmt.Sprintf("the machine was busy: the benchmarker's timers fired up to %.0f ms late (p99), so latencies include up to that much delay on the benchmarker's side", lagP99)
	}
	return false, ""
}
