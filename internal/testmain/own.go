package testmain

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// ownProcessEnv names, in the process OwnProcess starts, the one test
// it is for.
const ownProcessEnv = "SKILLSYNC_TEST_OWN_PROCESS"

// OwnProcess runs the calling top-level test again in a process of its
// own, the test binary run with that test alone, and reports true in
// the calling process, where the test has nothing left to do. A test
// that measures the whole process (its allocations, its heap) starts
// with
//
//	if testmain.OwnProcess(t) {
//		return
//	}
//
// and runs beside the other tests, as after t.Parallel(), while what it
// measures is its own: in the process of its own OwnProcess returns
// false and the test runs with nothing beside it. The other process's
// output is the test's log; its failure fails the test, and its skip
// skips it.
func OwnProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(ownProcessEnv) == t.Name() {
		return false
	}
	if strings.Contains(t.Name(), "/") {
		t.Fatal("OwnProcess is for top-level tests")
	}
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("the test binary: %v", err)
	}
	args := []string{"-test.run=^" + regexp.QuoteMeta(t.Name()) + "$", "-test.count=1", "-test.v"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(d).Round(time.Second).String())
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), ownProcessEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("%s in a process of its own:\n%s", t.Name(), out)
	switch {
	case err != nil:
		t.Fatalf("%s in a process of its own: %v", t.Name(), err)
	case strings.Contains(string(out), "--- SKIP: "+t.Name()+" "):
		t.Skip("skipped in its own process")
	case !strings.Contains(string(out), "--- PASS: "+t.Name()+" "):
		t.Fatalf("%s did not run in a process of its own", t.Name())
	}
	return true
}
