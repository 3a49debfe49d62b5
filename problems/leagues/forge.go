package leagues

import (
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// The negative cases of the load: now and then, inside a session, a user sends
// the request it is about to send with a token the app must refuse. The tokens
// look like the user's own: the same header, the same claims in the same order,
// a signature of the real key's length (a real one with a bit flipped, one over
// other claims, random bytes, or another key's of the same size), so that an
// app that checks a token's shape, its signature's length or its audience's
// role alone lets some through.

// negKind is one kind of token the app must refuse.
type negKind int

const (
	negRandomSig      negKind = iota // the viewer's claims, random bytes of a signature's length
	negFlippedBit                    // the viewer's token with one bit of its signature flipped
	negChangedClaims                 // a real signature over the viewer's claims changed
	negAlgNone                       // alg none, with no signature or the real one
	negOtherKey                      // signed by another key of the real key's size
	negExpired                       // signed by the real key, expired
	negWrongRole                     // a real token of a role the endpoint refuses (403)
	negOtherOrganizer                // another tenant's organizer (401)
	negOtherPlayer                   // another tenant's player (401)
	negDisqualified                  // a disqualified player of the tenant (403)
	negHMAC                          // HS256 keyed with the public key (PEM or DER)
	negKinds
)

// negNames name the kinds in messages.
var negNames = [negKinds]string{
	"a token with a random signature", "a token with one bit of its signature flipped",
	"a real signature over changed claims", "an unsigned token (alg none)", "a token signed with another key",
	"an expired token", "a token of a role the endpoint refuses", "another tenant's organizer",
	"another tenant's player", "a disqualified player",
	"a token signed with HS256 keyed with the public key",
}

// negStatus is the status the manual gives each kind.
func (k negKind) status() int {
	switch k {
	case negWrongRole, negDisqualified:
		return http.StatusForbidden
	}
	return http.StatusUnauthorized
}

// negEvery: before each of a session's requests, one time in negEvery the user
// first sends it with a token of a kind drawn at random. negEndpoint marks
// those requests in the result's table, so that their count and time show.
const (
	negEvery    = 40
	negEndpoint = " (refused token)"
)

// forger makes the refused tokens of a run and counts what they cost. The
// signed ones (another key's, expired, the admin's role on a tenant's host)
// are made once per seat and kept: RSA signing costs about a millisecond of
// CPU.
type forger struct {
	key, other *rsa.PrivateKey
	start      time.Time // when the run's forger was made
	mu         sync.Mutex
	kept       map[string]string
	// sent counts the negative requests by kind; signed the signatures made,
	// and signing the time they took.
	sent        [negKinds]atomic.Int64
	signed      atomic.Int64
	signing     atomic.Int64
	overBudgets atomic.Int64
	clockLo     atomic.Int64 // engine.Run.TargetClockBounds' lo, as noted
	expiring    expirings
}

func newForger(key, other *rsa.PrivateKey) *forger {
	return &forger{key: key, other: other, start: time.Now(), kept: map[string]string{}}
}

// The signing of the refused tokens is bounded: past signFree, at most
// signShare of one core's time since the run began; over it, a kind that
// needs a signature gives way to one that does not.
const (
	signFree  = 100 * time.Millisecond
	signShare = 100 // 1%
)

// errSignBudget: the signing budget is spent for now.
var errSignBudget = errors.New("the signing budget of the refused tokens is spent")

// overBudget reports whether signing one more token now would pass the
// budget.
func (f *forger) overBudget() bool {
	return time.Duration(f.signing.Load()) > signFree+time.Since(f.start)/signShare
}

var b64 = base64.RawURLEncoding

// rs256Header is the header of the real tokens, as keys.Sign writes it.
var rs256Header = b64.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))

// compact joins a token's parts.
func compact(head string, c keys.Claims, sig []byte) string {
	body, _ := json.Marshal(c)
	return head + "." + b64.EncodeToString(body) + "." + b64.EncodeToString(sig)
}

// signWith signs c with RS256 by key, counting the cost; kept under id, a
// token is made once.
func (f *forger) signWith(id string, key *rsa.PrivateKey, c keys.Claims) (string, error) {
	f.mu.Lock()
	tok, ok := f.kept[id]
	f.mu.Unlock()
	if ok {
		return tok, nil
	}
	tok, err := f.signFresh(key, c)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	f.kept[id] = tok
	f.mu.Unlock()
	return tok, nil
}

// split returns a real token's claims and signature.
func split(tok string) (keys.Claims, []byte, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return keys.Claims{}, nil, false
	}
	body, err := b64.DecodeString(parts[1])
	sig, err2 := b64.DecodeString(parts[2])
	var c keys.Claims
	if err != nil || err2 != nil || json.Unmarshal(body, &c) != nil {
		return keys.Claims{}, nil, false
	}
	return c, sig, true
}

