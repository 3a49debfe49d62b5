package kit

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSplitCPUsGivesTheAppsTheLargerHalf(t *testing.T) {
	for _, c := range []struct {
		cpus        []int
		bench, apps string
	}{
		{[]int{0}, "", "0"},
		{[]int{0, 1}, "0", "1"},
		{[]int{0, 1, 2}, "0", "1,2"},
		{[]int{2, 3, 6, 7}, "2,3", "6,7"},
	} {
		bench, apps := splitCPUs(c.cpus)
		if cpuList(bench) != c.bench || cpuList(apps) != c.apps {
			t.Errorf("splitCPUs(%v) = %q, %q; want %q, %q", c.cpus, cpuList(bench), cpuList(apps), c.bench, c.apps)
		}
	}
}

// TestSplitCPUsHoldsEveryThread runs in a child process (it changes the
// process's CPUs): after SplitCPUs, every thread of the process, those the
// Go runtime starts later included, keeps to the benchmarker's half.
func TestSplitCPUsHoldsEveryThread(t *testing.T) {
	if os.Getenv("TUNECON_SPLIT_CHILD") == "1" {
		split, err := SplitCPUs(2)
		if err != nil || !split.Pinned() {
			fmt.Printf("not pinned: %v %s\n", err, split.Why)
			return
		}
		var wg sync.WaitGroup
		for range 8 { // goroutines that block in system calls make threads
			wg.Add(1)
			go func() { defer wg.Done(); time.Sleep(20 * time.Millisecond); _, _ = os.ReadDir("/proc/self/task") }()
		}
		wg.Wait()
		for tid, list := range threadCPUs(t) {
			fmt.Printf("thread %s on %s want %s\n", tid, list, split.Bench)
		}
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("CPU affinity is Linux's")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSplitCPUsHoldsEveryThread$")
	cmd.Env = append(os.Environ(), "TUNECON_SPLIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child failed: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "not pinned:") {
		t.Skipf("%s", out)
	}
	threads := 0
	for _, line := range strings.Split(string(out), "\n") {
		var tid, got, want string
		if n, _ := fmt.Sscanf(line, "thread %s on %s want %s", &tid, &got, &want); n == 3 {
			threads++
			if expand(got) != want {
				t.Errorf("thread %s runs on CPUs %s, not the benchmarker's %s", tid, got, want)
			}
		}
	}
	if threads < 2 {
		t.Errorf("the child listed %d threads:\n%s", threads, out)
	}
}

// expand writes a list as /proc shows it ("0-2,5") as taskset's ("0,1,2,5").
func expand(list string) string {
	var cpus []string
	for _, part := range strings.Split(list, ",") {
		var lo, hi int
		if n, _ := fmt.Sscanf(part, "%d-%d", &lo, &hi); n == 2 {
			for cpu := lo; cpu <= hi; cpu++ {
				cpus = append(cpus, fmt.Sprint(cpu))
			}
			continue
		}
		cpus = append(cpus, part)
	}
	return strings.Join(cpus, ",")
}

// threadCPUs maps each thread of this process to its CPUs, as /proc lists
// them ("0-2,5").
func threadCPUs(t *testing.T) map[string]string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string]string{}
	for _, task := range tasks {
		status, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(status), "\n") {
			if list, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				lists[task.Name()] = strings.TrimSpace(list)
			}
		}
	}
	return lists
}
