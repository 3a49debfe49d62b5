package measure

import (
	"strconv"
	"strings"
)

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
