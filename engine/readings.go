package engine

import (
	"bytes"
	"encoding/base64"
	"html"
	"net/http"
	"net/url"
	"strconv"
)

// minBase64 is the shortest run of base64 characters Readings decodes: a
// shorter one is as likely a word or a number.
const minBase64 = 16

// Readings returns the texts in which an answer can tell something to whoever
// reads it, for the scans of what its viewer may not see: its body and its
// header values (all but Date and Content-Length), each as sent and decoded
// the ways a page or a header commonly encodes text: percent-escapes, HTML
// character references, JSON's \u escapes, and runs of base64 (standard or
// URL alphabet) of 16 characters or more. A scan that also lower-cases them
// finds a name in any case. An answer can always hide more (a cipher is
// still a leak by the manuals' rules); these are the cheap disguises. An
// asset's successful body is left out: the manifest's SHA-256 holds it to
// the problem's own file, so only its headers can carry anything.
func (r *Response) Readings() [][]byte {
	texts := [][]byte{r.Body}
	if r.Asset && r.StatusCode == http.StatusOK {
		texts = texts[:0]
	}
	for name, values := range r.Header {
		if name == "Date" || name == "Content-Length" {
			continue
		}
		for _, v := range values {
			texts = append(texts, []byte(v))
		}
	}
	out := texts
	for _, t := range texts {
		out = append(out, decodings(t)...)
	}
	return out
}

// decodings returns t decoded each way Readings names, leaving out a
// decoding that changes nothing.
func decodings(t []byte) [][]byte {
	var out [][]byte
	add := func(d []byte) {
		if len(d) > 0 && !bytes.Equal(d, t) {
			out = append(out, d)
		}
	}
	if bytes.IndexByte(t, '%') >= 0 || bytes.IndexByte(t, '+') >= 0 {
		if s, err := url.QueryUnescape(string(t)); err == nil {
			add([]byte(s))
		} else if s, err := url.PathUnescape(string(t)); err == nil {
			add([]byte(s))
		}
	}
	if bytes.IndexByte(t, '&') >= 0 {
		add([]byte(html.UnescapeString(string(t))))
	}
	if bytes.Contains(t, []byte(`\u`)) || bytes.Contains(t, []byte(`\/`)) {
		add(unescapeJSON(t))
	}
	add(base64Runs(t))
	return out
}

// unescapeJSON replaces JSON's \uXXXX and \/ escapes in t (outside strings
// too; a scan only needs the text).
func unescapeJSON(t []byte) []byte {
	var b bytes.Buffer
	for i := 0; i < len(t); i++ {
		if t[i] == '\\' && i+1 < len(t) {
			switch {
			case t[i+1] == '/':
				b.WriteByte('/')
				i++
				continue
			case t[i+1] == 'u' && i+6 <= len(t):
				if n, err := strconv.ParseUint(string(t[i+2:i+6]), 16, 32); err == nil {
					b.WriteRune(rune(n))
					i += 5
					continue
				}
			}
		}
		b.WriteByte(t[i])
	}
	return b.Bytes()
}

// base64Runs decodes every run of minBase64 or more base64 characters in t
// and returns the decoded runs one per line, nil if none decodes.
func base64Runs(t []byte) []byte {
	var out []byte
	for i := 0; i < len(t); {
		if !isBase64(t[i]) {
			i++
			continue
		}
		j := i
		for j < len(t) && isBase64(t[j]) {
			j++
		}
		if j-i >= minBase64 {
			run := bytes.TrimRight(t[i:j], "=")
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				if d, err := enc.DecodeString(string(run)); err == nil {
					out = append(append(out, d...), '\n')
					break
				}
			}
		}
		i = j
	}
	return out
}

func isBase64(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' ||
		c == '_' || c == '='
}
