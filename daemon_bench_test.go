package skillsync_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/gittest"
)

// BenchmarkDaemonSync takes a daemon's path, as bench/run.sh does: a
// workspace follows the main branch of a packed bare upstream with the
// default depth-1 store, synced cold at A (tag v1); then, each
// iteration, upstream moves (to B, tag v2, with 1% of the skills changed,
// and back to A on the next one), the source is fetched, and only the
// sync after the fetch is timed. Besides ns/op it reports the CPU (user
// + system, the process's and its children's) spent in the timed syncs,
// cpu-ms/op, and its user part, user-ms/op, which a shared machine's load
// disturbs less than wall time, and the files each sync wrote, files/op.
// The timed syncs run under the profiler label step=sync: go tool pprof
// -tagfocus step=sync shows them alone in a profile that -cpuprofile took
// of the whole benchmark.
//
// The upstream is $SKILLSYNC_BENCH_CORPUS, a repository bench/corpus made
// (tags v1 and v2), as bench/run.sh leaves them in bench/out/<size>/corpus:
//
//	SKILLSYNC_BENCH_CORPUS=$PWD/bench/out/medium/corpus go test -run '^$' -bench DaemonSync -benchtime 6x -cpuprofile cpu.prof -o skillsync.test .
//	go tool pprof -tagfocus step=sync -top skillsync.test cpu.prof
//
// Without it, a repository of $SKILLSYNC_BENCH_SKILLS skills (default
// 200) of three files each is made, and v2 edits one file in 1% of them.
//
// Its folders are made where $TMPDIR says, and the tests' are in
// /dev/shm without it (internal/testmain): on tmpfs a sync's syncfs and
// its new inodes cost next to nothing, and the sync takes half what it
// takes on a disk. bench/run.sh sets TMPDIR beside its other steps; set
// it on the disk to measure what a daemon meets (TMPDIR=$PWD/bench/out).
//
// $SKILLSYNC_BENCH_GAP (a duration, "65s") is waited, untimed, before
// each fetch, as a daemon waits minutes between its rounds: on a machine
// that reclaims idle page cache, the files the sync reads back are then
// on disk again, as a daemon finds them. Six rounds of 65 s pass go
// test's default timeout: add -timeout 0.
//
// It lives in the root package's test binary, which links everything it
// needs already: a package of its own (bench/daemon, before) cost every
// go test ./... run the link of a 40 MB race-built binary that ran no
// test. go vet and go test ./... still compile it.
func BenchmarkDaemonSync(b *testing.B) {
	ctx := context.Background()
	gap := benchGap(b)
	corpus := os.Getenv("SKILLSYNC_BENCH_CORPUS")
	if corpus == "" {
		corpus = smallCorpus(b)
	}
	dir := b.TempDir()
	up := filepath.Join(dir, "up.git")
	git(b, "", "clone", "-q", "--bare", corpus, up)
	git(b, up, "config", "gc.auto", "0")
	git(b, up, "update-ref", "refs/heads/main", "v1")
	git(b, up, "symbolic-ref", "HEAD", "refs/heads/main")

	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(ws, config.FileName)
	text := "max_entries: 1000000\nrepositories:\n  - name: corpus\n    git: file://" + up + "\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	engine := func() *skillsync.Engine {
		cfg, err := config.Load(path, skillsync.Kinds())
		if err != nil {
			b.Fatal(err)
		}
		cfg.Global = ""
		// A new engine per command, as each CLI command is a process.
		return skillsync.NewEngine(cfg, skillsync.WithGitStore(filepath.Join(dir, "store")))
	}
	if r, err := engine().Sync(ctx, skillsync.SyncOptions{}); err != nil || r.Files.Written == 0 {
		b.Fatalf("cold sync: %v", err)
	}

	var user, system time.Duration
	written := 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		time.Sleep(gap)
		to := "v2"
		if i%2 == 1 {
			to = "v1"
		}
		git(b, up, "update-ref", "refs/heads/main", to)
		if _, err := engine().Fetch(ctx, nil, 1); err != nil {
			b.Fatalf("fetch %s: %v", to, err)
		}
		e := engine()
		u0, s0 := processCPU()
		b.StartTimer()
		var r *skillsync.SyncReport
		var err error
		pprof.Do(ctx, pprof.Labels("step", "sync", "to", to), func(ctx context.Context) {
			r, err = e.Sync(ctx, skillsync.SyncOptions{})
		})
		b.StopTimer()
		u1, s1 := processCPU()
		user, system = user+u1-u0, system+s1-s0
		if err != nil {
			b.Fatalf("sync to %s: %v", to, err)
		}
		if r.Files.Written == 0 || r.Files.Written > r.Files.Unchanged/10 {
			b.Fatalf("sync to %s wrote %d files and kept %d: not a 1%% change", to, r.Files.Written, r.Files.Unchanged)
		}
		written += r.Files.Written
		b.StartTimer()
	}
	if b.N > 0 && user+system > 0 {
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
		b.ReportMetric(ms(user+system), "cpu-ms/op")
		// The kernel's share (creating folders, linking files) swings most
		// with what else the machine does; user time is the steadier one.
		b.ReportMetric(ms(user), "user-ms/op")
	}
	b.ReportMetric(float64(written)/float64(max(b.N, 1)), "files/op")
}

// benchGap is $SKILLSYNC_BENCH_GAP, 0 when unset.
func benchGap(b *testing.B) time.Duration {
	v := os.Getenv("SKILLSYNC_BENCH_GAP")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		b.Fatalf("SKILLSYNC_BENCH_GAP=%q is not a duration such as 65s", v)
	}
	return d
}

// smallCorpus makes a repository of $SKILLSYNC_BENCH_SKILLS skills
// tagged v1, and v2 with one file edited in 1% of them, packed.
func smallCorpus(b *testing.B) string {
	n := 200
	if v := os.Getenv("SKILLSYNC_BENCH_SKILLS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("SKILLSYNC_BENCH_SKILLS=%q is not a count", v)
		}
	}
	r := gittest.NewRepo(b, "main")
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		r.Write("skills/"+name+"/SKILL.md", fmt.Sprintf("---\nname: %s\ndescription: \"Benchmark skill %d: deploy, review and check.\"\n---\n# %s\n", name, i, name), 0o644)
		r.Write("skills/"+name+"/references/notes.md", strings.Repeat("notes ", 100), 0o644)
		r.Write("skills/"+name+"/scripts/run.sh", "#!/bin/sh\necho "+name+"\n", 0o755)
	}
	r.Commit("v1")
	r.Git("tag", "v1")
	for i := 0; i < n; i += 100 {
		r.Write(fmt.Sprintf("skills/skill-%05d/references/notes.md", i), strings.Repeat("edited ", 100), 0o644)
	}
	r.Commit("v2")
	r.Git("tag", "v2")
	r.Git("gc", "-q")
	return r.Dir
}

func git(b *testing.B, dir string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
