package kit

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target for the tunecon process: a
// benchmarker allocates a body per request, and trading memory (there is
// plenty) for fewer collections raises its requests per CPU-second.
const GCPercent = 400

// OpenFiles is the open-files limit the tunecon process asks for: a
// benchmarker at a scenario's 10,000 users holds up to 6 connections each,
// and the apps it starts inherit the limit. The kernel's usual ceiling
// (fs.nr_open) is 1,048,576.
const OpenFiles = 1 << 17

// TuneRuntime applies GCPercent unless the user set GOGC, and raises the
// open-files limit to OpenFiles where it may (as root; for another user it
// stays at the hard limit, and a run that reaches it says so). It changes
// the whole process, so only main (and tools measuring the command) call it.
func TuneRuntime() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	_ = RaiseFileLimit(OpenFiles)
}
