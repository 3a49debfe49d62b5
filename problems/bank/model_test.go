package bank

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/problems/bank/data"
)

// These tests drive the model's pool of accounts and addresses directly: what
// it lends, when it lends it again, and what it does when it runs dry.

// smallModel is a model over a small generated data set whose pool holds
// accounts 1 to accounts and the addresses 192.168.0.1 to 192.168.0.addrs.
func smallModel(t *testing.T, accounts int64, addrs int) *model {
	t.Helper()
	cfg := data.Config{Seed: 7, Users: 1000, LogRows: 4000}
	st, err := cfg.Initial()
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(cfg, st)
	var ips []string
	for k := 1; k <= addrs; k++ {
		ips = append(ips, fmt.Sprintf("192.168.0.%d", k))
	}
	m.stock(accounts, ips)
	return m
}

// fail records n refused attempts by user id (0: none) from ip.
func fail(m *model, id int64, ip string, n int) {
	for range n {
		m.record(id, ip, reasonWrong, time.Time{}, time.Time{})
	}
}

// TestPoolNeverLendsTwice: sessions borrowing, failing and giving back at
// once never hold one account or one address together, and everything lent
// comes back.
func TestPoolNeverLendsTwice(t *testing.T) {
	m := smallModel(t, 40, 30)
	var mu sync.Mutex
	heldUsers, heldIPs := map[int64]bool{}, map[string]bool{}
	hold := func(id int64, ip string, on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on && (id != 0 && heldUsers[id] || ip != "" && heldIPs[ip]) {
			t.Errorf("account %d or address %q lent to two sessions at once", id, ip)
		}
		if id != 0 {
			heldUsers[id] = on
		}
		if ip != "" {
			heldIPs[ip] = on
		}
	}
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(1, uint64(g)))
			for range 2000 {
				id := m.borrowAccount(rnd, rnd.IntN(4) == 0)
				ip := m.borrowAddr(rnd, 1, 0)
				hold(id, ip, true)
				if ip != "" && rnd.IntN(3) == 0 {
					fail(m, id, ip, 1) // may lock id; never bans ip (room for 1 was asked)
				}
				if ip != "" && id != 0 && !m.locked(id) && rnd.IntN(2) == 0 {
					m.record(id, ip, "", time.Time{}, time.Time{})
				}
				hold(id, ip, false)
				m.giveBack(id, ip)
			}
		})
	}
	wg.Wait()
	unlocked, locked, addrs := m.poolSize()
	if unlocked+locked != 40 || addrs != 30 {
		t.Errorf("after the sessions the pool has %d+%d accounts and %d addresses, want 40 and 30", unlocked, locked, addrs)
	}
}

