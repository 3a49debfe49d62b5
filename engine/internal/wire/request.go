package wire

import (
	"fmt"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
)

// RequestError is a request the transport refuses to send, as net/http
// would refuse it: the caller's fault, never the server's. Nothing was sent.
type RequestError struct{ Message string }

func (e *RequestError) Error() string { return e.Message }

func badRequest(format string, args ...any) error {
	return &RequestError{Message: fmt.Sprintf(format, args...)}
}

// validRequest refuses what net/http would refuse to send: these are the
// scenario's faults, never the target's.
func validRequest(rq *Request) error {
	switch rq.Method {
	case http.MethodGet, http.MethodPost, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions:
	default:
		if !isToken(rq.Method) {
			return badRequest("invalid method %q", rq.Method)
		}
	}
	if rq.URL.Scheme != "http" && rq.URL.Scheme != "https" {
		return badRequest("unsupported protocol scheme %q", rq.URL.Scheme)
	}
	if rq.URL.Host == "" {
		return badRequest("no host in request URL %s", rq.URL)
	}
	if rq.Host != "" && strings.ContainsFunc(rq.Host, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		return badRequest("invalid Host %q", rq.Host)
	}
	for k, vv := range rq.Header {
		if !isToken(k) {
			return badRequest("invalid header field name %q", k)
		}
		for _, v := range vv {
			if !validFieldValue(v) {
				return badRequest("invalid header field value for %q", k)
			}
		}
	}
	return nil
}

// reqExcluded are the scenario's headers the request line and the
// transport write themselves, as net/http does.
func reqExcluded(k string) bool {
	switch k {
	case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
		return true
	}
	return false
}

// appendRequest writes rq in HTTP/1.1.
func appendRequest(b []byte, rq *Request, gzip, closeConn bool) []byte {
	b = append(b, rq.Method...)
	b = append(b, ' ')
	b = append(b, rq.URL.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	if rq.Host != "" {
		b = append(b, rq.Host...)
	} else {
		b = append(b, rq.URL.Host...)
	}
	b = append(b, "\r\nUser-Agent: "...)
	b = append(b, rq.UserAgent...)
	b = append(b, "\r\n"...)
	if len(rq.Body) > 0 || (rq.Method != http.MethodGet && rq.Method != http.MethodHead) {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(rq.Body)), 10)
		b = append(b, "\r\n"...)
	}
	if closeConn {
		b = append(b, "Connection: close\r\n"...)
	}
	// The jar's cookies join the scenario's first Cookie value in one
	// header, as net/http's client sends them.
	cookie := rq.Cookie
	if own := rq.Header.Get("Cookie"); own != "" && cookie != "" {
		cookie = own + "; " + cookie
	}
	if len(rq.Header) > 0 {
		for _, k := range sortedKeys(rq.Header) {
			if reqExcluded(k) || (k == "Cookie" && cookie != "") ||
				(k == "If-None-Match" && rq.IfNoneMatch != "") || (k == "If-Modified-Since" && rq.IfModifiedSince != "") {
				continue
			}
			for _, v := range rq.Header[k] {
				b = appendHeader(b, k, textproto.TrimString(v))
			}
		}
	}
	if cookie != "" {
		b = appendHeader(b, "Cookie", cookie)
	}
	if rq.IfNoneMatch != "" {
		b = appendHeader(b, "If-None-Match", rq.IfNoneMatch)
	}
	if rq.IfModifiedSince != "" {
		b = appendHeader(b, "If-Modified-Since", rq.IfModifiedSince)
	}
	if gzip {
		b = append(b, "Accept-Encoding: gzip\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, rq.Body...)
}

func appendHeader(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ": "...)
	b = append(b, v...)
	return append(b, "\r\n"...)
}

func sortedKeys(h http.Header) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// isTokenChar reports a byte of an RFC 9110 token (a method, a field name).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

// validFieldValue refuses control characters (tab aside) in a header value.
func validFieldValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
