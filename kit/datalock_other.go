//go:build !unix

package kit

// lockData does nothing where there is no flock: two apps on one embedded
// database there are the user's to avoid.
func lockData(path, what string) (release func(), err error) { return func() {}, nil }