// TestPoolLendsOnlyWhatCameBack: a drained pool lends nothing until a loan
// ends, and then exactly what came back.
func TestPoolLendsOnlyWhatCameBack(t *testing.T) {
	m := smallModel(t, 20, 5)
	rnd := rand.New(rand.NewPCG(1, 2))
	seen := map[int64]bool{}
	for _, locked := range []bool{false, true} {
		for id := m.borrowAccount(rnd, locked); id != 0; id = m.borrowAccount(rnd, locked) {
			if seen[id] {
				t.Fatalf("account %d lent twice without coming back", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != 20 {
		t.Fatalf("lent %d accounts, want all 20", len(seen))
	}
	var ips []string
	for ip := m.borrowAddr(rnd, 0, 0); ip != ""; ip = m.borrowAddr(rnd, 0, 0) {
		ips = append(ips, ip)
	}
	if len(ips) != 5 || len(slices.Compact(slices.Sorted(slices.Values(ips)))) != 5 {
		t.Fatalf("lent %v, want the 5 addresses once each", ips)
	}

	id, ip := firstUnlocked(t, m, seen), ips[2]
	m.giveBack(id, ip)
	if got := m.borrowAccount(rnd, false); got != id {
		t.Errorf("after account %d came back the pool lent %d", id, got)
	}
	if got := m.borrowAddr(rnd, 0, 0); got != ip {
		t.Errorf("after address %s came back the pool lent %q", ip, got)
	}
	if m.borrowAccount(rnd, false) != 0 || m.borrowAddr(rnd, 0, 0) != "" {
		t.Errorf("a drained pool lent again")
	}
}

// firstUnlocked returns the smallest unlocked account of seen.
func firstUnlocked(t *testing.T, m *model, seen map[int64]bool) int64 {
	t.Helper()
	for _, id := range slices.Sorted(func(yield func(int64) bool) {
		for id := range seen {
			if !yield(id) {
				return
			}
		}
	}) {
		if !m.locked(id) {
			return id
		}
	}
	t.Fatal("no unlocked account")
	return 0
}

// TestPoolFilesByState: what comes back is lent again by its state now:
// locked accounts to those who want one, addresses by their room before a
// ban; banned addresses and uncertain ones never again.
func TestPoolFilesByState(t *testing.T) {
	m := smallModel(t, 1, 4)
	rnd := rand.New(rand.NewPCG(3, 4))
	if m.locked(1) {
		t.Fatal("account 1 is locked in the small data set; pick another")
	}

	id := m.borrowAccount(rnd, false)
	ip := m.borrowAddr(rnd, 0, 0)
	fail(m, id, ip, data.LockThreshold-m.userFailures(id))
	m.giveBack(id, ip)
	if got := m.borrowAccount(rnd, false); got != 0 {
		t.Errorf("the locked account was lent as unlocked")
	}
	if got := m.borrowAccount(rnd, true); got != id {
		t.Errorf("the locked account was not lent as locked: got %d", got)
	}
	m.giveBack(id, "")

	// ip has the lock's failures: it is lent only to those who need less room.
	room := data.BanThreshold - m.ipCount(ip)
	var others []string
	for {
		got := m.borrowAddr(rnd, room, 0)
		if got == "" {
			break
		}
		if got == ip {
			t.Fatalf("address %s lent with room for %d more failures, but it has %d", ip, room, m.ipCount(ip))
		}
		others = append(others, got)
	}
	if got := m.borrowAddr(rnd, room-1, 0); got != ip {
		t.Errorf("address %s with room for %d failures was not lent: got %q", ip, room-1, got)
	}
	fail(m, 0, ip, room) // banned
	m.giveBack(0, ip)
	m.unsure(0, others[0])
	for _, o := range others {
		m.giveBack(0, o)
	}
	var back []string
	for got := m.borrowAddr(rnd, 0, 0); got != ""; got = m.borrowAddr(rnd, 0, 0) {
		back = append(back, got)
	}
	slices.Sort(back)
	if want := others[1:]; !slices.Equal(back, slices.Sorted(slices.Values(want))) {
		t.Errorf("lent %v after a ban and an uncertain attempt, want %v", back, want)
	}
	if got := m.borrowAccount(rnd, true); got != id {
		t.Fatalf("the locked account was not lent again: got %d", got)
	}
	m.unsure(id, "")
	m.giveBack(id, "")
	if got := m.borrowAccount(rnd, true); got != 0 {
		t.Errorf("account %d, uncertain, was lent again", id)
	}
}

// TestPoolKeepsItsReserve: a borrower that must leave keep addresses free
// gets none when that many or fewer are free.
func TestPoolKeepsItsReserve(t *testing.T) {
	m := smallModel(t, 1, 5)
	rnd := rand.New(rand.NewPCG(5, 6))
	if got := m.borrowAddr(rnd, 0, 5); got != "" {
		t.Errorf("lent %s with 5 free and 5 to keep", got)
	}
	got := m.borrowAddr(rnd, 0, 4)
	if got == "" {
		t.Fatal("lent nothing with 5 free and 4 to keep")
	}
	if again := m.borrowAddr(rnd, 0, 4); again != "" {
		t.Errorf("lent %s with 4 free and 4 to keep", again)
	}
	m.giveBack(0, got)
	if _, _, addrs := m.poolSize(); addrs != 5 {
		t.Errorf("%d free addresses after the loan ended, want 5", addrs)
	}
}

// TestPoolRefusesWhatIsNotLent: giving back twice, or what was never lent,
// is the benchmarker's bug: it panics (the engine reports a panic as an
// internal error) rather than lend one account twice.
func TestPoolRefusesWhatIsNotLent(t *testing.T) {
	m := smallModel(t, 3, 3)
	rnd := rand.New(rand.NewPCG(7, 8))
	id := m.borrowAccount(rnd, false)
	m.giveBack(id, "")
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"an account twice", func() { m.giveBack(id, "") }},
		{"an address never lent", func() { m.giveBack(0, "192.168.0.1") }},
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "not lent") {
					t.Errorf("giving back %s: panic %v, want one saying not lent", c.name, p)
				}
			}()
			c.f()
		}()
	}
}

