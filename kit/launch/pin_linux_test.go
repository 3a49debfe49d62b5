package launch

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A pinned app, and any process it starts, runs on the CPUs it was given only.
func TestPinKeepsTheAppAndItsChildrenOnTheirCPUs(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset is not installed (Debian package util-linux)")
	}
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Fatal(err)
	}
	last := -1
	for cpu := range 1024 {
		if allowed.IsSet(cpu) {
			last = cpu
		}
	}
	want := strconv.Itoa(last)
	// The shell starts grep, which reads its own affinity.
	cmd, err := Pin(exec.Command("sh", "-c", "grep '^Cpus_allowed_list:' /proc/self/status"), want)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := strings.TrimSpace(strings.TrimPrefix(string(out), "Cpus_allowed_list:")); got != want {
		t.Errorf("the pinned process may run on CPUs %q, want %q (its machine allows %d)", got, want, allowed.Count())
	}
}

func TestPinNamesTheCommand(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset is not installed (Debian package util-linux)")
	}
	cmd := exec.Command("/bin/true", "-x", "y")
	cmd.Dir, cmd.Env = "/tmp", []string{"A=1"}
	pinned, err := Pin(cmd, "0")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(pinned.Args[1:], " "); got != "--cpu-list 0 /bin/true -x y" {
		t.Errorf("args %q", got)
	}
	if pinned.Dir != "/tmp" || len(pinned.Env) != 1 {
		t.Errorf("dir %q, env %q: not carried over", pinned.Dir, pinned.Env)
	}
}
