package kit

import (
	"strconv"
	"strings"
)

// CPUSplit is how a practice run or a measurement shares this machine's
// CPUs: the benchmarker (this process) on Bench, the app and every process
// it starts on Apps, as taskset lists them ("1", "2,3"). Both are empty
// when they share every CPU, and Why says why.
type CPUSplit struct {
	Bench, Apps string
	Why         string
}

// Pinned reports whether the app and the benchmarker have CPUs of their own.
func (s CPUSplit) Pinned() bool { return s.Apps != "" }

// String says in one line where each runs.
func (s CPUSplit) String() string {
	if !s.Pinned() {
		return "not pinned: " + s.Why
	}
	return "pinned: the benchmarker on CPU " + s.Bench + ", the app on CPU " + s.Apps
}

// splitCPUs gives the first half of cpus to the benchmarker and the rest,
// the larger half when they are odd, to the apps.
func splitCPUs(cpus []int) (bench, apps []int) {
	n := len(cpus) / 2
	return cpus[:n], cpus[n:]
}

func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, cpu := range cpus {
		s[i] = strconv.Itoa(cpu)
	}
	return strings.Join(s, ",")
}
