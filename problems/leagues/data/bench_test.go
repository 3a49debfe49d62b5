package data

import "testing"

func BenchmarkInitial(b *testing.B) {
	c := Default()
	for b.Loop() {
		if _, err := c.Initial(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWrite(b *testing.B) {
	c := Default()
	for b.Loop() {
		if err := c.Write(b.TempDir()); err != nil {
			b.Fatal(err)
		}
	}
}
