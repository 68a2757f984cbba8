// Package pgtest starts throw-away PostgreSQL servers for tests: a cluster
// made by initdb in a temporary directory, served on a free port of
// 127.0.0.1, stopped and removed at the end.
//
// The server runs as the postgres binary itself, a child of the test
// process, rather than daemonized by pg_ctl: the kernel then stops it when
// the test binary dies (a panic, a timeout, kill -9), so no server outlives
// its tests. initdb and postgres refuse to run as root; under root they run
// as the user nobody (created when missing), with a data directory owned by
// that user.
package pgtest

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skillsync/skillsync/internal/platform"
)

// ErrNoServer is returned when the PostgreSQL server binaries are not
// installed.
var ErrNoServer = errors.New("postgresql server binaries (initdb, postgres) not found: install Debian's postgresql package or set SKILLSYNC_PG_BINDIR")

// User is the superuser of every cluster.
const User = "postgres"

// Cluster is one running (or stopped) PostgreSQL server.
type Cluster struct {
	bin      string
	base     string // temporary directory holding everything
	data     string
	logPath  string
	port     int
	password string
	cred     *credential // nil when not root

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited

	// The connections Exec and QueryValue keep between calls, and the
	// number of the server's stops so far: a connection borrowed before
	// a stop is not kept.
	idleMu sync.Mutex
	idle   []*pgx.Conn
	gen    uint64
}

// BinDir finds the directory of initdb and postgres: $SKILLSYNC_PG_BINDIR,
// then the PATH, then the newest /usr/lib/postgresql/*/bin (Debian keeps
// the server binaries out of the PATH).
func BinDir() (string, error) {
	has := func(dir string) bool {
		for _, name := range []string{"initdb", "postgres"} {
			if info, err := os.Stat(filepath.Join(dir, name)); err != nil || info.IsDir() {
				return false
			}
		}
		return true
	}
	if dir := os.Getenv("SKILLSYNC_PG_BINDIR"); dir != "" {
		if has(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("SKILLSYNC_PG_BINDIR=%s: %w", dir, ErrNoServer)
	}
	if p, err := exec.LookPath("initdb"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, dir := range dirs {
		if has(dir) {
			return dir, nil
		}
	}
	return "", ErrNoServer
}

// version is the major version in /usr/lib/postgresql/<version>/bin.
func version(bindir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bindir)))
	return n
}

// starting lets one cluster of the process start at a time (initdb and
// the wait for the first connection): several at once time out on a busy
// machine. A test that starts a cluster of its own can then run in
// parallel with the others.
var starting sync.Mutex

// Start creates a cluster and starts its server. The superuser is User,
// with a random password that only TCP connections on 127.0.0.1 accept.
func Start(ctx context.Context) (*Cluster, error) {
	starting.Lock()
	defer starting.Unlock()
	return create(ctx)
}

// create is Start with starting held.
func create(ctx context.Context) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	base, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, base: base, data: filepath.Join(base, "data"), logPath: filepath.Join(base, "server.log")}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(base)
		}
	}()
	// The server's user must reach its data directory.
	if err := os.Chmod(base, 0o755); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		if c.cred, err = serverUser(); err != nil {
			return nil, err
		}
	}
	secret := make([]byte, 12)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	password := "pw-" + hex.EncodeToString(secret)
	if err := c.fromTemplate(ctx, password); err != nil {
		// The template may be damaged (a cleaner of temporary files
		// took part of it): make the cluster as before, with initdb.
		if err := os.RemoveAll(c.data); err != nil {
			return nil, err
		}
		c.password = password
		if err := c.initdb(ctx); err != nil {
			return nil, err
		}
		c.mu.Lock()
		conn, err := c.resume(ctx)
		c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		conn.Close(ctx)
	}
	ok = true
	return c, nil
}

// fromTemplate makes the cluster's data directory a copy of the
// template's (see template), starts the server, and gives the superuser
// password, as initdb would have. It removes a template that does not
// start, so the next cluster makes a new one.
func (c *Cluster) fromTemplate(ctx context.Context, password string) error {
	dir, templatePassword, err := c.template(ctx)
	if err != nil {
		return err
	}
	if err := copyTree(filepath.Join(dir, "data"), c.data, c.cred); err != nil {
		os.RemoveAll(dir)
		return err
	}
	c.password = templatePassword
	c.mu.Lock()
	conn, err := c.resume(ctx)
	c.mu.Unlock()
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	// The connection that found the server ready sets the password: a
	// connection is a backend process, about 50 ms of CPU on the
	// project's machine.
	defer conn.Close(ctx)
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		c.Stop()
		return err
	}
	verifier, err := scramVerifier(password, salt, scramIterations)
	if err != nil {
		c.Stop()
		return err
	}
	// The verifier is base64 and hexadecimal: nothing in it needs
	// quoting.
	_, err = conn.Exec(ctx, "ALTER ROLE "+pgx.Identifier{User}.Sanitize()+" PASSWORD '"+verifier+"'")
	if err != nil {
		c.Stop()
		return fmt.Errorf("set the password of the cluster made from %s: %w", dir, err)
	}
	c.password = password
	return nil
}

