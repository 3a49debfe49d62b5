// Package servers starts private instances of the real servers some tests
// and tools use (MariaDB, nginx) on loopback, each in a directory of its own,
// and stops them. Nothing here touches a system-wide instance.
package servers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	return p, nil
}

// stop sends SIGTERM, and SIGKILL after 20 s.
func (p *process) stop() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
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