// tampered returns own, a real token, spoiled by kind: a random signature of
// its length, one bit of it flipped, its signature over claims changed (the
// subject, the role, the audience or a later expiry), or alg none.
func tampered(own string, kind negKind, others []string, rnd *rand.Rand) string {
	c, sig, ok := split(own)
	if !ok {
		return own + "x"
	}
	switch kind {
	case negRandomSig:
		bad := make([]byte, len(sig))
		for i := range bad {
			bad[i] = byte(rnd.UintN(256))
		}
		return compact(rs256Header, c, bad)
	case negFlippedBit:
		bad := append([]byte(nil), sig...)
		bit := rnd.IntN(len(bad) * 8)
		bad[bit/8] ^= 1 << (bit % 8)
		return compact(rs256Header, c, bad)
	case negChangedClaims:
		switch rnd.IntN(4) {
		case 0:
			c.Exp += int64(1 + rnd.IntN(400*24*3600))
		case 1:
			c.Role = map[string]string{rolePlayer: roleOrganizer, roleOrganizer: rolePlayer, roleAdmin: roleOrganizer}[c.Role]
		case 2:
			if aud := others[rnd.IntN(len(others))]; aud != c.Aud {
				c.Aud = aud
			} else {
				c.Exp++
			}
		default:
			if n, err := strconv.ParseInt(c.Sub, 10, 64); err == nil {
				c.Sub = strconv.FormatInt(n+1+rnd.Int64N(50), 10)
			} else {
				c.Sub += strconv.Itoa(rnd.IntN(10))
			}
		}
		return compact(rs256Header, c, sig)
	case negHMAC:
		return hmacSigned(c, rnd)
	default: // negAlgNone
		head := b64.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
		if rnd.IntN(2) == 0 {
			sig = nil
		}
		return compact(head, c, sig)
	}
}

// hmacSecrets are the public key as an app may confuse it with an HMAC
// secret: its PEM file as read, and the DER bytes inside.
var hmacSecrets = func() [][]byte {
	pemBytes := keys.PublicPEM()
	secrets := [][]byte{pemBytes}
	if block, _ := pem.Decode(pemBytes); block != nil {
		secrets = append(secrets, block.Bytes)
	}
	return secrets
}()

// hmacSigned returns c signed with HS256 keyed with the public key, its PEM
// or its DER drawn at random (the algorithm confusion of RSA and HMAC).
func hmacSigned(c keys.Claims, rnd *rand.Rand) string {
	head := b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body, _ := json.Marshal(c)
	signed := head + "." + b64.EncodeToString(body)
	mac := hmac.New(sha256.New, hmacSecrets[rnd.IntN(len(hmacSecrets))])
	mac.Write([]byte(signed))
	return signed + "." + b64.EncodeToString(mac.Sum(nil))
}

// signedFake returns a token of c signed by the other key, or by the real key
// expired (c.Exp moved into the past by a random span, kept for the seat).
func (f *forger) signedFake(kind negKind, c keys.Claims, now time.Time, rnd *rand.Rand) (string, error) {
	id := strconv.Itoa(int(kind)) + "\x00" + seatKey(c.Aud, c.Role, c.Sub)
	if kind == negOtherKey {
		return f.signWith(id, f.other, c)
	}
	if rnd.IntN(2) == 0 {
		c.Exp = now.Add(-time.Duration(60+rnd.IntN(30*24*3600)) * time.Second).Unix()
		return f.signWith(id, f.key, c)
	}
	// Expired a few seconds ago on the target's clock: kept for a span of
	// recentSpan only, so that it is never older than that and a few seconds
	// when it is sent.
	span := now.Unix() / recentSpan
	c.Exp = recentExp(span*recentSpan, time.Duration(f.clockLo.Load()), rnd)
	return f.signWith(id+"\x00"+strconv.FormatInt(span, 10), f.key, c)
}

// recentSpan is how long, in seconds, a recently expired token is kept.
const recentSpan = 20

// recentExp returns the exp of a token expired 1 to 5 seconds before from (a
// Unix second, at or before the token is sent) on the target's clock, which
// is at least lo ahead of the run's (engine.Run.TargetClockBounds): exp is
// at least a whole second before the target's current second when it is sent.
func recentExp(from int64, lo time.Duration, rnd *rand.Rand) int64 {
	target := time.Unix(from, 0).Add(lo)
	return target.Unix() - 1 - int64(rnd.IntN(5))
}

// noteClock keeps the least the target's clock is ahead of the run's.
func (f *forger) noteClock(r *engine.Run) {
	lo, _ := r.TargetClockBounds()
	f.clockLo.Store(int64(lo))
}

// negStats sums up the negative cases of a run for the staff log.
func (f *forger) negStats() string {
	var b strings.Builder
	total := int64(0)
	for k := range negKinds {
		n := f.sent[k].Load()
		total += n
		if n > 0 {
			b.WriteString("; " + negNames[k] + ": " + strconv.FormatInt(n, 10))
		}
	}
	return strconv.FormatInt(total, 10) + " negative requests" + b.String() + "; " +
		strconv.FormatInt(f.signed.Load(), 10) + " tokens signed for them in " +
		time.Duration(f.signing.Load()).Round(time.Millisecond).String() + ", " +
		strconv.FormatInt(f.overBudgets.Load(), 10) + " kinds changed for the signing budget; " +
		strconv.FormatInt(f.expiring.armed.Load(), 10) + " tokens taken before they expired, " +
		strconv.FormatInt(f.expiring.sent.Load(), 10) + " of them sent again after"
}
