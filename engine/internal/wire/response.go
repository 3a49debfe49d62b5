package wire

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"strconv"
	"strings"
)

// responseHead is a response's status and headers, and how its body is framed.
type responseHead struct {
	status  int
	header  http.Header
	length  int64 // -1: unknown (chunked, or up to the connection's close)
	chunked bool
	close   bool // the connection ends with this response
	noBody  bool
}

// readHead reads the status line and headers of the final response (skipping
// informational ones) with net/http's rules and errors. got says whether any
// byte of a response came.
func readHead(br *bufio.Reader, method string, scratch []byte) (head responseHead, got bool, err error) {
	budget := maxHeaderBytes
	for {
		line, err := readLine(br, &budget)
		if err != nil {
			if err == io.EOF {
				if got || len(line) > 0 {
					err = io.ErrUnexpectedEOF
				}
			}
			return head, got || len(line) > 0, err
		}
		got = true
		major, minor, status, err := parseStatusLine(line)
		if err != nil {
			return head, true, err
		}
		head.header, err = readHeader(br, &budget, scratch)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return head, true, err
		}
		head.status = status
		if err := frame(&head, method, major, minor); err != nil {
			return head, true, err
		}
		if status >= 100 && status <= 199 && status != http.StatusSwitchingProtocols {
			head = responseHead{}
			continue // informational: the final response follows
		}
		return head, true, nil
	}
}

// errHeaderTooLarge is net/http's message for headers past maxHeaderBytes.
var errHeaderTooLarge = fmt.Errorf("net/http: server response headers exceeded %d bytes; aborted", maxHeaderBytes)

// readLine returns one line without its line ending; the slice is valid
// until the next read. Lines longer than the buffer are gathered.
func readLine(br *bufio.Reader, budget *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	*budget -= len(line)
	if err == bufio.ErrBufferFull {
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if *budget < 0 {
				return nil, errHeaderTooLarge
			}
			line, err = br.ReadSlice('\n')
			*budget -= len(line)
			long = append(long, line...)
		}
		line = long
	}
	if *budget < 0 {
		return nil, errHeaderTooLarge
	}
	if err != nil {
		if len(line) > 0 && err == io.EOF {
			// The last line lacks its ending (a '\r' stays, as in bufio's
			// ReadLine).
			return line, nil
		}
		return line, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// parseStatusLine reads "HTTP/1.1 200 OK" as net/http's ReadResponse does.
func parseStatusLine(line []byte) (major, minor, status int, err error) {
	proto, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return 0, 0, 0, fmt.Errorf("malformed HTTP response %q", line)
	}
	rest = bytes.TrimLeft(rest, " ")
	code, _, _ := bytes.Cut(rest, []byte{' '})
	if len(code) != 3 {
		return 0, 0, 0, fmt.Errorf("malformed HTTP status code %q", code)
	}
	if '0' <= code[0] && code[0] <= '9' && '0' <= code[1] && code[1] <= '9' && '0' <= code[2] && code[2] <= '9' {
		status = int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0')
	} else if status, err = strconv.Atoi(string(code)); err != nil || status < 0 {
		return 0, 0, 0, fmt.Errorf("malformed HTTP status code %q", code)
	}
	if string(proto) == "HTTP/1.1" {
		return 1, 1, status, nil
	}
	if major, minor, ok = http.ParseHTTPVersion(string(proto)); !ok {
		return 0, 0, 0, fmt.Errorf("malformed HTTP version %q", proto)
	}
	return major, minor, status, nil
}

// headerField locates one header field in the header block being gathered.
type headerField struct{ k0, k1, v0, v1 int }

