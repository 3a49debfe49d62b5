//go:build !unix

package cli

// RaiseFileLimit has no limit to raise here.
func RaiseFileLimit(uint64) error { return nil }
