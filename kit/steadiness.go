package kit

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"
)

// The kinds of work WorkRates measures. A score is as steady as the work its
// app does: a tuned app's handlers compute on data in the CPU's caches, a
// reference app's database walks tables far larger than them, and the two
// feel a busy host differently.
const (
	// Compute hashes a buffer that stays in the CPU's caches; its rate is
	// in MB/s.
	Compute = "compute"
	// Memory follows a random chain through chainWords of memory, each step
	// waiting for the last; its rate is in million steps a second.
	Memory = "memory"
)

// chainWords is the length of the memory work's chain: 128 MiB, far past
// the caches of any CPU, so that each step waits on memory.
const chainWords = 32 << 20

// chainSteps is how many steps of the chain the memory work takes between
// two looks at the clock: tens of microseconds.
const chainSteps = 1 << 10

// WorkRates runs kind's work on each CPU of each of sets (taskset lists; ""
// for one thread on any CPU this process may use), all at once for d, and
// returns the rate of each set, the sum of its CPUs': how fast the machine
// did that work with all of them busy, as they are during a run. A measuring
// tool repeats it to tell how much the machine itself moves a score from one
// minute to the next.
func WorkRates(kind string, sets []string, d time.Duration) ([]float64, error) {
	if kind != Compute && kind != Memory {
		return nil, fmt.Errorf("no kind of work %q (%s or %s)", kind, Compute, Memory)
	}
	type job struct {
		set  int
		cpus []int
	}
	var jobs []job
	for i, list := range sets {
		cpus, err := parseCPUList(list)
		if err != nil {
			return nil, err
		}
		if len(cpus) == 0 {
			jobs = append(jobs, job{set: i})
		}
		for _, cpu := range cpus {
			jobs = append(jobs, job{set: i, cpus: []int{cpu}})
		}
	}
	rates, errs := make([]float64, len(jobs)), make([]error, len(jobs))
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(len(jobs))
	done.Add(len(jobs))
	for i, j := range jobs {
		go func() {
			defer done.Done()
			prepared := false
			rates[i], errs[i] = onThread(j.cpus, func() float64 {
				run := prepare(kind, uint64(i))
				prepared = true
				ready.Done()
				<-start
				return run(d)
			})
			if !prepared {
				ready.Done()
			}
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	sums := make([]float64, len(sets))
	for i, j := range jobs {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s work on CPUs %q: %w", kind, sets[j.set], errs[i])
		}
		sums[j.set] += rates[i]
	}
	return sums, nil
}

// prepare makes what kind's work needs (the memory work's chain takes a
// second or so) and returns the work: it runs for d and returns its rate.
func prepare(kind string, seed uint64) func(d time.Duration) float64 {
	if kind == Compute {
		buf := make([]byte, 1<<20)
		return func(d time.Duration) float64 {
			start, n := time.Now(), 0
			for ; time.Since(start) < d; n++ {
				hashRound(buf)
			}
			return float64(n*len(buf)) / 1e6 / time.Since(start).Seconds()
		}
	}
	chain := randomCycle(chainWords, seed)
	return func(d time.Duration) float64 {
		start, n := time.Now(), 0
		var at uint32
		for ; time.Since(start) < d; n += chainSteps {
			for range chainSteps {
				at = chain[at]
			}
		}
		runtime.KeepAlive(at)
		return float64(n) / 1e6 / time.Since(start).Seconds()
	}
}

// randomCycle returns a permutation of 0..n-1 that is one cycle through
// all of them (Sattolo's shuffle), so that following it from any word
// visits every word in a random order.
func randomCycle(n int, seed uint64) []uint32 {
	c := make([]uint32, n)
	for i := range c {
		c[i] = uint32(i)
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i)
		c[i], c[j] = c[j], c[i]
	}
	return c
}
