package leagues

import (
	stdjson "encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/segmentio/encoding/json"
)

// BenchmarkDecodeRanking decodes a page of 100 ranks as the benchmarker does,
// with the library it uses and with encoding/json side by side (the README's
// dependency table quotes the two).
func BenchmarkDecodeRanking(b *testing.B) {
	var page strings.Builder
	page.WriteString(`{"competition":{"id":1234,"title":"Spring cup, round 3","is_finished":false},"ranks":[`)
	for i := range rankingPage {
		if i > 0 {
			page.WriteString(",")
		}
		fmt.Fprintf(&page, `{"rank":%d,"player_id":%d,"display_name":"player %d","score":%d}`, i+1, 1000+7*i, i, 99999-13*i)
	}
	page.WriteString("]}")
	body := []byte(page.String())
	for _, d := range []struct {
		name      string
		unmarshal func([]byte, any) error
	}{{"segmentio", json.Unmarshal}, {"encoding-json", stdjson.Unmarshal}} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var ans rankingAnswer
				if err := d.unmarshal(body, &ans); err != nil || len(*ans.Ranks) != rankingPage {
					b.Fatal(err)
				}
			}
		})
	}
}
