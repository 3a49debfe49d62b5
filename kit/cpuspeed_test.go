package kit

import (
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for _, c := range []struct {
		list string
		want []int
		err  bool
	}{
		{"", nil, false},
		{"1", []int{1}, false},
		{"2,3", []int{2, 3}, false},
		{"0-3", nil, true}, // taskset's lists here are plain numbers
		{"1,x", nil, true},
		{"-1", nil, true},
	} {
		got, err := parseCPUList(c.list)
		if (err != nil) != c.err || !slices.Equal(got, c.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v (error %v)", c.list, got, err, c.want, c.err)
		}
	}
}