// TestPoolServesMaxUsers: the scenario's pool lends maxUsers sessions an
// unlocked account and an address with room for a lock's failures at once,
// with addrReserve addresses to spare; and it holds nothing the pre-check
// uses.
func TestPoolServesMaxUsers(t *testing.T) {
	s, err := NewScenario()
	if err != nil {
		t.Fatal(err)
	}
	if lp := s.Meta().Load; lp.MaxUsers != maxUsers {
		t.Fatalf("Meta's MaxUsers is %d, want maxUsers %d", lp.MaxUsers, maxUsers)
	}
	unlocked, locked, addrs := s.m.poolSize()
	if unlocked+locked != loadAccounts || addrs != len(loadAddrs()) {
		t.Errorf("pool: %d+%d accounts and %d addresses, want %d and %d", unlocked, locked, addrs, loadAccounts, len(loadAddrs()))
	}
	if addrs < maxUsers+addrReserve {
		t.Errorf("%d addresses cannot serve %d users and keep %d", addrs, maxUsers, addrReserve)
	}
	rnd := rand.New(rand.NewPCG(9, 10))
	for n := range maxUsers {
		if s.m.borrowAccount(rnd, false) == 0 || s.m.borrowAddr(rnd, data.LockThreshold+1, 0) == "" {
			t.Fatalf("the pool ran dry after lending to %d sessions, want %d", n, maxUsers)
		}
	}
	if s.m.borrowAddr(rnd, 0, addrReserve) == "" {
		t.Errorf("with %d sessions holding an address, none is left to get banned", maxUsers)
	}

	o := preCheckReserved(s)
	if o.first != loadAccounts+1 || o.last != int64(s.m.cfg.Users) {
		t.Errorf("the pre-check's accounts are %d to %d, want %d to %d", o.first, o.last, loadAccounts+1, s.m.cfg.Users)
	}
	load := map[string]bool{}
	for _, ip := range loadAddrs() {
		load[ip] = true
	}
	for _, ip := range o.addrs {
		if load[ip] {
			t.Errorf("the pre-check's address %s is lent to the load", ip)
		}
	}
}

// TestManualStatesThePool: the manual's numbers of the load are the code's.
func TestManualStatesThePool(t *testing.T) {
	manual, err := os.ReadFile("MANUAL.md")
	if err != nil {
		t.Fatal(err)
	}
	// The manual wraps lines: compare with its words joined by single spaces.
	text := strings.Join(strings.Fields(string(manual)), " ")
	for _, want := range []string{
		fmt.Sprintf("one of the accounts 1 to %s", thousands(loadAccounts)),
		fmt.Sprintf("one of the %s addresses `192.168.X.Y` (`Y` from 1 to 254, every `X` but %d)", thousands(len(loadAddrs())), preCheckNet),
		fmt.Sprintf("accounts %s to %s and addresses `192.168.%d.1`", thousands(loadAccounts+1), thousands(data.Default().Users), preCheckNet),
		fmt.Sprintf("only while %s other addresses stay free", thousands(addrReserve)),
		fmt.Sprintf("and a sixteenth from then on (up to %s users:", thousands(maxUsers)),
		fmt.Sprintf("The load starts with %d users.", startUsers),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("MANUAL.md does not say %q", want)
		}
	}
}

// thousands writes n with commas, as the manual does: 198,000.
func thousands[T int | int64](n T) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