// readHeader reads header lines up to the blank line, with the rules of
// net/textproto's ReadMIMEHeader (continuation lines, keys canonicalized
// unless they hold a space, values trimmed, malformed lines refused). The
// fields' bytes are gathered in scratch and become one string: a response's
// headers cost a few allocations, however many there are.
func readHeader(br *bufio.Reader, budget *int, scratch []byte) (http.Header, error) {
	var stack [24]headerField
	fields := stack[:0]
	block := scratch[:0]
	// A field is gathered whole (continuation lines joined with one space,
	// each line trimmed) before it is read, as textproto does.
	var fieldBuf [256]byte
	pending := fieldBuf[:0]
	have, first := false, true
	for {
		line, err := readLine(br, budget)
		if err != nil {
			if have {
				var ferr error
				if block, fields, ferr = appendField(block, fields, pending); ferr != nil {
					return nil, ferr
				}
			}
			return nil, err
		}
		if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			if first {
				if len(line) > 80 { // textproto reads no more of such a line
					return nil, errors.New("message too large")
				}
				return nil, fmt.Errorf("malformed MIME header initial line: %q", line)
			}
			if have { // a continuation line
				pending = append(pending, ' ')
				pending = append(pending, trimSpaceTab(line)...)
				continue
			}
		}
		first = false
		if have {
			if block, fields, err = appendField(block, fields, pending); err != nil {
				return nil, err
			}
			have = false
		}
		if len(line) == 0 {
			break
		}
		line = trimSpaceTab(line)
		if bytes.IndexByte(line, ':') < 0 {
			return nil, fmt.Errorf("malformed MIME header: missing colon: %q", line)
		}
		pending = append(pending[:0], line...)
		have = true
	}
	h := make(http.Header, len(fields))
	if len(fields) == 0 {
		return h, nil
	}
	s := string(block)
	values := make([]string, len(fields))
	for i, f := range fields {
		key := canonicalKey(s[f.k0:f.k1])
		val := s[f.v0:f.v1]
		if vv, ok := h[key]; ok {
			h[key] = append(vv, val)
			continue
		}
		values[i] = val
		h[key] = values[i : i+1 : i+1]
	}
	return h, nil
}

// appendField reads one whole field ("Key: value") into block and fields.
func appendField(block []byte, fields []headerField, kv []byte) ([]byte, []headerField, error) {
	k, v, ok := bytes.Cut(kv, []byte{':'})
	if !ok || !validHeaderKey(k) {
		return block, fields, malformedLine(kv)
	}
	for _, c := range v {
		if !validHeaderValueByte(c) {
			return block, fields, malformedLine(kv)
		}
	}
	v = bytes.TrimLeft(v, " \t")
	f := headerField{k0: len(block)}
	block = append(block, k...)
	f.k1, f.v0 = len(block), len(block)
	block = append(block, v...)
	f.v1 = len(block)
	return block, append(fields, f), nil
}

// malformedLine copies the line into its error: the line itself stays
// where it is (a buffer on the stack, usually).
func malformedLine(kv []byte) error {
	return fmt.Errorf("malformed MIME header line: %q", string(kv))
}

// validHeaderKey: a token, or a token with spaces (kept as is, as
// textproto does); never empty.
func validHeaderKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if c != ' ' && !isTokenChar(c) {
			return false
		}
	}
	return true
}

// canonicalKey is textproto's canonical form ("Content-Type"); a key with a
// space stays as it came. An already canonical key is returned as is.
func canonicalKey(k string) string {
	if strings.IndexByte(k, ' ') >= 0 {
		return k
	}
	upper := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if (upper && 'a' <= c && c <= 'z') || (!upper && 'A' <= c && c <= 'Z') {
			return textproto.CanonicalMIMEHeaderKey(k)
		}
		upper = c == '-'
	}
	return k
}

func validHeaderValueByte(c byte) bool {
	return c >= 0x80 || (c >= 0x20 && c != 0x7f) || c == '\t'
}

func trimSpaceTab(s []byte) []byte {
	return bytes.TrimRight(bytes.TrimLeft(s, " \t"), " \t")
}

// unsupportedTE is net/http's error for a transfer encoding it does not read.
type unsupportedTE struct{ msg string }

func (e *unsupportedTE) Error() string { return e.msg }

