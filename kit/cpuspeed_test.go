package kit

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseCPUList(t *testing.T) {
	for _, c := range []struct {
		list string
		want []int
		err  bool
	}{
		{"", nil, false},
		{"1", []int{1}, false},
		{"2,3", []int{2, 3}, false},
		{"0-3", nil, true}, // taskset's lists here are plain numbers
		{"1,x", nil, true},
		{"-1", nil, true},
	} {
		got, err := parseCPUList(c.list)
		if (err != nil) != c.err || !slices.Equal(got, c.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v (error %v)", c.list, got, err, c.want, c.err)
		}
	}
}

// TestCPUSpeedLeavesTheOtherThreads: a probe held to one CPU measures a
// speed, and no thread left in the process keeps that CPU as its only one;
// a CPU the machine lacks is an error, not a speed.
func TestCPUSpeedLeavesTheOtherThreads(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU affinity is Linux's")
	}
	before := threadCPUs(t)
	cpu := strings.Split(expand(before[0]), ",")[0]
	if speed, err := CPUSpeed(cpu, 1); err != nil || speed <= 0 {
		t.Fatalf("CPUSpeed(%s) = %v, %v", cpu, speed, err)
	}
	// The probe's thread ends as its goroutine does, though not at once.
	deadline := time.Now().Add(2 * time.Second)
	for stray := held(threadCPUs(t), before[0]); stray != ""; stray = held(threadCPUs(t), before[0]) {
		if time.Now().After(deadline) {
			t.Fatalf("a thread runs on CPUs %s 2 s after the probe, the process on %s", stray, before[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := CPUSpeed("1000", 1); err == nil {
		t.Error("a probe on CPU 1000 measured a speed")
	}
}

// held returns a list of lists other than want, or "".
func held(lists []string, want string) string {
	for _, l := range lists {
		if l != want {
			return l
		}
	}
	return ""
}

// threadCPUs lists the CPUs of each of this process's threads, as /proc
// shows them.
func threadCPUs(t *testing.T) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var lists []string
	for _, task := range tasks {
		status, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(status), "\n") {
			if list, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				lists = append(lists, strings.TrimSpace(list))
			}
		}
	}
	return lists
}
