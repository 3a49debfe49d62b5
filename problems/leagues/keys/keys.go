// Package keys holds the key pair of the leagues problem's tokens: the
// private key the benchmarker signs players', organizers' and the admin's
// tokens with, and the public key the apps verify them with
// (keys/public.pem, which the apps read from disk). The pair was made once
// by `go test -run TestGenerate -generate` in this directory and is checked
// in: a new pair would make every app's copy of the public key stale.
package keys

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
)

// Files of the pair, in this directory.
const (
	PrivateFile = "private.pem" // PKCS #8, "PRIVATE KEY"
	PublicFile  = "public.pem"  // PKIX, "PUBLIC KEY"
)

// Bits is the size of the RSA key.
const Bits = 2048

// CookieName is the cookie the apps read the token from.
const CookieName = "leagues_token"

// The roles a token may carry.
const (
	RoleAdmin     = "admin"
	RoleOrganizer = "organizer"
	RolePlayer    = "player"
)

// AdminAudience is the aud of the admin's tokens: the admin host's label.
const AdminAudience = "admin"

//go:embed private.pem
var privatePEM []byte

//go:embed public.pem
var publicPEM []byte

// PublicPEM returns the public key as the apps read it.
func PublicPEM() []byte { return append([]byte(nil), publicPEM...) }

// Private parses the problem's private key.
func Private() (*rsa.PrivateKey, error) { return ParsePrivate(privatePEM) }

// ParsePrivate parses a PKCS #8 RSA private key in PEM.
func ParsePrivate(pemBytes []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, errors.New("keys: no PRIVATE KEY block")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("keys: not an RSA key")
	}
	return rk, nil
}

// ParsePublic parses a PKIX RSA public key in PEM.
func ParsePublic(pemBytes []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("keys: no PUBLIC KEY block")
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	rk, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("keys: not an RSA key")
	}
	return rk, nil
}

// EncodePair writes a private key and its public key as the two PEM files
// hold them.
func EncodePair(k *rsa.PrivateKey) (private, public []byte, err error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), nil
}

// Claims are a token's claims, as the manual states them.
type Claims struct {
	// Sub is a player's id in decimal, or an organizer's or the admin's name.
	Sub string `json:"sub"`
	// Aud is the tenant's name, or AdminAudience.
	Aud string `json:"aud"`
	// Role is RoleAdmin, RoleOrganizer or RolePlayer.
	Role string `json:"role"`
	// Exp is the expiry, Unix seconds.
	Exp int64 `json:"exp"`
}

// header is every token's JOSE header.
var header = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))

// Sign returns the compact JWT of claims signed with RS256 by k. RSA
// PKCS #1 v1.5 signatures are deterministic: the same key and claims give
// the same token.
func Sign(k *rsa.PrivateKey, c Claims) (string, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	signed := header + "." + base64.RawURLEncoding.EncodeToString(body)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(nil, k, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}
