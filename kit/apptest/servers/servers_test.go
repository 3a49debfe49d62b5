package servers_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tunecon/tunecon/kit/apptest/servers"
)

// TestPostgres starts a private PostgreSQL server, creates two databases on
// it and writes in one, and stops it.
func TestPostgres(t *testing.T) {
	ctx := context.Background()
	// Not t.TempDir: as root the server runs as nobody, who must reach it.
	dir, err := os.MkdirTemp("", "servers-postgres")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var log bytes.Buffer
	start := time.Now()
	p, err := servers.StartPostgres(ctx, dir, &log)
	if err != nil {
		t.Logf("server log:\n%s", log.String())
	}
	servers.Require(t, err)
	t.Logf("started in %s", time.Since(start).Round(time.Millisecond))
	stopped := false
	defer func() {
		if !stopped {
			p.Stop()
		}
	}()
	dsn, err := p.CreateDatabase(ctx, "Contest-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.CreateDatabase(ctx, "Contest-1"); err == nil {
		t.Error("a second database of the same name was created")
	}
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `CREATE TABLE t (n int); INSERT INTO t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := c.QueryRow(ctx, `SELECT n FROM t`).Scan(&n); err != nil || n != 7 {
		t.Errorf("read %d, %v", n, err)
	}
	// PostgreSQL refuses to run as root: as root, it runs as nobody.
	if st, err := os.Stat(filepath.Join(dir, "data")); err != nil || os.Geteuid() == 0 && st.Sys().(*syscall.Stat_t).Uid == 0 {
		t.Errorf("the data directory: %v, owned by root", err)
	}
	// Stop ends the sessions still open (a fast shutdown) instead of
	// waiting for them.
	start = time.Now()
	p.Stop()
	stopped = true
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("stopping with a session open took %s", d)
	}
	if err := c.Ping(ctx); err == nil {
		t.Error("the server still answers after Stop")
	}
}
