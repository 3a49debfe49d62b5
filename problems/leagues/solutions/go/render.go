package main

// Answers: JSON written straight into a byte buffer. Strings are encoded once, when their entity is made, by
// encoding/json itself, so every answer is byte for byte what the reference's encoder writes.

import (
	"bytes"
	"encoding/json"
	"log"
	"net/http"
	"strconv"
	"sync"
)

// jsonString returns s as encoding/json writes it without HTML escaping, as the reference does.
func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 1<<20 {
		*b = (*b)[:0]
		bufPool.Put(b)
	}
}

var (
	contentTypeJSON = []string{"application/json"}
	cacheControl    = []string{"private"}
)

// writeRaw writes body, JSON, as the answer. Every API answer is for the one who asked: Cache-Control: private.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	h["Cache-Control"] = cacheControl
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

// The errors' bodies, as the reference writes them.
var errorBodies = map[string][]byte{}

func init() {
	for _, m := range []string{"not found", "invalid token", "forbidden", "disqualified", "bad request", "name taken",
		"competition finished", "internal error"} {
		errorBodies[m] = append(append([]byte(`{"error":`), jsonString(m)...), '}')
	}
}

func writeError(w http.ResponseWriter, status int, message string) {
	body, ok := errorBodies[message]
	if !ok {
		body = append(append([]byte(`{"error":`), jsonString(message)...), '}')
	}
	writeRaw(w, status, body)
}

func serverError(w http.ResponseWriter, err error) {
	log.Printf("error: %v", err)
	writeRaw(w, http.StatusInternalServerError, errorBodies["internal error"])
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// appendPlayer appends {"id":…,"display_name":…,"is_disqualified":…}.
func appendPlayer(b []byte, p *player) []byte {
	return append(appendBool(append(b, p.json...), p.disqualified.Load()), '}')
}

// appendCompetition appends {"id":…,"title":…,"is_finished":…}.
func appendCompetition(b []byte, c *competition) []byte {
	return append(appendBool(append(b, c.json...), c.fin.Load() != nil), '}')
}

// appendCompetitions appends {"competitions":[…]}, the highest id first.
func appendCompetitions(b []byte, list []*competition) []byte {
	b = append(b, `{"competitions":[`...)
	for i := len(list) - 1; i >= 0; i-- {
		if i != len(list)-1 {
			b = append(b, ',')
		}
		b = appendCompetition(b, list[i])
	}
	return append(b, "]}"...)
}

// appendRanks appends the entries of a ranking after rank `after`, at most rankingPage of them.
func appendRanks(b []byte, r *ranking, after int64) []byte {
	b = append(b, `"ranks":[`...)
	if after < int64(len(r.entries)) {
		end := min(int64(len(r.entries)), after+rankingPage)
		for i := after; i < end; i++ {
			e := &r.entries[i]
			if i != after {
				b = append(b, ',')
			}
			b = append(b, `{"rank":`...)
			b = strconv.AppendInt(b, i+1, 10)
			b = append(b, `,"player_id":`...)
			b = strconv.AppendInt(b, e.player.id, 10)
			b = append(b, `,"display_name":`...)
			b = append(b, e.player.nameJSON...)
			b = append(b, `,"score":`...)
			b = strconv.AppendInt(b, e.score, 10)
			b = append(b, '}')
		}
	}
	return append(b, ']')
}
