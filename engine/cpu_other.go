//go:build !unix

package engine

import "time"

// processCPU is not measured on this platform.
func processCPU() time.Duration { return 0 }
