package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/engine"
)

// benchPage is the page of `make perf`'s target.
const benchPage = `<!DOCTYPE html><html><head><title>perf</title></head><body><ul id="items">` +
	`<li>one</li><li>two</li><li>three</li></ul><p id="total">3</p></body></html>`

// cannedServer answers every request on a keep-alive connection with the
// same bytes, allocating nothing per request, so that a benchmark's allocs/op
// are the client's alone.
func cannedServer(b *testing.B, contentType, body string) string {
	b.Helper()
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: " + contentType + "\r\nDate: Mon, 23 Nov 2026 09:00:00 GMT\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	return rawServer(b, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			// Requests without a body: read up to the blank line.
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					break
				}
			}
			if _, err := c.Write(resp); err != nil {
				return
			}
		}
	}).String()
}

func benchAgent(b *testing.B, checks ...engine.Check) {
	a := engine.NewAgent(mustURL(b, cannedServer(b, "text/html; charset=utf-8", benchPage)), engine.AgentConfig{}, nil)
	defer a.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := a.Get(ctx, "GET /", "/")
		if err == nil {
			err = res.Check(checks...)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAgentGet is one GET, its body read, no checks.
func BenchmarkAgentGet(b *testing.B) { benchAgent(b) }

// BenchmarkAgentGetCheck is make perf's loop: a GET, its status, content
// type and the text of an element found by a CSS selector.
func BenchmarkAgentGetCheck(b *testing.B) {
	benchAgent(b, engine.Status(200), engine.ContentType("text/html"), engine.Text("#total", "3"))
}

// BenchmarkAgentGetDocument checks the page through the parsed document with
// selectors a problem's pages use (combinators, attributes).
func BenchmarkAgentGetDocument(b *testing.B) {
	benchAgent(b, engine.Status(200), engine.ContentType("text/html"), engine.HTML(func(doc *goquery.Document) error {
		if n := doc.Find("ul#items > li").Length(); n != 3 {
			return engine.Fail("html", "%d items", n)
		}
		if doc.Find(`head title`).Text() != "perf" {
			return engine.Fail("html", "title")
		}
		return nil
	}))
}
