// Command steadiness measures how steady this machine is for the two kinds
// of work an app's score rests on: for -stretches stretches of -interval
// (ten of a minute by default), each kind in turn, it computes on data in the CPU's caches and walks memory far larger
// than them (kit.WorkRates) on the app's CPUs and the benchmarker's at once,
// as a run keeps both busy, and prints each minute's rates and, for each
// kind, their coefficient of variation. A minute-long score of an app bound
// by one kind of work cannot be steadier than the machine is at it. Run it
// with `make steadiness [MINUTES=10]`.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
)

func main() {
	stretches := flag.Int("stretches", 10, "stretches of work, alternating between the two kinds")
	interval := flag.Duration("interval", time.Minute, "length of each stretch")
	pinned := flag.Bool("pin", true, "work on the halves of the CPUs that make headroom and make stability give the app and the benchmarker")
	flag.Parse()
	if *stretches < 4 {
		fail(fmt.Errorf("-stretches must be at least 4 (two of each kind), got %d", *stretches))
	}
	sets, names := []string{"", ""}, [2]string{"thread 1 on any CPU", "thread 2 on any CPU"}
	if *pinned {
		// Only the work's threads are held to the halves. Held to the first
		// half, this process would run Go code on only as many threads at
		// once as that half has CPUs (the runtime sets GOMAXPROCS from
		// them): the work on the two halves took turns, each at half speed.
		split, err := kit.PlanCPUs(2)
		if err != nil {
			fail(err)
		}
		if !split.Pinned() {
			fmt.Println("not split:", split.Why)
		} else {
			fmt.Printf("work on the app's CPUs %s and the benchmarker's %s at once, as make headroom and make stability split them\n", split.Apps, split.Bench)
			sets = []string{split.Apps, split.Bench}
			names = [2]string{"app's CPUs " + split.Apps, "benchmarker's CPUs " + split.Bench}
		}
	}
	units := map[string]string{kit.Compute: "MB/s", kit.Memory: "M steps/s"}
	rates := map[string][2][]float64{}
	kinds := []string{kit.Compute, kit.Memory}
	for i := range *stretches {
		kind := kinds[i%2]
		r, err := kit.WorkRates(kind, sets, *interval)
		if err != nil {
			fail(err)
		}
		both := rates[kind]
		both[0], both[1] = append(both[0], r[0]), append(both[1], r[1])
		rates[kind] = both
		fmt.Printf("%s stretch %2d  %-7s  %s %8.2f %s, %s %8.2f %s\n", time.Now().Format("15:04:05"), i+1, kind,
			names[0], r[0], units[kind], names[1], r[1], units[kind])
	}
	for _, kind := range kinds {
		_, _, a := engine.Spread(rates[kind][0])
		_, _, b := engine.Spread(rates[kind][1])
		fmt.Printf("%s cv over %d stretches of %s: %s %.1f%%, %s %.1f%%\n", kind, len(rates[kind][0]), *interval,
			names[0], 100*a, names[1], 100*b)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "steadiness: %v\n", err)
	os.Exit(1)
}