// scramIterations is the PBKDF2 iteration count of the superuser's SCRAM
// verifier (PostgreSQL's own is 4096). The client computes the salted
// password that many times for every connection: a race-built test binary
// spent about 13 ms of CPU on each, and the suite opens hundreds of
// connections (the tests' own and the code's under test, in-process and
// in child processes). The cluster lives for one test binary and its
// password is random: nothing here guards it against a brute force. The
// connections still authenticate with SCRAM-SHA-256 and a wrong password
// is still refused (TestStopResume).
const scramIterations = 1

// scramVerifier returns the SCRAM-SHA-256 verifier of password, as
// PostgreSQL stores it (RFC 5802, RFC 7677): ALTER ROLE takes it as the
// password and keeps it as it is.
func scramVerifier(password string, salt []byte, iterations int) (string, error) {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", fmt.Errorf("scram verifier: %w", err)
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac(salted, "Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(stored[:]), b64(mac(salted, "Server Key"))), nil
}

// templateVersion changes whenever initdb's arguments or the template's
// layout do, so that a template made by older code is not used.
const templateVersion = "2"

// template returns a data directory made by initdb, and its superuser's
// password, that a new cluster copies instead of running initdb: initdb
// costs about a second of CPU (and of wall clock, one cluster starting at
// a time), a copy a twentieth of that, and the suite starts over a dozen
// clusters in six test binaries. The template lives in the temporary
// folder, named for the server binaries it was made with and the user
// owning it, so the test binaries of one run, and the next runs, share
// it. It is made in a folder of its own and renamed into place whole:
// where the name exists, the template is complete.
func (c *Cluster) template(ctx context.Context) (dir, password string, err error) {
	// Where another user can write the temporary folder, a template
	// planted there could set an archive_command the server would run.
	if !platform.PrivateDir(os.TempDir()) {
		return "", "", fmt.Errorf("the temporary folder %s is open to other users: no cluster template is kept there", os.TempDir())
	}
	if dir, err = c.templatePath(); err != nil {
		return "", "", err
	}
	if pw, err := os.ReadFile(filepath.Join(dir, "password")); err == nil {
		return dir, strings.TrimSpace(string(pw)), nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "skillsync-pgtest-template-new-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp) // nothing left after the rename
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", "", err
	}
	secret := make([]byte, 12)
	if _, err := rand.Read(secret); err != nil {
		return "", "", err
	}
	t := &Cluster{bin: c.bin, base: tmp, data: filepath.Join(tmp, "data"), cred: c.cred, password: "pw-" + hex.EncodeToString(secret)}
	if err := t.initdb(ctx); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "password"), []byte(t.password+"\n"), 0o600); err != nil {
		return "", "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another test binary renamed its template into place first.
		if pw, err := os.ReadFile(filepath.Join(dir, "password")); err == nil {
			return dir, strings.TrimSpace(string(pw)), nil
		}
		return "", "", fmt.Errorf("keep the cluster template: %w", err)
	}
	return dir, t.password, nil
}

// templatePath is where the template for c's server binaries and
// owner is kept.
func (c *Cluster) templatePath() (string, error) {
	info, err := os.Stat(filepath.Join(c.bin, "initdb"))
	if err != nil {
		return "", err
	}
	owner := os.Geteuid()
	if c.cred != nil {
		owner = int(c.cred.uid)
	}
	key := fnv.New64a()
	fmt.Fprintf(key, "%s\n%s\n%d\n%d\n%d\n%d", templateVersion, c.bin, info.Size(), info.ModTime().UnixNano(), os.Geteuid(), owner)
	return filepath.Join(os.TempDir(), fmt.Sprintf("skillsync-pgtest-template-%016x", key.Sum64())), nil
}

// copyTree copies the data directory src to dst, which must not exist,
// with the same permissions (the server refuses a data directory others
// may read), owned by cred when it is set.
func copyTree(src, dst string, cred *credential) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(target, info.Mode().Perm()); err != nil {
				return err
			}
			// Mkdir's mode is under the umask; the server checks it.
			if err := os.Chmod(target, info.Mode().Perm()); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if err := copyFile(p, target, info.Mode().Perm()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("copy the cluster template: %s is neither a file nor a folder", p)
		}
		if cred != nil {
			return os.Lchown(target, int(cred.uid), int(cred.gid))
		}
		return nil
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	err = errors.Join(err, out.Chmod(perm), out.Close())
	return err
}

