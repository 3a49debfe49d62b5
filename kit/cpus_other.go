//go:build !linux

package kit

// SplitCPUs pins nothing where the CPUs a process may use cannot be set.
func SplitCPUs(min int) (CPUSplit, error) {
	return CPUSplit{Why: "pinning the app and the benchmarker to CPUs needs Linux; they share every CPU"}, nil
}

// PlanCPUs splits nothing where the CPUs a process may use cannot be set.
func PlanCPUs(min int) (CPUSplit, error) { return SplitCPUs(min) }

// holdThread holds nothing where a thread's CPUs cannot be set: the probe
// runs on any of them.
func holdThread([]int) (func() error, error) { return func() error { return nil }, nil }
