//go:build linux

package kit

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"golang.org/x/sys/unix"
)

// SplitCPUs puts the app and the benchmarker on separate CPUs, so that
// neither takes the other's time, as a contest runs them on separate
// machines: it splits the CPUs as PlanCPUs does, holds every thread of this
// process (the benchmarker) to the first half, and returns the split, whose
// second half is for the app (ServeConfig.CPUs).
func SplitCPUs(min int) (CPUSplit, error) {
	split, err := PlanCPUs(min)
	if err != nil || !split.Pinned() {
		return split, err
	}
	bench, _ := parseCPUList(split.Bench)
	var own unix.CPUSet
	for _, cpu := range bench {
		own.Set(cpu)
	}
	if err := pinThreads(&own); err != nil {
		return CPUSplit{}, err
	}
	return split, nil
}

// PlanCPUs splits the CPUs this process may use in two halves, the first
// for the benchmarker and the second, the larger when they are odd, for the
// app, and holds no thread to either. With fewer than min CPUs, or without
// taskset to start the app on its half, it splits nothing and says why.
func PlanCPUs(min int) (CPUSplit, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return CPUSplit{}, fmt.Errorf("reading this process's CPUs: %w", err)
	}
	cpus := cpuNumbers(set)
	if len(cpus) < max(min, 2) {
		return CPUSplit{Why: fmt.Sprintf("this process may use %d CPU(s), which the app and the benchmarker share (they get halves from %d)",
			len(cpus), max(min, 2))}, nil
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return CPUSplit{Why: "taskset is not installed (Debian package util-linux); the app and the benchmarker share every CPU"}, nil
	}
	bench, apps := splitCPUs(cpus)
	return CPUSplit{Bench: cpuList(bench), Apps: cpuList(apps)}, nil
}

// pinThreads holds every thread of this process to set. A thread made
// later inherits the affinity of the one that made it, so the threads are
// listed again until a pass finds none new.
func pinThreads(set *unix.CPUSet) error {
	done := map[int]bool{}
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("listing this process's threads: %w", err)
		}
		fresh := 0
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || done[tid] {
				continue
			}
			// A thread may end between the listing and this call.
			if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("holding thread %d to its CPUs: %w", tid, err)
			}
			done[tid], fresh = true, fresh+1
		}
		if fresh == 0 {
			return nil
		}
	}
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

// holdThread holds the calling thread, locked to its goroutine, to cpus
// (none: as it is), and returns what gives it back its CPUs.
func holdThread(cpus []int) (restore func() error, err error) {
	if len(cpus) == 0 {
		return func() error { return nil }, nil
	}
	var was, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		return nil, fmt.Errorf("reading a thread's CPUs: %w", err)
	}
	for _, cpu := range cpus {
		set.Set(cpu)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("holding a thread to CPUs %s: %w", cpuList(cpus), err)
	}
	return func() error { return unix.SchedSetaffinity(0, &was) }, nil
}
