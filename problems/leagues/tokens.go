package leagues

import (
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"

	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// The tokens the app must refuse are made here; keys.Sign makes the good ones.

// claims returns a token's claims; exp 0 leaves exp out, and an empty role or
// sub is kept empty.
func claims(sub, aud, role string, exp int64) map[string]any {
	c := map[string]any{"sub": sub, "aud": aud, "role": role}
	if exp != 0 {
		c["exp"] = exp
	}
	return c
}

// signRaw returns a compact JWT of payload with the header's alg: "RS256"
// signed by key, "HS256" keyed with the problem's public key in PEM (the
// confusion of an RSA key with an HMAC secret), or "none", unsigned.
func (s *Scenario) signRaw(key *rsa.PrivateKey, alg string, payload map[string]any) (string, error) {
	head, err := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding.EncodeToString
	signed := enc(head) + "." + enc(body)
	var sig []byte
	switch alg {
	case "RS256":
		sum := sha256.Sum256([]byte(signed))
		if sig, err = rsa.SignPKCS1v15(nil, key, crypto.SHA256, sum[:]); err != nil {
			return "", err
		}
	case "HS256":
		mac := hmac.New(sha256.New, keys.PublicPEM())
		mac.Write([]byte(signed))
		sig = mac.Sum(nil)
	}
	return signed + "." + enc(sig), nil
}
