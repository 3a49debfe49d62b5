package data

import "testing"

func BenchmarkIndexInitialComments(b *testing.B) {
	c := Default()
	for b.Loop() {
		for k := int64(1); k <= int64(c.Comments); k++ {
			_ = c.CommentArticle(k)
		}
	}
}
