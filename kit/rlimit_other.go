//go:build !unix

package kit

// RaiseFileLimit has no limit to raise here.
func RaiseFileLimit(uint64) error { return nil }
