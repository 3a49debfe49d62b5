//go:build race

package solutions_test

// raceEnabled: under `go test -race` the tuned app is built with -race too, and its log is searched for races.
const raceEnabled = true
