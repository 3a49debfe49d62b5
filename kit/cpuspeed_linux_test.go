package kit

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCPUSpeedLeavesTheOtherThreads: a probe held to one CPU measures a
// speed, and leaves no thread of the process held there; a CPU the machine
// lacks is an error, not a speed.
func TestCPUSpeedLeavesTheOtherThreads(t *testing.T) {
	var own unix.CPUSet
	if err := unix.SchedGetaffinity(0, &own); err != nil {
		t.Fatal(err)
	}
	process := cpuList(cpuNumbers(own))
	cpu := strings.Split(process, ",")[0]
	if speed, err := CPUSpeed(cpu, 1); err != nil || speed <= 0 {
		t.Fatalf("CPUSpeed(%s) = %v, %v", cpu, speed, err)
	}
	// The probe gave its thread its CPUs back before it returned.
	if stray := held(threadCPUs(t), process); stray != "" {
		t.Errorf("a thread runs on CPUs %s after the probe, the process on %s", stray, process)
	}
	if _, err := CPUSpeed("1000", 1); err == nil {
		t.Error("a probe on CPU 1000 measured a speed")
	}
}

// held returns a list of lists other than want (as taskset writes it),
// or "".
func held(lists map[string]string, want string) string {
	for _, l := range lists {
		if expand(l) != want {
			return l
		}
	}
	return ""
}