// frame decides how the body is delimited, with net/http's rules for a
// response (and, as net/http's, it removes the Transfer-Encoding header, a
// Content-Length a chunked body overrides, and Connection: close).
func frame(head *responseHead, method string, major, minor int) error {
	h := head.header
	head.close = shouldClose(major, minor, h)
	if major == 0 && minor == 0 {
		// As net/http reads the body of an "HTTP/0.0" answer.
		major, minor = 1, 1
	}
	if te, ok := h["Transfer-Encoding"]; ok {
		delete(h, "Transfer-Encoding")
		if major > 1 || (major == 1 && minor >= 1) {
			if len(te) != 1 {
				return &unsupportedTE{fmt.Sprintf("too many transfer encodings: %q", te)}
			}
			if !strings.EqualFold(te[0], "chunked") {
				return &unsupportedTE{fmt.Sprintf("unsupported transfer encoding: %q", te[0])}
			}
			head.chunked = true
		}
	}
	var n int64 = -1
	if cls := h["Content-Length"]; len(cls) > 0 {
		first := textproto.TrimString(cls[0])
		for _, cl := range cls[1:] {
			if textproto.TrimString(cl) != first {
				return fmt.Errorf("http: message cannot contain multiple Content-Length headers; got %q", cls)
			}
		}
		if len(cls) > 1 {
			h["Content-Length"] = []string{first}
		}
		if first == "" {
			return fmt.Errorf("invalid empty Content-Length %q", first)
		}
		v, err := strconv.ParseUint(first, 10, 63)
		if err != nil {
			return fmt.Errorf("bad Content-Length %q", first)
		}
		n = int64(v)
	}
	bodyAllowed := !(head.status/100 == 1 || head.status == http.StatusNoContent || head.status == http.StatusNotModified)
	switch {
	case method == http.MethodHead || !bodyAllowed:
		head.noBody, head.length = true, 0
		if head.status == http.StatusSwitchingProtocols {
			// The connection now speaks something else: read it to its end.
			head.noBody, head.length, head.close = false, -1, true
		}
		return checkTrailer(h, head.chunked)
	case head.chunked:
		delete(h, "Content-Length")
		head.length = -1
	case n >= 0:
		head.length = n
	default:
		delete(h, "Content-Length")
		head.length, head.close = -1, true // up to the connection's close
	}
	return checkTrailer(h, head.chunked)
}

// checkTrailer applies net/http's rules to a Trailer header.
func checkTrailer(h http.Header, chunked bool) error {
	vv, ok := h["Trailer"]
	if !ok || !chunked {
		return nil
	}
	delete(h, "Trailer")
	for _, v := range vv {
		for _, key := range strings.Split(v, ",") {
			switch key = http.CanonicalHeaderKey(textproto.TrimString(key)); key {
			case "Transfer-Encoding", "Trailer", "Content-Length":
				return fmt.Errorf("bad trailer key %q", key)
			}
		}
	}
	return nil
}

func shouldClose(major, minor int, h http.Header) bool {
	if major < 1 {
		return true
	}
	conn := h["Connection"]
	hasClose := hasToken(conn, "close")
	if major == 1 && minor == 0 {
		return hasClose || !hasToken(conn, "keep-alive")
	}
	if hasClose {
		delete(h, "Connection")
	}
	return hasClose
}

// ErrBodyTooLarge is returned past the body size cap.
var ErrBodyTooLarge = errors.New("response body too large")

// emptyBody is the body of a response without one (never nil).
var emptyBody = []byte{}

