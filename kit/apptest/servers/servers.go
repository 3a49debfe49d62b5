// Package servers starts private instances of the real servers some tests
// and tools use (MariaDB, PostgreSQL, nginx) on loopback, each in a
// directory of its own, and stops them. Nothing here touches a system-wide
// instance.
package servers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Missing is returned when a server is not installed; it names the Debian
// package that provides it.
type Missing struct{ Package, Binary string }

func (m *Missing) Error() string {
	return fmt.Sprintf("%s is not installed (Debian package %s; `make test` installs it when run as root)", m.Binary, m.Package)
}

// look finds the first of names on PATH or in /usr/sbin.
func look(pkg string, names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
		if p := filepath.Join("/usr/sbin", n); isExec(p) {
			return p, nil
		}
	}
	return "", &Missing{Package: pkg, Binary: names[0]}
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&0o111 != 0
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// process is a started server.
type process struct {
	cmd    *exec.Cmd
	exited chan error
}

func start(cmd *exec.Cmd, log io.Writer) (*process, error) {
	cmd.Stdout, cmd.Stderr = log, log
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	dieWithParent(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	return p, nil
}

// stop sends SIGTERM, and SIGKILL after 20 s.
func (p *process) stop() { p.stopWith(-p.cmd.Process.Pid, syscall.SIGTERM) }

// stopWith sends sig to pid (the process group when negative), and SIGKILL
// to the group after 20 s.
func (p *process) stopWith(pid int, sig syscall.Signal) {
	_ = syscall.Kill(pid, sig)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// waitPort waits until something listens on 127.0.0.1:port.
func (p *process) waitPort(ctx context.Context, port int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.exited:
			p.exited <- err
			return fmt.Errorf("%s exited: %v", filepath.Base(p.cmd.Path), err)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not listen on port %d within %s", filepath.Base(p.cmd.Path), port, limit)
}

// MariaDB is a private MariaDB server on 127.0.0.1 with a user tunecon
// (password tunecon) that may do anything.
type MariaDB struct {
	Port   int
	dir    string
	client string
	proc   *process
}

// StartMariaDB initializes a data directory under dir and starts the server.
func StartMariaDB(ctx context.Context, dir string, log io.Writer) (*MariaDB, error) {
	server, err := look("mariadb-server", "mariadbd", "mysqld")
	if err != nil {
		return nil, err
	}
	install, err := look("mariadb-server", "mariadb-install-db", "mysql_install_db")
	if err != nil {
		return nil, err
	}
	client, err := look("mariadb-client", "mariadb", "mysql")
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, install, "--no-defaults", "--datadir="+data, "--user="+u.Username,
		"--auth-root-authentication-method=normal", "--skip-test-db")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("mariadb-install-db: %w", err)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	m := &MariaDB{Port: port, dir: dir, client: client}
	args := []string{"--no-defaults", "--datadir=" + data, "--socket=" + m.socket(), "--pid-file=" + filepath.Join(dir, "mariadb.pid"),
		"--port=" + strconv.Itoa(port), "--bind-address=127.0.0.1", "--user=" + u.Username,
		"--skip-log-bin", "--innodb-buffer-pool-size=256M", "--innodb-flush-log-at-trx-commit=2", "--max-allowed-packet=64M"}
	if m.proc, err = start(exec.Command(server, args...), log); err != nil {
		return nil, err
	}
	if err := m.proc.waitPort(ctx, port, 60*time.Second); err != nil {
		m.proc.stop()
		return nil, err
	}
	if err := m.SQL(ctx, "CREATE USER 'tunecon'@'%' IDENTIFIED BY 'tunecon'; GRANT ALL ON *.* TO 'tunecon'@'%';"); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

func (m *MariaDB) socket() string { return filepath.Join(m.dir, "mariadb.sock") }

// SQL runs statements as root through the server's socket.
func (m *MariaDB) SQL(ctx context.Context, sql string) error {
	out, err := exec.CommandContext(ctx, m.client, "--no-defaults", "--socket="+m.socket(), "-uroot", "-e", sql).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mariadb -e %q: %v: %s", sql, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// CreateDatabase creates an empty utf8mb4 database and returns its DSN in
// the form the reference apps take (mysql://user:pass@host:port/db).
func (m *MariaDB) CreateDatabase(ctx context.Context, name string) (string, error) {
	if err := m.SQL(ctx, fmt.Sprintf("CREATE DATABASE `%s` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", name)); err != nil {
		return "", err
	}
	return fmt.Sprintf("mysql://tunecon:tunecon@127.0.0.1:%d/%s", m.Port, name), nil
}

// Stop stops the server.
func (m *MariaDB) Stop() { m.proc.stop() }

// Postgres is a private PostgreSQL server on 127.0.0.1 with a superuser
// tunecon that connects without a password (trust, on loopback only).
type Postgres struct {
	Port int
	proc *process
}

// StartPostgres initializes a data directory under dir and starts the
// server, tuned for tests: no fsync, no synchronous commit, no full-page
// writes (a crash may lose its data, which nobody keeps). As root it runs as
// nobody, PostgreSQL refusing to run as root: dir becomes nobody's, and its
// parents must let nobody through (a directory os.MkdirTemp makes in /tmp
// does; one under t.TempDir does not).
func StartPostgres(ctx context.Context, dir string, log io.Writer) (*Postgres, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cred, err := postgresCredential(dir)
	if err != nil {
		return nil, err
	}
	// as runs a program of PostgreSQL's as its user, in dir: the server
	// and initdb look at their working directory.
	as := func(cmd *exec.Cmd) *exec.Cmd {
		cmd.Dir = dir
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		return cmd
	}
	data := filepath.Join(dir, "data")
	cmd := as(exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "--pgdata="+data, "--username=tunecon",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("initdb: %w", err)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	// The socket's path has room for about 100 bytes; tests connect over
	// TCP, so a deep dir goes without one.
	sockets := dir
	if len(dir) > 80 {
		sockets = ""
	}
	p := &Postgres{Port: port}
	args := []string{"-D", data, "-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=" + sockets, "-c", "max_connections=300",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"}
	if p.proc, err = start(as(exec.Command(filepath.Join(bin, "postgres"), args...)), log); err != nil {
		return nil, err
	}
	if err := p.ready(ctx, 60*time.Second); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// postgresBin finds the directory of PostgreSQL's server programs: Debian's
// /usr/lib/postgresql/NN/bin of the newest NN, or else initdb's on PATH.
func postgresBin() (string, error) {
	best, newest := "", -1
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	for _, p := range found {
		bin := filepath.Dir(p)
		major, _, _ := strings.Cut(filepath.Base(filepath.Dir(bin)), ".")
		if n, err := strconv.Atoi(major); err == nil && n > newest && isExec(p) && isExec(filepath.Join(bin, "initdb")) {
			best, newest = bin, n
		}
	}
	if best != "" {
		return best, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil && isExec(filepath.Join(filepath.Dir(p), "postgres")) {
		return filepath.Dir(p), nil
	}
	return "", &Missing{Package: "postgresql", Binary: "postgres"}
}

// postgresCredential is whom PostgreSQL runs as: nil (the current user),
// or for root nobody, to whom it gives dir.
func postgresCredential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("postgres: as root it runs as nobody: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("postgres: nobody's ids: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err != nil || st.Mode().Perm()&0o001 == 0 {
			return nil, fmt.Errorf("postgres: as root it runs as nobody, who cannot reach %s: %s is not open to others (use a directory os.MkdirTemp makes)", dir, d)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if err := os.Chown(abs, int(uid), int(gid)); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// ready waits until the server accepts connections: it listens a moment
// before it does.
func (p *Postgres) ready(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	if err := p.proc.waitPort(ctx, p.Port, limit); err != nil {
		return err
	}
	for {
		c, err := p.connect(ctx, "postgres")
		if err == nil {
			return c.Close(ctx)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections within %s: %w", limit, err)
		}
		select {
		case err := <-p.proc.exited:
			p.proc.exited <- err
			return fmt.Errorf("postgres exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DSN is a database's DSN, in the form the portal takes.
func (p *Postgres) DSN(name string) string {
	return fmt.Sprintf("postgres://tunecon@127.0.0.1:%d/%s?sslmode=disable", p.Port, url.PathEscape(name))
}

func (p *Postgres) connect(ctx context.Context, db string) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return pgx.Connect(ctx, p.DSN(db))
}

// CreateDatabase creates an empty database and returns its DSN
// (postgres://tunecon@127.0.0.1:PORT/NAME).
func (p *Postgres) CreateDatabase(ctx context.Context, name string) (string, error) {
	c, err := p.connect(ctx, "postgres")
	if err != nil {
		return "", err
	}
	defer c.Close(context.WithoutCancel(ctx))
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("postgres: creating database %q: %w", name, err)
	}
	return p.DSN(name), nil
}

// Stop stops the server: a fast shutdown (SIGINT), which ends the sessions
// still open instead of waiting for them.
func (p *Postgres) Stop() { p.proc.stopWith(p.proc.cmd.Process.Pid, syscall.SIGINT) }

// Nginx is a private nginx.
type Nginx struct {
	Port int
	proc *process
}

// StartNginx runs nginx with prefix dir and the given http{} block contents;
// the configuration must listen on the returned port, which the caller
// puts in place of every "{{PORT}}" in httpConf.
func StartNginx(ctx context.Context, dir, httpConf string, log io.Writer) (*Nginx, error) {
	bin, err := look("nginx", "nginx")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	conf := fmt.Sprintf(`worker_processes 1;
error_log stderr warn;
pid %[1]s/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path %[1]s/tmp/body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fastcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
%[2]s
}
`, dir, strings.ReplaceAll(httpConf, "{{PORT}}", strconv.Itoa(port)))
	if os.Geteuid() == 0 {
		conf = "user root;\n" + conf // the workers read files in the checkout, wherever it is
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	n := &Nginx{Port: port}
	if n.proc, err = start(exec.Command(bin, "-p", dir, "-c", path, "-e", "stderr", "-g", "daemon off;"), log); err != nil {
		return nil, err
	}
	if err := n.proc.waitPort(ctx, port, 10*time.Second); err != nil {
		n.proc.stop()
		return nil, err
	}
	return n, nil
}

// Stop stops nginx.
func (n *Nginx) Stop() { n.proc.stop() }

// Require turns a Missing server into a skip, or under CI (CI=true) into a
// failure: CI must have every server.
func Require(t interface {
	Helper()
	Skipf(string, ...any)
	Fatalf(string, ...any)
}, err error) {
	t.Helper()
	var m *Missing
	if errors.As(err, &m) && os.Getenv("CI") != "true" {
		t.Skipf("skipped: %v", err)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
}
