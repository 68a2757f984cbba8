package gittest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/skilltest"
)

// SSHServer is an OpenSSH sshd on 127.0.0.1 that accepts one client key.
type SSHServer struct {
	Port           int
	User           string
	ClientKey      string // private key file the server accepts
	KnownHostsFile string // names the server's host key for [127.0.0.1]:Port
}

// URL returns the ssh:// URL of the repository at dir.
func (s *SSHServer) URL(dir string) string {
	return fmt.Sprintf("ssh://%s@127.0.0.1:%d%s", s.User, s.Port, dir)
}

// StartSSH starts sshd for the test. It skips the test, saying why, where
// sshd cannot be had.
func StartSSH(t testing.TB) *SSHServer {
	t.Helper()
	sshd := "/usr/sbin/sshd"
	if _, err := os.Stat(sshd); err != nil {
		t.Skip("sshd is not installed (apt-get install openssh-server); skipping the SSH transport test")
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed; skipping the SSH transport test")
	}
	me, err := user.Current()
	if err != nil {
		t.Skipf("current user: %v", err)
	}
	dir := t.TempDir()
	keygen := func(name string) {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, name)).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	keygen("host")
	keygen("client")
	clientPub, err := os.ReadFile(filepath.Join(dir, "client.pub"))
	if err != nil {
		t.Fatal(err)
	}
	skilltest.WriteFileMode(t, filepath.Join(dir, "authorized_keys"), string(clientPub), 0o600)
	port := freePort(t)
	hostPub, err := os.ReadFile(filepath.Join(dir, "host.pub"))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(hostPub))
	known := fmt.Sprintf("[127.0.0.1]:%d %s %s\n", port, fields[0], fields[1])
	skilltest.WriteFile(t, filepath.Join(dir, "known_hosts"), known)
	config := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PidFile %s
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
AllowUsers %s
SetEnv PATH=%s SHLVL=1
`, port, filepath.Join(dir, "host"), filepath.Join(dir, "authorized_keys"), filepath.Join(dir, "sshd.pid"), me.Username, os.Getenv("PATH"))
	// sshd runs each session's command with the user's login shell, and
	// bash, seeing SSH_CLIENT, reads the user's ~/.bashrc first when it
	// is the top-level shell (SHLVL 1 once it counts itself). That file
	// is the machine's, not the test's: on the project's machine it
	// starts pyenv, about ten processes for each git command over SSH.
	// SHLVL=1 makes the session's bash the second level, which skips it;
	// only the first SetEnv line counts, so both names are on it. PATH
	// still finds git's programs.
	skilltest.WriteFile(t, filepath.Join(dir, "sshd_config"), config)
	// Privilege separation wants this directory when sshd runs as root.
	_ = os.MkdirAll("/run/sshd", 0o755)

	var logs bytes.Buffer
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Skipf("start sshd: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("sshd log:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Skipf("sshd did not start listening: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &SSHServer{Port: port, User: me.Username, ClientKey: filepath.Join(dir, "client"), KnownHostsFile: filepath.Join(dir, "known_hosts")}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
