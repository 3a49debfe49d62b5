package leagues

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// claimsOf verifies tok with pub and returns its claims.
func claimsOf(t *testing.T, pub *rsa.PublicKey, tok string) keys.Claims {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d parts", tok, len(parts))
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("token %q: %v", tok, err)
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c keys.Claims
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// seatToken returns the kept token of player 2 of the tiny model.
func seatToken(m *model) string { return m.tokens[seatKey("tiny-league-1", rolePlayer, "2")] }

// TestSeatTokensAreKept: the initial seats' tokens are signed once, written,
// read back by the next scenario, and signed again only for another key, other
// seats, a file near its expiry or a damaged one.
func TestSeatTokensAreKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache", "tokens.txt")
	m, _, _ := tinyModel(t)
	if err := m.loadSeatTokens(path, t0); err != nil {
		t.Fatal(err)
	}
	if n := len(m.tokens); n != 5 { // the admin, the organizer, three players
		t.Fatalf("%d tokens kept, want 5", n)
	}
	first := seatToken(m)
	c := claimsOf(t, &m.key.PublicKey, first)
	if c.Sub != "2" || c.Aud != "tiny-league-1" || c.Role != rolePlayer || c.Exp != t0.Add(seatTokenLife).Unix() {
		t.Fatalf("claims %+v", c)
	}
	org := m.tokens[seatKey("tiny-league-1", roleOrganizer, organizerSub)]
	if c := claimsOf(t, &m.key.PublicKey, org); c.Role != roleOrganizer || c.Sub != organizerSub {
		t.Fatalf("organizer's claims %+v", c)
	}

	// A later scenario reads them: a token signed again would carry a later
	// expiry.
	later := t0.Add(24 * time.Hour)
	again := func(t *testing.T, m *model) string {
		t.Helper()
		if err := m.loadSeatTokens(path, later); err != nil {
			t.Fatal(err)
		}
		return seatToken(m)
	}
	m2, _, _ := tinyModel(t)
	if tok := again(t, m2); tok != first {
		t.Fatalf("the next scenario signed again: %q, want the kept %q", tok, first)
	}

	t.Run("near expiry", func(t *testing.T) {
		m, _, _ := tinyModel(t)
		if err := m.loadSeatTokens(path, t0.Add(seatTokenLife-seatTokenRenew+time.Hour)); err != nil {
			t.Fatal(err)
		}
		if seatToken(m) == first {
			t.Fatal("a file a month from its expiry was used")
		}
	})
	t.Run("another key", func(t *testing.T) {
		m, _, _ := tinyModel(t)
		if err := m.loadSeatTokens(path, t0); err != nil { // the near-expiry case wrote a fresh file
			t.Fatal(err)
		}
		kept := seatToken(m)
		other, _, _ := tinyModel(t)
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		other.key = k
		if err := other.loadSeatTokens(path, t0); err != nil {
			t.Fatal(err)
		}
		if tok := seatToken(other); tok == kept {
			t.Fatal("tokens of another key were used")
		} else {
			claimsOf(t, &k.PublicKey, tok)
		}
	})
	t.Run("other seats", func(t *testing.T) {
		m, tn, _ := tinyModel(t)
		tn.players[2] = &player{id: 4, name: "D"} // as many seats, one of them another
		if err := m.loadSeatTokens(path, t0); err != nil {
			t.Fatal(err)
		}
		if _, ok := m.tokens[seatKey("tiny-league-1", rolePlayer, "3")]; ok {
			t.Fatal("a seat that is not in the data got a token")
		}
		m2, _, _ := tinyModel(t)
		if err := m2.loadSeatTokens(path, later); err != nil {
			t.Fatal(err)
		}
		if c := claimsOf(t, &m2.key.PublicKey, m2.tokens[seatKey("tiny-league-1", rolePlayer, "3")]); c.Exp != later.Add(seatTokenLife).Unix() {
			t.Fatalf("the file of other seats was used: exp %d", c.Exp)
		}
	})
	t.Run("damaged", func(t *testing.T) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		if err := os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-2], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		m, _, _ := tinyModel(t)
		if err := m.loadSeatTokens(path, t0.Add(48*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if c := claimsOf(t, &m.key.PublicKey, seatToken(m)); c.Exp != t0.Add(48*time.Hour).Add(seatTokenLife).Unix() {
			t.Fatalf("a file missing a token was used: exp %d", c.Exp)
		}
	})
	t.Run("no cache directory", func(t *testing.T) {
		m, _, _ := tinyModel(t)
		if err := m.loadSeatTokens("", t0); err != nil || len(m.tokens) != 5 {
			t.Fatalf("err %v, %d tokens", err, len(m.tokens))
		}
	})
}
