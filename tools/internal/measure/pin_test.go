package measure

import "testing"

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
