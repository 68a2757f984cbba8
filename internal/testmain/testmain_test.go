package testmain

import (
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

func TestWithoutPause(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  []string
		want []string
		ok   bool
	}{
		{[]string{"A=1"}, []string{"A=1", "GORACE=atexit_sleep_ms=0"}, true},
		{[]string{"GORACE=", "B=2"}, []string{"B=2", "GORACE=atexit_sleep_ms=0"}, true},
		{[]string{"GORACE=halt_on_error=1 log_path=/tmp/r"}, []string{"GORACE=halt_on_error=1 log_path=/tmp/r atexit_sleep_ms=0"}, true},
		{[]string{"GORACE=atexit_sleep_ms=500"}, []string{"GORACE=atexit_sleep_ms=500"}, false},
		{[]string{"GORACE=halt_on_error=1 atexit_sleep_ms=0"}, []string{"GORACE=halt_on_error=1 atexit_sleep_ms=0"}, false},
	} {
		got, ok := withoutPause(c.env)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("withoutPause(%q) = %q, %v; want %q, %v", c.env, got, ok, c.want, c.ok)
		}
	}
}

// TestMainExitsWithoutPause runs this race-built binary, whose TestMain
// is Main, with no test to run and no GORACE: it exits 0 well within the
// detector's second of pause. With GORACE setting the pause, the same
// run takes the second, so the measure can tell, and the caller's
// setting is kept.
func TestMainExitsWithoutPause(t *testing.T) {
	t.Parallel()
	if !raceEnabled {
		t.Skip("not built with -race")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	// The shortest of a few runs: a busy machine slows a start, it
	// never hastens one.
	took := func(tries int, extra ...string) time.Duration {
		best := time.Duration(math.MaxInt64)
		for try := 0; try < tries && best >= time.Second; try++ {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(slices.Clone(env), extra...)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s -test.run=^$ %q: %v\n%s", exe, extra, err, out)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	if d := took(3); d >= time.Second {
		t.Errorf("a passing run took %v to exit: the detector's pause is back", d)
	}
	if d := took(1, "GORACE=atexit_sleep_ms=1000"); d < time.Second {
		t.Errorf("with GORACE=atexit_sleep_ms=1000 the run took %v: the caller's pause was dropped", d)
	}
}

func TestParallelAtLeastFour(t *testing.T) {
	t.Parallel()
	for _, arg := range os.Args[1:] {
		if strings.HasPrefix(arg, "-test.parallel") {
			t.Skip("the command line sets -parallel")
		}
	}
	want := max(minParallel, runtime.GOMAXPROCS(0))
	if got := flag.Lookup("test.parallel").Value.String(); got != strconv.Itoa(want) {
		t.Errorf("-test.parallel = %s, want %d", got, want)
	}
}

// TestEveryPackageUsesIt fails when a package of the module has tests
// and no TestMain that goes through this package: its binary would
// sleep a second at exit again.
func TestEveryPackageUsesIt(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	tests := map[string]bool{} // folder -> uses testmain
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		src := string(data)
		tests[dir] = tests[dir] || strings.Contains(src, "testmain.Main(m)") || strings.Contains(src, "testmain.Setup()") ||
			dir == filepath.Join(root, "internal", "testmain")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tests) < 10 {
		t.Fatalf("found only %d folders with tests under %s", len(tests), root)
	}
	for dir, ok := range tests {
		if !ok {
			rel, _ := filepath.Rel(root, dir)
			t.Errorf("%s has tests but no TestMain calling testmain.Main or testmain.Setup", rel)
		}
	}
}

// TestOwnProcessMeasuresAlone allocates in the parallel tests beside it;
// in a process of its own it sees none of that.
func TestOwnProcessMeasuresAlone(t *testing.T) {
	if OwnProcess(t) {
		return
	}
	if os.Getenv(ownProcessEnv) != t.Name() {
		t.Fatal("not in a process of its own")
	}
	t.Log("alone")
}

func TestOwnProcessReportsFailure(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fail string
		want string
	}{{"1", "--- FAIL: TestOwnProcessFails"}, {"0", "--- PASS: TestOwnProcessFails"}} {
		cmd := exec.Command(exe, "-test.run=^TestOwnProcessFails$", "-test.v")
		cmd.Env = append(os.Environ(), "SKILLSYNC_TESTMAIN_FAIL="+c.fail, "SKILLSYNC_TESTMAIN_OUTER=1")
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "in a process of its own") {
			t.Errorf("fail=%s: want %q in:\n%s", c.fail, c.want, out)
		}
	}
}

// TestOwnProcessFails runs only when TestOwnProcessReportsFailure starts
// it: it fails in its own process when asked to.
func TestOwnProcessFails(t *testing.T) {
	if os.Getenv("SKILLSYNC_TESTMAIN_OUTER") != "1" {
		t.Skip("run by TestOwnProcessReportsFailure")
	}
	if OwnProcess(t) {
		return
	}
	if os.Getenv("SKILLSYNC_TESTMAIN_FAIL") == "1" {
		t.Fatal("failing on purpose")
	}
}

// reportTempEnv makes TestReportTempDir print the temporary folder.
const reportTempEnv = "SKILLSYNC_TEST_REPORT_TMPDIR"

func TestReportTempDir(t *testing.T) {
	if os.Getenv(reportTempEnv) == "" {
		t.Skip("run by TestTempInRAM")
	}
	fmt.Printf("tmpdir=%s\n", os.TempDir())
}

// TestTempInRAM: a test binary started without TMPDIR keeps its
// temporary files in RAM where there is a tmpfs with room, and one
// started with TMPDIR keeps them there.
func TestTempInRAM(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mine := t.TempDir()
	for _, tc := range []struct {
		tmpdir string
		want   string
	}{
		{"", ramTemp()},
		{mine, mine},
	} {
		env := []string{reportTempEnv + "=1"}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "TMPDIR=") {
				env = append(env, kv)
			}
		}
		if tc.tmpdir != "" {
			env = append(env, "TMPDIR="+tc.tmpdir)
		}
		cmd := exec.Command(exe, "-test.run=^TestReportTempDir$", "-test.v")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		want := tc.want
		if want == "" {
			want = "/tmp"
		}
		if !strings.Contains(string(out), "tmpdir="+want+"\n") {
			t.Errorf("TMPDIR=%q: the tests' temporary folder is not %s:\n%s", tc.tmpdir, want, out)
		}
	}
}
