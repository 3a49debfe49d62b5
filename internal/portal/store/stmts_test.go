package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// TestKeptStatementsInAndOutOfTransactions: a statement the store keeps
// prepared (SQLite) answers the same inside a transaction as outside, and
// readers outside wait for a transaction that holds SQLite's one connection
// rather than deadlock with it, while it reads and writes with the
// statements they prepared.
func TestKeptStatementsInAndOutOfTransactions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := open(t, storetest.SQLite(t), nil)
	if _, err := s.CreateAccount(ctx, "alice", "hash", portal.RoleContestant); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AccountByLogin(ctx, "alice"); err != nil { // prepared here
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, _, err := s.AccountByLogin(ctx, "alice"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range 20 {
		err := s.InTx(ctx, func(tx *store.Tx) error {
			a, _, err := tx.AccountByLogin(ctx, "alice")
			if err != nil {
				return err
			}
			if a.Login != "alice" {
				t.Errorf("in a transaction: %q, want alice", a.Login)
			}
			_, err = tx.CreateAccount(ctx, "bob"+string(rune('a'+i)), "hash", portal.RoleContestant)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	accounts, err := s.Accounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(accounts) != 21 {
		t.Errorf("%d accounts, want 21", len(accounts))
	}
}
