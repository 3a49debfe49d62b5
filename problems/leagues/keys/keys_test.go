package keys

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"flag"
	"os"
	"strings"
	"testing"
)

var generate = flag.Bool("generate", false, "make a new key pair and write it to "+PrivateFile+" and "+PublicFile)

// TestGenerate makes the checked-in pair when run with -generate; without
// it, it checks that the files hold one pair.
func TestGenerate(t *testing.T) {
	if *generate {
		k, err := rsa.GenerateKey(rand.Reader, Bits)
		if err != nil {
			t.Fatal(err)
		}
		priv, pub, err := EncodePair(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(PrivateFile, priv, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(PublicFile, pub, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s and %s; rebuild to embed them", PrivateFile, PublicFile)
		return
	}
	k, err := Private()
	if err != nil {
		t.Fatal(err)
	}
	if k.N.BitLen() != Bits {
		t.Errorf("the key has %d bits, want %d", k.N.BitLen(), Bits)
	}
	_, pub, err := EncodePair(k)
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(PublicFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pub, onDisk) || !bytes.Equal(pub, PublicPEM()) {
		t.Error("public.pem is not the public half of private.pem")
	}
}

func TestSignVerifies(t *testing.T) {
	k, err := Private()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublic(PublicPEM())
	if err != nil {
		t.Fatal(err)
	}
	c := Claims{Sub: "12", Aud: "swift-falcons-1", Role: RolePlayer, Exp: 1767225600}
	tok, err := Sign(k, c)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Sign(k, c)
	if again != tok {
		t.Error("two signatures of the same claims differ")
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("%d parts", len(parts))
	}
	head, _ := base64.RawURLEncoding.DecodeString(parts[0])
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if string(head) != `{"alg":"RS256","typ":"JWT"}` || string(body) != `{"sub":"12","aud":"swift-falcons-1","role":"player","exp":1767225600}` {
		t.Errorf("header %s, claims %s", head, body)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		t.Errorf("the public key does not verify the token: %v", err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 1024)
	if err := rsa.VerifyPKCS1v15(&other.PublicKey, crypto.SHA256, sum[:], sig); err == nil {
		t.Error("another key verifies the token")
	}
}

func TestParseRefusesOtherBlocks(t *testing.T) {
	if _, err := ParsePrivate(PublicPEM()); err == nil {
		t.Error("ParsePrivate took a public key")
	}
	if _, err := ParsePublic(privatePEM); err == nil {
		t.Error("ParsePublic took a private key")
	}
	if _, err := ParsePublic([]byte("junk")); err == nil {
		t.Error("ParsePublic took junk")
	}
}
