//go:build !linux

package measure

import "fmt"

// pin pins nothing where the CPUs a process may use cannot be set.
func (t *Tool) pin() string {
	fmt.Println("not pinned: pinning the apps and the benchmarker to CPUs needs Linux; they share every CPU")
	return ""
}
