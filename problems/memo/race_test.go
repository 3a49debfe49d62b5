//go:build race

package memo

// raceEnabled: under `go test -race` the exhaustive scans check a sample
// (raceSample); `make test-exhaustive` runs them whole without the detector.
const raceEnabled = true
