package web

import (
	"html/template"
	"testing"
)

// TestChartCache: a job's charts are drawn once and kept, with the freeze
// they mark; the cache stays within its size.
func TestChartCache(t *testing.T) {
	var c chartCache
	drawn := 0
	draw := func() (template.HTML, error) { drawn++; return "<svg></svg>", nil }
	for range 3 {
		if h, err := c.draw(chartKey{job: 1}, draw); err != nil || h != "<svg></svg>" {
			t.Fatalf("draw: %q, %v", h, err)
		}
	}
	if drawn != 1 {
		t.Errorf("one job's charts drawn %d times, want once", drawn)
	}
	_, _ = c.draw(chartKey{job: 1, freeze: 5}, draw)
	if drawn != 2 {
		t.Errorf("a new freeze did not draw the charts again")
	}
	for i := range 3 * chartCacheSize {
		_, _ = c.draw(chartKey{job: int64(10 + i)}, draw)
	}
	if len(c.html) > chartCacheSize {
		t.Errorf("the cache holds %d charts, more than %d", len(c.html), chartCacheSize)
	}
}
