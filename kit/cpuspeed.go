package kit

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// probeBytes is how much one CPU speed probe hashes: a few hundred
// milliseconds on the CPUs of a usual machine.
const probeBytes = 128 << 20

// CPUSpeed hashes a fixed amount of data with SHA-256 on one thread held to
// cpus (a taskset list, "1" or "2,3"; "" for the CPUs this process may use)
// rounds times and returns the median speed in MB/s. Two probes of one
// machine minutes apart tell whether its CPUs kept their speed: a measuring
// tool prints them beside its scores, so that a spread of scores can be
// read against the machine's own (a virtual machine's host takes its share).
func CPUSpeed(cpus string, rounds int) (float64, error) {
	set, err := parseCPUList(cpus)
	if err != nil {
		return 0, err
	}
	speeds := make([]float64, max(rounds, 1))
	for i := range speeds {
		if speeds[i], err = probeOnce(set); err != nil {
			return 0, err
		}
	}
	slices.Sort(speeds)
	return speeds[len(speeds)/2], nil
}

// probeOnce hashes probeBytes on a thread held to cpus.
func probeOnce(cpus []int) (float64, error) {
	return onThread(cpus, func() float64 {
		buf := make([]byte, 1<<20)
		start := time.Now()
		for range probeBytes / len(buf) {
			hashRound(buf)
		}
		return probeBytes / 1e6 / time.Since(start).Seconds()
	})
}

// hashRound hashes buf, and changes it by the hash: each round depends on
// the last.
func hashRound(buf []byte) {
	sum := sha256.Sum256(buf)
	buf[0] ^= sum[0]
}

// onThread runs work on a thread of its own, held to cpus when there are
// any, and returns what it returns. The thread gets its CPUs back before it
// runs anything else; if it cannot, the goroutine ends locked to it, and the
// runtime retires the thread with it. work does not run when the thread
// cannot be held to cpus.
func onThread(cpus []int, work func() float64) (float64, error) {
	type result struct {
		v   float64
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		restore, err := holdThread(cpus)
		if err != nil {
			runtime.UnlockOSThread()
			done <- result{err: err}
			return
		}
		v := work()
		if err := restore(); err != nil {
			done <- result{err: fmt.Errorf("giving a thread its CPUs back: %w", err)}
			return // still locked: the thread goes with the goroutine
		}
		runtime.UnlockOSThread()
		done <- result{v: v}
	}()
	r := <-done
	return r.v, r.err
}

// parseCPUList reads a taskset list of CPU numbers ("1", "2,3"); "" is none.
func parseCPUList(list string) ([]int, error) {
	if list == "" {
		return nil, nil
	}
	var cpus []int
	for _, part := range strings.Split(list, ",") {
		cpu, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || cpu < 0 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number", list, part)
		}
		cpus = append(cpus, cpu)
	}
	return cpus, nil
}
