package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	now := func() time.Time { return time.Unix(1_800_000_000, 0) }
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-aud", "acme", "-role", "organizer", "-sub", "me", "-ttl", "1h"}, now, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	parts := strings.Split(strings.TrimSpace(out.String()), ".")
	if len(parts) != 3 {
		t.Fatalf("not a token: %q", out.String())
	}
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if want := `{"sub":"me","aud":"acme","role":"organizer","exp":1800003600}`; string(body) != want {
		t.Errorf("claims %s, want %s", body, want)
	}
	out.Reset()
	if code := run(context.Background(), []string{"-role", "player"}, now, &out, &errs); code != 2 || out.Len() != 0 {
		t.Errorf("no -aud and -sub: exit %d, output %q", code, out.String())
	}
}
