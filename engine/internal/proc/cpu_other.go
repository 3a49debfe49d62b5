//go:build !unix

package proc

import "time"

// CPU is not measured on this platform.
func CPU() time.Duration { return 0 }
