package web

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"strings"
	"testing"
)

// TestVendoredFilesAreAsReleased: the embedded chart library is its release,
// byte for byte (static/vendor/uplot/SHA256SUMS).
func TestVendoredFilesAreAsReleased(t *testing.T) {
	sums, err := fs.ReadFile(files, "static/vendor/uplot/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(sums)) {
		want, name, ok := strings.Cut(strings.TrimSpace(line), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", line)
		}
		b, err := fs.ReadFile(files, "static/vendor/uplot/"+name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: sha256 %s, want %s", name, got, want)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d files checked, want 2", n)
	}
}
