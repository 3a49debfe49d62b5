//go:build linux

package measure

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// appCPUsEnv carries the apps' CPUs into the tool's second run (see pin).
const appCPUsEnv = "TUNECON_MEASURE_APP_CPUS"

// pin puts the apps and the benchmarker on separate CPUs, so that neither
// takes the other's time and a fast app's score is not set by a starved
// benchmarker: a contest runs them on separate machines. It splits the CPUs
// this process may use in two halves (the apps get the larger), runs the
// tool again under taskset on the first half, and returns the second half
// for the apps as taskset lists them. It prints what it did; with fewer
// than 2 CPUs or no taskset it pins nothing and returns "".
func (t *Tool) pin() string {
	if cpus := os.Getenv(appCPUsEnv); cpus != "" {
		fmt.Printf("pinned: the benchmarker on CPU %s, the apps on CPU %s (-pin=false, or make PIN=0, shares them)\n", ownCPUs(), cpus)
		return cpus
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		fmt.Printf("not pinned: reading this process's CPUs: %v\n", err)
		return ""
	}
	bench, apps := splitCPUs(cpuNumbers(set))
	if len(bench) == 0 {
		fmt.Println("not pinned: this process may use only 1 CPU, which the apps and the benchmarker share")
		return ""
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		fmt.Println("not pinned: taskset is not installed (Debian package util-linux); the apps and the benchmarker share every CPU")
		return ""
	}
	self, err := os.Executable()
	if err != nil {
		t.Fail(err)
	}
	args := append([]string{taskset, "--cpu-list", cpuList(bench), self}, os.Args[1:]...)
	env := append(os.Environ(), appCPUsEnv+"="+cpuList(apps))
	t.Fail(fmt.Errorf("running again under taskset: %w", syscall.Exec(taskset, args, env)))
	return ""
}

func cpuNumbers(set unix.CPUSet) []int {
	var cpus []int
	for cpu := 0; len(cpus) < set.Count(); cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// ownCPUs lists the CPUs this process may use.
func ownCPUs() string {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return "?"
	}
	return cpuList(cpuNumbers(set))
}
