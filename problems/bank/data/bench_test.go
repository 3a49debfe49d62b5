package data

import (
	"io"
	"testing"
)

func BenchmarkInitial(b *testing.B) {
	c := Default()
	for b.Loop() {
		if _, err := c.Initial(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteSQL(b *testing.B) {
	c := Default()
	for b.Loop() {
		if err := c.WriteSQL(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
