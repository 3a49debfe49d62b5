package leagues

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// verifies reports whether tok's signature is RS256 by key's public half.
func verifies(key *rsa.PrivateKey, tok string) bool {
	i := strings.LastIndexByte(tok, '.')
	sig, err := b64.DecodeString(tok[i+1:])
	if err != nil || !strings.HasPrefix(tok, rs256Header+".") {
		return false
	}
	sum := sha256.Sum256([]byte(tok[:i]))
	return rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, sum[:], sig) == nil
}

// TestTamperedTokens: every spoiled token keeps the real signature's length
// (but alg none's, which may have none) and fails verification, and its
// claims differ or its signature does.
func TestTamperedTokens(t *testing.T) {
	key, err := keys.Private()
	if err != nil {
		t.Fatal(err)
	}
	own, err := keys.Sign(key, keys.Claims{Sub: "12", Aud: "tiny-league-1", Role: rolePlayer, Exp: 1900000000})
	if err != nil {
		t.Fatal(err)
	}
	if !verifies(key, own) {
		t.Fatal("the real token does not verify")
	}
	realLen := len(own) - strings.LastIndexByte(own, '.')
	rnd := mrand.New(mrand.NewPCG(1, 2))
	for _, kind := range []negKind{negRandomSig, negFlippedBit, negChangedClaims, negAlgNone, negHMAC} {
		for range 50 {
			tok := tampered(own, kind, []string{"other-league", adminLabel}, rnd)
			if tok == own || verifies(key, tok) {
				t.Fatalf("%s: %q is the real token, or verifies", negNames[kind], tok)
			}
			if n := len(tok) - strings.LastIndexByte(tok, '.'); kind != negAlgNone && kind != negHMAC && n != realLen {
				t.Fatalf("%s: a signature of %d characters, the real ones have %d", negNames[kind], n, realLen)
			}
		}
	}
	other, err := rsa.GenerateKey(rand.Reader, keys.Bits)
	if err != nil {
		t.Fatal(err)
	}
	f := newForger(key, other)
	c, _, _ := split(own)
	for _, kind := range []negKind{negOtherKey, negExpired} {
		tok, err := f.signedFake(kind, c, t0, rnd)
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := split(tok)
		if n := len(tok) - strings.LastIndexByte(tok, '.'); n != realLen {
			t.Fatalf("%s: a signature of %d characters, the real ones have %d", negNames[kind], n, realLen)
		}
		if kind == negOtherKey && verifies(key, tok) || kind == negExpired && got.Exp >= t0.Unix() {
			t.Fatalf("%s: %+v is not refused", negNames[kind], got)
		}
	}
}

// TestRecentExp: a recently expired token's exp is a whole second or more
// before the target's current second from the span's start on, whatever the
// target's clock's lead.
func TestRecentExp(t *testing.T) {
	rnd := mrand.New(mrand.NewPCG(3, 4))
	for _, lo := range []time.Duration{-2500 * time.Millisecond, 0, 700 * time.Millisecond, 3 * time.Second} {
		for range 20 {
			from := t0.Unix()
			exp := recentExp(from, lo, rnd)
			target := time.Unix(from, 0).Add(lo).Unix()
			if exp > target-1 || exp < target-6 {
				t.Fatalf("lo %v: exp %d, the target's second %d", lo, exp, target)
			}
		}
	}
}

// TestScan: ids of other tenants, any id in a refusal and a player's name in an
// error are found; the viewer's own tenant's ids are not.
func TestScan(t *testing.T) {
	m, tn, _ := tinyModel(t)
	m.own.own(500, 7) // a player of another tenant
	m.own.name("Aiko Tanaka")
	res := func(status int, body string) *engine.Response {
		return &engine.Response{URL: &url.URL{Path: "/api/player/competitions/10/ranking"}, StatusCode: status, Body: []byte(body)}
	}
	for _, c := range []struct {
		status int
		body   string
		leak   bool
	}{
		{http.StatusOK, `{"ranks":[{"rank":1,"player_id":2,"display_name":"B","score":1}]}`, false},
		{http.StatusOK, `{"tenant":{"id":1},"player":{"id":3}}`, false},
		{http.StatusOK, `{"ranks":[{"rank":1,"player_id": 500,"display_name":"B","score":1}]}`, true},
		{http.StatusOK, `{"player":{"id":2},"extra":{"competition_id":500}}`, true},
		{http.StatusUnauthorized, `{"error":"invalid token"}`, false},
		{http.StatusUnauthorized, `{"error":"invalid token","player":{"id":2}}`, true},
		{http.StatusForbidden, `{"error":"forbidden","last_id":3}`, true},
		{http.StatusNotFound, `{"error":"not found: Aiko Tanaka"}`, true},
		{http.StatusNotFound, `{"error":"not found"}`, false},
		{http.StatusNotFound, `{"error":"not found: aiko TANAKA"}`, true},
		{http.StatusOK, `{"player":{"id":2},"last_viewer":{"player_id":"500","name":"B"}}`, true},
		{http.StatusOK, `{"player":{"id":2},"x":"eyJwbGF5ZXJfaWQiOjUwMH0="}`, true},
		{http.StatusUnauthorized, `{"error":"invalid token; the last good one was player 500's"}`, true},
		{http.StatusForbidden, `{"error":"player 2 is disqualified"}`, true},
		{http.StatusUnauthorized, `{"error":"401 invalid token"}`, false},
		{http.StatusUnauthorized, `{"error":"invalid token","example":{"name":"Tiny-League-1"}}`, true},
		{http.StatusUnauthorized, `{"error":"invalid token","example":{"display_name":"tiny league"}}`, true},
		{http.StatusOK, "X-Last-Player-Id: 500", true},
		{http.StatusOK, "X-Last-Player-Id: 2", false},
		{http.StatusUnauthorized, "X-Last-Player-Id: 2", true},
		{http.StatusUnauthorized, "X-Note: player_id%22%3A2", true},
		{http.StatusOK, "X-Count: 500", false},
		{http.StatusOK, "X-Request-Id: 2f500a3c9e", false},
		{http.StatusUnauthorized, `{"error":"invalid token","request_id":"500ab3"}`, false},
		{http.StatusUnauthorized, `{"error":"invalid token","trace":"v500x"}`, false},
	} {
		r := res(c.status, c.body)
		if name, value, ok := strings.Cut(c.body, ": "); ok && strings.HasPrefix(name, "X-") {
			r.Body, r.Header = []byte(`{"ok":1}`), http.Header{name: {value}}
		}
		err := m.own.scan(r, tn.id, false)
		if (err != nil) != c.leak {
			t.Errorf("%d %s: scan says %v, want a leak: %v", c.status, c.body, err, c.leak)
		}
	}
}

// TestIDCeiling: an id above the initial data's plus the ids asked for is
// refused; one within is not.
func TestIDCeiling(t *testing.T) {
	m, tn, _ := tinyModel(t)
	m.playersSent(tn, []string{"D", "E"})
	if why := m.playersAdded(tn, []string{"D", "E"}, []int64{11, 13}, 10, t0); why == "" {
		t.Error("id 13 after 2 ids asked from 11 passed")
	}
	if why := m.playersAdded(tn, []string{"D", "E"}, []int64{11, 12}, 10, t0); why != "" {
		t.Error(why)
	}
}