// serverUser returns the credentials of nobody, creating a system user
// when the machine has no nobody.
func serverUser() (*credential, error) {
	u, err := user.Lookup("nobody")
	if err != nil {
		const name = "skillsync-pgtest"
		if u, err = user.Lookup(name); err != nil {
			out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
			if err != nil {
				return nil, fmt.Errorf("useradd %s: %v: %s", name, err, out)
			}
			if u, err = user.Lookup(name); err != nil {
				return nil, err
			}
		}
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &credential{uid: uint32(uid), gid: uint32(gid)}, nil
}

// credential is the user the server runs as.
type credential struct{ uid, gid uint32 }

// procAttr sets cmd to run as the server's user and, where the system
// can, to get dieWith when the test process dies.
func (c *Cluster) procAttr(cmd *exec.Cmd, dieWith syscall.Signal) {
	if c.cred != nil {
		platform.SetProcAttr(cmd, true, c.cred.uid, c.cred.gid, dieWith)
		return
	}
	platform.SetProcAttr(cmd, false, 0, 0, dieWith)
}

// command runs a server binary as the server's user, in a clean
// environment so that the caller's PG* variables change nothing.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.base
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC", "HOME=" + c.base}
	c.procAttr(cmd, 0)
	return cmd
}

func (c *Cluster) initdb(ctx context.Context) error {
	pwfile := filepath.Join(c.base, "pwfile")
	if err := os.WriteFile(pwfile, []byte(c.password+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	if err := os.Mkdir(c.data, 0o700); err != nil {
		return err
	}
	if c.cred != nil {
		for _, p := range []string{pwfile, c.data} {
			if err := os.Chown(p, int(c.cred.uid), int(c.cred.gid)); err != nil {
				return err
			}
		}
	}
	// One-megabyte WAL segments, not sixteen: the template holds its
	// current segment whole, and every cluster copies the template (28 MB
	// with them, 39 MB with the default).
	cmd := c.command("initdb", "-D", c.data, "-U", User, "--pwfile", pwfile,
		"--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--locale=C", "--no-sync", "--wal-segsize=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	return ctx.Err()
}

// Resume starts the server again after Stop or Kill, on the same port when
// it is still free. Start has already called it once.
func (c *Cluster) Resume(ctx context.Context) error {
	starting.Lock()
	defer starting.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	conn, err := c.resume(ctx)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// resume starts the server and returns the superuser's connection to
// the postgres database that found it ready, for the caller to use or
// close.
func (c *Cluster) resume(ctx context.Context) (*pgx.Conn, error) {
	if c.cmd != nil {
		return nil, errors.New("pgtest: the server is running")
	}
	var last error
	for attempt := 0; attempt < 5; attempt++ {
		if c.port == 0 || attempt > 0 {
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			c.port = port
		}
		conn, err := c.start(ctx)
		if err == nil {
			return conn, nil
		}
		last = err
	}
	return nil, last
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs postgres on c.port, waits until it accepts connections and
// returns the first connection it accepted.
func (c *Cluster) start(ctx context.Context) (*pgx.Conn, error) {
	logf, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := c.command("postgres", "-D", c.data, "-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=100", "-c", "shared_buffers=16MB")
	cmd.Stdout, cmd.Stderr = logf, logf
	// Fast shutdown when the test process dies, whatever the cause (on
	// Linux; elsewhere the kernel cannot be asked to).
	c.procAttr(cmd, syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	c.cmd, c.done = cmd, done

	// The server says in its postmaster.pid when it accepts connections
	// (PostgreSQL 10 and later): the file is read until then, and
	// connections are tried only once it says so, or when it cannot be
	// read. A connection tried earlier is a backend process started to
	// refuse it ("the database system is starting up").
	deadline := time.Now().Add(60 * time.Second)
	err = errors.New("the server has not said it is ready")
	for {
		status := c.pidStatus(cmd.Process.Pid)
		if status == "" || status == "ready" {
			var conn *pgx.Conn
			if conn, err = pgx.Connect(ctx, c.DSN("postgres")); err == nil {
				return conn, nil
			}
		}
		wait := 10 * time.Millisecond
		if status == "" {
			wait = 50 * time.Millisecond
		}
		select {
		case <-done:
			c.cmd, c.done = nil, nil
			return nil, fmt.Errorf("postgres exited on start:\n%s", c.logTail())
		case <-ctx.Done():
			c.stop(syscall.SIGQUIT)
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		if time.Now().After(deadline) {
			c.stop(syscall.SIGQUIT)
			return nil, fmt.Errorf("postgres did not accept connections within a minute: %v\n%s", err, c.logTail())
		}
	}
}

// pidStatus returns the status the server with process id pid writes on
// the eighth line of its postmaster.pid ("starting", "ready", ...): "wait"
// while the file is missing or another process's, and "" when it cannot
// be read or does not have the line (then the caller tries to connect).
func (c *Cluster) pidStatus(pid int) string {
	data, err := os.ReadFile(filepath.Join(c.data, "postmaster.pid"))
	if errors.Is(err, fs.ErrNotExist) {
		return "wait"
	}
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) < 8 {
		// Written in two steps: the status line comes last.
		if len(lines) > 0 && strings.TrimSpace(lines[0]) == strconv.Itoa(pid) {
			return "wait"
		}
		return ""
	}
	if strings.TrimSpace(lines[0]) != strconv.Itoa(pid) {
		return "wait"
	}
	return strings.TrimSpace(lines[7])
}

// logTail returns the end of the server's log, for failure messages.
func (c *Cluster) logTail() string {
	data, _ := os.ReadFile(c.logPath)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// Port returns the TCP port the server listens on.
func (c *Cluster) Port() int { return c.port }

// Password returns the superuser's password.
func (c *Cluster) Password() string { return c.password }

// DSN returns a URL that connects to database as the superuser.
func (c *Cluster) DSN(database string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", User, c.password, c.port, database)
}

// Stop shuts the server down, ending every session (a fast shutdown), and
// waits for it to exit. Resume starts it again with its data.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop(syscall.SIGINT)
}

// Kill stops the server at once, as a crash would (an immediate shutdown;
// the next start recovers).
func (c *Cluster) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stop(syscall.SIGQUIT)
}

func (c *Cluster) stop(sig syscall.Signal) error {
	c.dropIdle()
	if c.cmd == nil {
		return nil
	}
	defer func() { c.cmd, c.done = nil, nil }()
	_ = c.cmd.Process.Signal(sig)
	select {
	case <-c.done:
		return nil
	case <-time.After(30 * time.Second):
	}
	_ = c.cmd.Process.Kill()
	<-c.done
	return errors.New("pgtest: postgres did not stop within 30s and was killed")
}

// Remove stops the server and deletes the cluster's directory.
func (c *Cluster) Remove() error {
	err := c.Stop()
	return errors.Join(err, os.RemoveAll(c.base))
}

// CreateDatabase creates a database named name.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}

// Shared is a cluster started on first use and shared by the tests of one
// test binary, so a package whose tests do not need a server never starts
// one. Close it from TestMain after m.Run.
type Shared struct {
	once    sync.Once
	cluster *Cluster
	err     error
}

// Get returns the running cluster, starting it on the first call. It skips
// the test when the server binaries are not installed and fails it on any
// other error.
func (s *Shared) Get(t testing.TB) *Cluster {
	t.Helper()
	s.once.Do(func() { s.cluster, s.err = startForTests() })
	mustStart(t, s.err)
	return s.cluster
}

// Own starts a cluster for the test alone, one it may stop, kill or
// resume without disturbing the tests that share a Shared cluster, and
// removes it when the test ends. Like Get, it skips the test when the
// server binaries are not installed.
func Own(t testing.TB) *Cluster {
	t.Helper()
	c, err := startForTests()
	mustStart(t, err)
	t.Cleanup(func() { c.Remove() })
	return c
}

// startForTests starts a cluster within the time a test may wait for one.
// The time it waits for the other clusters of the process to start is
// not counted.
func startForTests() (*Cluster, error) {
	starting.Lock()
	defer starting.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return create(ctx)
}

// mustStart skips the test when err says the server binaries are missing
// and fails it on any other error.
func mustStart(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNoServer) {
		t.Skip(err.Error())
	}
	if err != nil {
		t.Fatalf("start a postgres cluster: %v", err)
	}
}

// Close removes the cluster if one was started.
func (s *Shared) Close() error {
	if s.cluster == nil {
		return nil
	}
	return s.cluster.Remove()
}

// Name turns a test name into a lower-case identifier usable as a schema or
// database name, unique within the test binary when the test names are.
func Name(t testing.TB) string {
	var b strings.Builder
	b.WriteString("t_")
	for _, r := range strings.ToLower(t.Name()) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 63 {
		s = s[:50] + "_" + shortHash(s)
	}
	return s
}

func shortHash(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}
