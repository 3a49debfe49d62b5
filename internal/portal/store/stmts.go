package store

import (
	"context"
	"database/sql"
	"sync"
)

// maxStmts bounds the statements a store keeps prepared. The store's
// statements are constants and a few filter combinations, far fewer; a
// query past the bound runs unprepared.
const maxStmts = 256

// stmts keeps each statement the store runs outside a transaction prepared,
// once per query text. modernc's SQLite driver parses a statement's SQL
// again on every call otherwise: a third of the portal's CPU serving pages
// (make portal-perf with -cpuprofile). pgx keeps each connection's
// statements prepared itself, so a PostgreSQL store has no stmts.
type stmts struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

func newStmts(db *sql.DB) *stmts { return &stmts{db: db, m: map[string]*sql.Stmt{}} }

// lookup is query's prepared statement, or nil if none is kept yet.
func (c *stmts) lookup(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[query]
}

// prepared is query's prepared statement, prepared now if need be; nil if
// it cannot be (past maxStmts, or the driver refuses it: the caller then
// runs the query unprepared, and sees the error there). It prepares outside
// the lock: preparing waits for a connection, which a transaction may hold
// while it looks up a statement.
func (c *stmts) prepared(ctx context.Context, query string) *sql.Stmt {
	if s := c.lookup(query); s != nil {
		return s
	}
	c.mu.Lock()
	full := len(c.m) >= maxStmts
	c.mu.Unlock()
	if full {
		return nil
	}
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.m[query]; ok { // another goroutine was first
		s.Close()
		return kept
	}
	c.m[query] = s
	return s
}

// close closes every kept statement.
func (c *stmts) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, s := range c.m {
		s.Close()
		delete(c.m, q)
	}
}