// readBody reads the whole body, decompressing gzip when the request asked
// for it, up to limit bytes after decompression.
func (t *Transport) readBody(br *bufio.Reader, head *responseHead, askedGzip bool, limit int64) ([]byte, error) {
	if head.noBody || head.length == 0 {
		return emptyBody, nil
	}
	if askedGzip && strings.EqualFold(head.header.Get("Content-Encoding"), "gzip") {
		delete(head.header, "Content-Encoding")
		delete(head.header, "Content-Length")
		var src io.Reader = br
		switch {
		case head.chunked:
			src = httputil.NewChunkedReader(br)
		case head.length > 0:
			src = &countedReader{br: br, n: head.length}
		}
		body, err := t.gunzip(src, limit)
		if err == nil && head.chunked {
			err = readTrailer(br)
		}
		return body, err
	}
	switch {
	case head.chunked:
		body, err := t.readAll(httputil.NewChunkedReader(br), limit)
		if err == nil {
			err = readTrailer(br)
		}
		return body, err
	case head.length > 0:
		if head.length > limit {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, limit)
		}
		body := make([]byte, head.length)
		if _, err := io.ReadFull(br, body); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return body, nil
	default:
		return t.readAll(br, limit)
	}
}

// readAll reads r to its end, up to limit bytes, into a body of exact size.
func (t *Transport) readAll(r io.Reader, limit int64) ([]byte, error) {
	p := t.bufs.bytes(&t.bufs.bodies)
	defer t.bufs.putBytes(&t.bufs.bodies, p)
	b := *p
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			*p = b
			return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, limit)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			*p = b
			return nil, err
		}
	}
	*p = b
	if len(b) == 0 {
		return emptyBody, nil
	}
	return bytes.Clone(b), nil
}

// gunzip decompresses a gzip body; like net/http, an empty body is an empty
// answer and a broken one is an error.
func (t *Transport) gunzip(src io.Reader, limit int64) ([]byte, error) {
	var br io.Reader = src
	if _, ok := src.(io.ByteReader); !ok {
		b := t.bufs.reader(src)
		defer t.bufs.putReader(b)
		br = b
	}
	zr, _ := t.bufs.gzips.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(br)
	} else {
		err = zr.Reset(br)
	}
	if err == io.EOF {
		return emptyBody, nil
	}
	if err != nil {
		return nil, err
	}
	defer t.bufs.gzips.Put(zr)
	return t.readAll(zr, limit)
}

// readTrailer reads what follows a chunked body: a blank line, or trailer
// fields and a blank line (which net/http reads and the engine ignores).
func readTrailer(br *bufio.Reader) error {
	buf, err := br.Peek(2)
	if bytes.Equal(buf, []byte("\r\n")) {
		_, _ = br.Discard(2)
		return nil
	}
	if len(buf) < 2 {
		return errors.New("http: unexpected EOF reading trailer")
	}
	if err != nil {
		return err
	}
	// The trailer must end within the buffer, as net/http requires.
	for n := 4; ; n++ {
		buf, err := br.Peek(n)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			break
		}
		if err != nil {
			return errors.New("http: suspiciously long trailer after chunked body")
		}
	}
	if _, err := textproto.NewReader(br).ReadMIMEHeader(); err != nil {
		if err == io.EOF {
			return errors.New("http: unexpected EOF reading trailer")
		}
		return err
	}
	return nil
}

// countedReader reads exactly n bytes of br (a body of known length), as a
// byte reader so that a gzip reader needs no buffer of its own.
type countedReader struct {
	br *bufio.Reader
	n  int64
}

func (r *countedReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	n, err := r.br.Read(p)
	r.n -= int64(n)
	if err == io.EOF && r.n > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (r *countedReader) ReadByte() (byte, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	c, err := r.br.ReadByte()
	if err == io.EOF {
		return 0, io.ErrUnexpectedEOF
	}
	if err == nil {
		r.n--
	}
	return c, err
}

// hasToken reports whether comma-separated header values hold token,
// compared without case.
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.Trim(t, " \t"), token) {
				return true
			}
		}
	}
	return false
}

// IsMalformed reports a response that is not valid HTTP. Such errors have
// no types, in net/http as here: the words of their messages are matched.
func IsMalformed(err error) bool {
	msg := err.Error()
	for _, w := range []string{"malformed", "invalid", "gzip", "bad header", "unsupported transfer encoding"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}
