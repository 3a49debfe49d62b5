package engine_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/tunecon/tunecon/engine"
)

// TestReadingsUndoTheCheapDisguises: a name hidden in a header, escaped
// for a URL, an HTML attribute or JSON, or in base64, is in one of an
// answer's readings as written.
func TestReadingsUndoTheCheapDisguises(t *testing.T) {
	t.Parallel()
	secret := "user5@dashboard.test"
	for name, res := range map[string]*engine.Response{
		"body":             {Body: []byte("<p>" + secret + "</p>")},
		"header":           {Header: http.Header{"X-Last": {secret}}, Body: []byte("ok")},
		"percent-escaped":  {Header: http.Header{"Location": {"/?who=user5%40dashboard.test"}}, Body: []byte("ok")},
		"HTML references":  {Body: []byte(`<a title="user5&#64;dashboard&#x2e;test">x</a>`)},
		"JSON escapes":     {Body: []byte(`{"who":"user5\u0040dashboard.test"}`)},
		"base64":           {Body: []byte(`{"blob":"` + base64.StdEncoding.EncodeToString([]byte(`{"email":"`+secret+`"}`)) + `"}`)},
		"base64, URL-safe": {Header: http.Header{"X-B": {base64.RawURLEncoding.EncodeToString([]byte("<<" + secret + ">>"))}}},
	} {
		found := false
		for _, text := range res.Readings() {
			found = found || bytes.Contains(text, []byte(secret))
		}
		if !found {
			t.Errorf("%s: no reading of the answer shows %q", name, secret)
		}
	}
	asset := &engine.Response{Asset: true, StatusCode: 200, Body: []byte(secret), Header: http.Header{"X-Last": {secret}}}
	if r := asset.Readings(); len(r) != 1 || string(r[0]) != secret {
		t.Errorf("an asset's readings are %q, want its header alone (its body is held to its SHA-256)", r)
	}
	plain := &engine.Response{Body: []byte("<p>nothing to see</p>"), Header: http.Header{"Date": {"Mon"}}}
	if n := len(plain.Readings()); n != 1 {
		t.Errorf("a plain answer has %d readings, want its body alone", n)
	}
}
