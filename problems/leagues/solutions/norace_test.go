//go:build !race

package solutions_test

const raceEnabled = false
