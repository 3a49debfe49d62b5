package kit

import (
	"strings"
	"testing"
	"time"

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

// TestWorkRatesLeaveTheOtherThreads: work on every CPU of the process's
// list gives one rate, the sum of its CPUs', and leaves no thread held to
// one of them.
func TestWorkRatesLeaveTheOtherThreads(t *testing.T) {
	var own unix.CPUSet
	if err := unix.SchedGetaffinity(0, &own); err != nil {
		t.Fatal(err)
	}
	process := cpuList(cpuNumbers(own))
	rates, err := WorkRates(Compute, []string{process}, 50*time.Millisecond)
	if err != nil || len(rates) != 1 || rates[0] <= 0 {
		t.Fatalf("WorkRates(%s) = %v, %v", process, rates, err)
	}
	if stray := held(threadCPUs(t), process); stray != "" {
		t.Errorf("a thread runs on CPUs %s after the work, the process on %s", stray, process)
	}
}

// TestPlanCPUsHoldsNoThread: PlanCPUs splits the CPUs as SplitCPUs does
// and leaves every thread where it was.
func TestPlanCPUsHoldsNoThread(t *testing.T) {
	var own unix.CPUSet
	if err := unix.SchedGetaffinity(0, &own); err != nil {
		t.Fatal(err)
	}
	process := cpuList(cpuNumbers(own))
	split, err := PlanCPUs(2)
	if err != nil {
		t.Fatal(err)
	}
	if bench, apps := splitCPUs(cpuNumbers(own)); split.Pinned() && (split.Bench != cpuList(bench) || split.Apps != cpuList(apps)) {
		t.Errorf("PlanCPUs = %+v; want the benchmarker on %s, the app on %s", split, cpuList(bench), cpuList(apps))
	}
	if stray := held(threadCPUs(t), process); stray != "" {
		t.Errorf("a thread runs on CPUs %s after PlanCPUs, the process on %s", stray, process)
	}
}
