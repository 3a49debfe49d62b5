package wire

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// rawResponses are answers on the wire, well-formed and not, that the
// transport must read as net/http reads them.
var rawResponses = []string{
	"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello",
	"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nX-Two: a\r\nx-two: b\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n1\r\na\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
	"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end",
	"HTTP/1.1 200 OK\r\n\r\nclose-delimited body",
	"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n",
	"HTTP/1.1 304 Not Modified\r\nEtag: \"v1\"\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx",
	"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length:  5\r\n\r\nhello",
	"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	"HTTP/1.1 200 OK\r\nX-Folded: one\r\n two\r\n\tthree\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\n X-Leading: space\r\n\r\n",
	"HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n",
	"HTTP/1.1 200 OK\r\nBad Key: v\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nBad\x01Key: v\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX-Ctl: a\x01b\r\n\r\n",
	"HTTP/1.1 200 OK\r\n: empty key\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX-Space:   padded value  \r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
	"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1  200  OK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 2000 OK\r\n\r\n",
	"HTTP/1.1 abc OK\r\n\r\n",
	"HTTP/1.1 +12 OK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 -12 OK\r\n\r\n",
	"HTTP/9.9 200 OK\r\nContent-Length: 0\r\n\r\n",
	"HTTX/1.1 200 OK\r\n\r\n",
	"SSH-2.0-nonsense\r\n\x00\x01\x02 this is not HTTP at all\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n",
	"HTTP/1.1 200 OK",
	"",
	"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\nraw",
	"HTTP/1.1 200 OK\r\nTrailer: Content-Length\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n",
}

// TestReadResponseAsNetHTTP reads every raw response with the transport and
// with net/http: the same status, headers and body, or both an error.
func TestReadResponseAsNetHTTP(t *testing.T) {
	t.Parallel()
	for _, raw := range rawResponses {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			if msg := compareWithNetHTTP(raw, method); msg != "" {
				t.Errorf("%s %q: %s", method, raw, msg)
			}
		}
	}
}

// FuzzReadResponseAsNetHTTP: go test ./engine/internal/wire -run XXX -fuzz
// FuzzReadResponseAsNetHTTP
func FuzzReadResponseAsNetHTTP(f *testing.F) {
	for _, raw := range rawResponses {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if msg := compareWithNetHTTP(raw, http.MethodGet); msg != "" {
			t.Fatalf("%q: %s", raw, msg)
		}
	})
}

// maxBodyBytes is the engine's DefaultMaxBodyBytes.
const maxBodyBytes = 16 << 20

func compareWithNetHTTP(raw, method string) string {
	// net/http's transport skips informational responses (101 aside) and
	// reads a 101's body from the connection itself.
	req := &http.Request{Method: method, URL: &url.URL{Scheme: "http", Host: "x", Path: "/"}}
	wbr := bufio.NewReader(strings.NewReader(raw))
	want, wantErr := http.ReadResponse(wbr, req)
	for wantErr == nil && want.StatusCode >= 100 && want.StatusCode <= 199 && want.StatusCode != 101 {
		want, wantErr = http.ReadResponse(wbr, req)
	}
	var wantBody []byte
	if wantErr == nil {
		if want.StatusCode == 101 {
			want.Body = io.NopCloser(wbr)
		}
		wantBody, wantErr = io.ReadAll(want.Body)
	}
	tr := New(Config{})
	br := bufio.NewReader(strings.NewReader(raw))
	head, _, gotErr := readHead(br, method, nil)
	var gotBody []byte
	if gotErr == nil {
		gotBody, gotErr = tr.readBody(br, &head, false, maxBodyBytes)
	}
	switch {
	case (wantErr == nil) != (gotErr == nil):
		return "net/http: " + errString(wantErr) + "; transport: " + errString(gotErr)
	case wantErr != nil:
		if IsMalformed(wantErr) != IsMalformed(gotErr) {
			return "errors read differently: net/http " + wantErr.Error() + "; transport " + gotErr.Error()
		}
		return ""
	}
	if want.StatusCode != head.status {
		return "status differs"
	}
	if !reflect.DeepEqual(map[string][]string(want.Header), map[string][]string(head.header)) {
		return "headers differ: " + errString(nil) + formatHeader(want.Header) + " vs " + formatHeader(head.header)
	}
	if !bytes.Equal(wantBody, gotBody) {
		return "bodies differ"
	}
	// A 101's connection is never reused.
	if want.Close != head.close && want.StatusCode != 101 {
		return "the connection's end differs"
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func formatHeader(h http.Header) string {
	var b strings.Builder
	_ = h.Write(&b)
	return b.String()
}
