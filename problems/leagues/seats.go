package leagues

import (
	"bufio"
	"bytes"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// The tokens of the initial data's seats (each initial player, each tenant's
// organizer, the admin) are signed once per machine and kept in a file: signing
// one takes about a millisecond of CPU, and a run that signed them as its users
// arrived spent a third of the benchmarker's CPU on it, on the same cores as
// the app it measured. Players added during a run still get a token made when
// they are first played.
const (
	// seatTokenLife is how long the kept tokens are valid.
	seatTokenLife = 365 * 24 * time.Hour
	// seatTokenRenew is how long before their expiry the kept tokens are made
	// again.
	seatTokenRenew = 30 * 24 * time.Hour
	// seatTokensHeader starts the file; the key's and the seats' fingerprints
	// and the expiry follow it.
	seatTokensHeader = "tunecon leagues seat tokens 1"
)

// seatKey is the key of model.tokens for a seat.
func seatKey(aud, role, sub string) string { return aud + "\x00" + role + "\x00" + sub }

// seatClaims is one token to make: its claims but the expiry.
type seatClaims struct{ aud, role, sub string }

// initialSeats lists the seats of the initial data, in a fixed order.
func (m *model) initialSeats() []seatClaims {
	out := []seatClaims{{keys.AdminAudience, roleAdmin, adminSub}}
	for _, t := range m.tenants {
		out = append(out, seatClaims{t.name, roleOrganizer, organizerSub})
		for _, p := range t.players {
			out = append(out, seatClaims{t.name, rolePlayer, strconv.FormatInt(p.id, 10)})
		}
	}
	return out
}

// fingerprints returns what a file of tokens must say it was made for: the
// public key, and the seats.
func fingerprints(key *rsa.PrivateKey, seats []seatClaims) (string, string, error) {
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", err
	}
	k := sha256.Sum256(der)
	h := sha256.New()
	for _, s := range seats {
		fmt.Fprintf(h, "%s\x00%s\x00%s\n", s.aud, s.role, s.sub)
	}
	return hex.EncodeToString(k[:8]), hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// seatTokensFile is the file of the kept tokens in the cache directory that
// kit hands the scenario.
const seatTokensFile = "leagues-seat-tokens.txt"

// loadSeatTokens fills m.tokens with the initial seats' tokens: from the file
// at path when it was made with this key, for these seats, and is valid for
// longer than seatTokenRenew after now; else signed now and written there
// (through a temporary file, so that a reader never sees half of one). A file
// that cannot be written costs only the signing again next time.
func (m *model) loadSeatTokens(path string, now time.Time) error {
	seats := m.initialSeats()
	keyPrint, seatPrint, err := fingerprints(m.key, seats)
	if err != nil {
		return err
	}
	if toks, ok := readSeatTokens(path, keyPrint, seatPrint, len(seats), now); ok {
		m.keepSeatTokens(seats, toks)
		return nil
	}
	exp := now.Add(seatTokenLife).Unix()
	toks, err := m.signSeats(seats, exp)
	if err != nil {
		return err
	}
	m.keepSeatTokens(seats, toks)
	if path == "" {
		return nil
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s %s %d\n", seatTokensHeader, keyPrint, seatPrint, exp)
	for _, tok := range toks {
		b.WriteString(tok)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return nil
	}
	_, werr := tmp.Write(b.Bytes())
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		_ = os.Remove(tmp.Name())
	}
	return nil
}

// readSeatTokens reads the tokens of a file made for keyPrint and seatPrint,
// with n of them, that stays valid for longer than seatTokenRenew after now; ok
// is false for any other file, or none.
func readSeatTokens(path, keyPrint, seatPrint string, n int, now time.Time) ([]string, bool) {
	if path == "" {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<16)
	if !sc.Scan() {
		return nil, false
	}
	head := strings.Fields(strings.TrimPrefix(sc.Text(), seatTokensHeader))
	if !strings.HasPrefix(sc.Text(), seatTokensHeader+" ") || len(head) != 3 || head[0] != keyPrint || head[1] != seatPrint {
		return nil, false
	}
	exp, err := strconv.ParseInt(head[2], 10, 64)
	if err != nil || time.Unix(exp, 0).Before(now.Add(seatTokenRenew)) {
		return nil, false
	}
	toks := make([]string, 0, n)
	for sc.Scan() {
		toks = append(toks, sc.Text())
	}
	if sc.Err() != nil || len(toks) != n {
		return nil, false
	}
	return toks, true
}

// signSeats signs the tokens of seats, expiring at exp, on every CPU.
func (m *model) signSeats(seats []seatClaims, exp int64) ([]string, error) {
	toks := make([]string, len(seats))
	errs := make([]error, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Go(func() {
			for i := w; i < len(seats); i += len(errs) {
				s := seats[i]
				if toks[i], errs[w] = keys.Sign(m.key, keys.Claims{Sub: s.sub, Aud: s.aud, Role: s.role, Exp: exp}); errs[w] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return toks, errors.Join(errs...)
}

// keepSeatTokens puts the tokens of seats, in order, where token finds them.
func (m *model) keepSeatTokens(seats []seatClaims, toks []string) {
	m.tokMu.Lock()
	defer m.tokMu.Unlock()
	for i, s := range seats {
		m.tokens[seatKey(s.aud, s.role, s.sub)] = toks[i]
	}
}
