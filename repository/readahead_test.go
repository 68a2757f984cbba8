package repository_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/gittest"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/git"
	"github.com/skillsync/skillsync/skill"
)

// serialFS is a DirFS that does not say it may be read from several
// goroutines: the field hides the method, so discovery walks alone.
type serialFS struct {
	*repository.DirFS
	ConcurrentReads struct{}
}

// readAheadCorpus is a source with what discovery must get right in
// order: skills in categories, broken ones, a deep one, nested files.
func readAheadCorpus(t *testing.T) *repository.DirFS {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 8 {
		name := fmt.Sprintf("s%02d", i)
		at := "skills/" + name
		if i%4 == 3 {
			at = "skills/cat/" + name
		}
		files[at+"/SKILL.md"] = skilltest.SkillMD(name, "Skill "+name+".")
		files[at+"/references/a.md"] = "a"
		files[at+"/references/deeper/b.md"] = "b"
		files[at+"/scripts/run.sh"] = "#!/bin/sh\n"
	}
	files["skills/broken/SKILL.md"] = "---\nname: [broken\n---\n"
	files["skills/misnamed/SKILL.md"] = skilltest.SkillMD("other-name", "Named for another folder.")
	files["skills/a/b/c/d/deep/SKILL.md"] = skilltest.SkillMD("deep", "Too deep.")
	skilltest.Write(t, dir, files)
	fsys, err := repository.NewDirFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

// What discovery finds, reports and charges does not depend on reading
// ahead: at every budget, from one that stops at the root to one that
// holds the whole source, both give the same skills, listings and
// problems, in the same order.
func TestReadAheadFindsWhatAWalkFinds(t *testing.T) {
	t.Parallel()
	fsys := readAheadCorpus(t)
	sweepBudgets(t, fsys, serialFS{DirFS: fsys}, repository.Options{})
}

// sweepBudgets scans ahead (which reads ahead) and alone (which walks
// alone) under opts at every budget, from one entry to one that holds
// the whole source, and fails where they differ in error, problems or
// skills.
func sweepBudgets(t *testing.T, ahead, alone fs.FS, opts repository.Options) {
	t.Helper()
	ctx := context.Background()
	for limit, spent := 1, true; spent; limit++ {
		opts.MaxEntries = limit
		found, problems, err := repository.Scan(ctx, ahead, "src", "root", opts)
		walked, walkedProblems, walkedErr := repository.Scan(ctx, alone, "src", "root", opts)
		if fmt.Sprint(err) != fmt.Sprint(walkedErr) {
			t.Fatalf("%+v: error %v, walking alone %v", opts, err, walkedErr)
		}
		if !reflect.DeepEqual(problems, walkedProblems) {
			t.Errorf("strict %v include %v exclude %v known %v max_entries %d: problems\n%v\nwalking alone\n%v", opts.Strict, opts.Include, opts.Exclude, opts.Known != nil, limit, problems, walkedProblems)
		}
		if got, want := foundSummary(found), foundSummary(walked); !reflect.DeepEqual(got, want) {
			t.Errorf("max_entries %d: found\n%v\nwalking alone\n%v", limit, got, want)
		}
		spent = slices.ContainsFunc(walkedProblems, func(p skill.Problem) bool { return p.Rule == "source-too-many-entries" })
		for _, f := range walked {
			spent = spent || slices.ContainsFunc(f.Problems, func(p skill.Problem) bool { return p.Rule == "source-too-many-entries" })
		}
		if limit > 5000 {
			t.Fatal("the budget never holds the whole source")
		}
	}
}

// foundSummary is what a Found says, without its FS.
func foundSummary(found []repository.Found) []string {
	var out []string
	for _, f := range found {
		out = append(out, fmt.Sprintf("%s %s %q %v %v", f.Skill.Path, f.Skill.Name, f.Skill.Description, f.Skill.Listing, f.Problems))
	}
	return out
}

// gateFS holds the first SKILL.md opened until a second skill's is
// opened too, or a timeout passes: only skills read side by side get
// through at once.
type gateFS struct {
	*repository.DirFS
	at   string
	gate *openGate
}

type openGate struct {
	mu     sync.Mutex
	first  string
	second chan struct{}
}

func (g gateFS) Open(name string) (fs.File, error) {
	if path.Base(name) == "SKILL.md" {
		g.gate.arrive(path.Join(g.at, name))
	}
	return g.DirFS.Open(name)
}

func (g gateFS) Sub(dir string) (fs.FS, error) {
	sub, err := g.DirFS.Sub(dir)
	if err != nil {
		return nil, err
	}
	return gateFS{DirFS: sub.(*repository.DirFS), at: path.Join(g.at, dir), gate: g.gate}, nil
}

func (o *openGate) arrive(file string) {
	o.mu.Lock()
	switch {
	case o.first == "":
		o.first = file
		o.mu.Unlock()
		select {
		case <-o.second:
		case <-time.After(5 * time.Second):
		}
		return
	case o.first != file:
		select {
		case <-o.second:
		default:
			close(o.second)
		}
	}
	o.mu.Unlock()
}

// Skills are read ahead of the walk side by side: the first SKILL.md
// opened is held until another skill's is opened, which a walk alone
// never does.
func TestReadAheadReadsSkillsSideBySide(t *testing.T) {
	t.Parallel()
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("reads ahead one skill at a time with GOMAXPROCS=1")
	}
	dir := t.TempDir()
	for _, name := range []string{"alpha", "beta", "gamma"} {
		skilltest.WriteFile(t, filepath.Join(dir, "skills", name, "SKILL.md"), skilltest.SkillMD(name, "Skill "+name+"."))
	}
	fsys, err := repository.NewDirFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	gate := &openGate{second: make(chan struct{})}
	start := time.Now()
	skills, problems, err := repository.Discover(context.Background(), gateFS{DirFS: fsys, at: ".", gate: gate}, "src", "root", repository.Options{})
	if err != nil || len(problems) > 0 || len(skills) != 3 {
		t.Fatalf("discover: %d skills, %v %v", len(skills), problems, err)
	}
	if waited := time.Since(start); waited > 4*time.Second {
		t.Errorf("the first SKILL.md waited %v: no second skill was read beside it", waited)
	}
	if _, ok := any(gateFS{}).(repository.ConcurrentFS); !ok {
		t.Fatal("gateFS is no ConcurrentFS")
	}
}

// readersFS notes which goroutines open a SKILL.md.
type readersFS struct {
	*repository.DirFS
	mu  *sync.Mutex
	ids map[string]int
}

func (r readersFS) Open(name string) (fs.File, error) {
	if path.Base(name) == "SKILL.md" {
		buf := make([]byte, 64)
		buf = buf[:runtime.Stack(buf, false)]
		id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
		r.mu.Lock()
		r.ids[id]++
		r.mu.Unlock()
	}
	return r.DirFS.Open(name)
}

func (r readersFS) Sub(dir string) (fs.FS, error) {
	sub, err := r.DirFS.Sub(dir)
	if err != nil {
		return nil, err
	}
	return readersFS{DirFS: sub.(*repository.DirFS), mu: r.mu, ids: r.ids}, nil
}

// The skills read ahead are read by a few goroutines, each reading one
// after another, not by a goroutine of their own each: a new goroutine
// grows its stack again for every skill (7% of the CPU of a 1% sync's
// discovery of 2,000 skills).
func TestReadAheadReadsOnAFewGoroutines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{}
	const skills = 60
	for i := range skills {
		name := fmt.Sprintf("s%02d", i)
		files["skills/"+name+"/SKILL.md"] = skilltest.SkillMD(name, "Skill "+name+".")
		files["skills/"+name+"/references/a.md"] = "a"
	}
	skilltest.Write(t, dir, files)
	fsys, err := repository.NewDirFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	readers := readersFS{DirFS: fsys, mu: new(sync.Mutex), ids: map[string]int{}}
	found, problems, err := repository.Discover(context.Background(), readers, "src", "root", repository.Options{})
	if err != nil || len(problems) > 0 || len(found) != skills {
		t.Fatalf("discover: %d skills, %v %v", len(found), problems, err)
	}
	// The walk's own goroutine, and at most 4 readers.
	if len(readers.ids) > 5 {
		t.Errorf("%d goroutines read the %d skills' SKILL.md: %v", len(readers.ids), skills, readers.ids)
	}
}

// panicFS panics when one file is opened (a reader's bug, a parser's
// panic on hostile input) and counts the opens of everything else.
type panicFS struct {
	*repository.DirFS
	at, panicAt string
	opens       *atomic.Int64
}

func (p panicFS) Open(name string) (fs.File, error) {
	full := path.Join(p.at, name)
	if full == p.panicAt {
		panic("reading " + full)
	}
	p.opens.Add(1)
	return p.DirFS.Open(name)
}

func (p panicFS) Sub(dir string) (fs.FS, error) {
	sub, err := p.DirFS.Sub(dir)
	if err != nil {
		return nil, err
	}
	return panicFS{DirFS: sub.(*repository.DirFS), at: path.Join(p.at, dir), panicAt: p.panicAt, opens: p.opens}, nil
}

// A panic while a skill is read reaches Scan's caller, as when the walk
// read every skill itself (the daemon recovers a job's panic). In a
// child process: a panic on another goroutine ends the whole binary.
func TestReadAheadPanicReachesTheCaller(t *testing.T) {
	if os.Getenv("READAHEAD_PANIC_CHILD") == "1" {
		dir := t.TempDir()
		for _, name := range []string{"alpha", "beta", "gamma"} {
			skilltest.WriteFile(t, filepath.Join(dir, "skills", name, "SKILL.md"), skilltest.SkillMD(name, "Skill "+name+"."))
		}
		fsys, err := repository.NewDirFS(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { fmt.Println("RECOVERED:", recover()) }()
		_, _, _ = repository.Scan(context.Background(), panicFS{DirFS: fsys, at: ".", panicAt: "skills/gamma/SKILL.md", opens: new(atomic.Int64)}, "src", "root", repository.Options{})
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReadAheadPanicReachesTheCaller$", "-test.count=1")
	cmd.Env = append(os.Environ(), "READAHEAD_PANIC_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RECOVERED: reading skills/gamma/SKILL.md") {
		t.Errorf("the panic did not reach Scan's caller: %v\n%.2000s", err, out)
	}
}

// A walk that panics (on a folder only it reads, below MaxDepth) stops
// the reads ahead before Scan's caller gets the panic.
func TestReadAheadStopsWhenTheWalkPanics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{"skills/a/b/c/d/e/f/x.md": "x"}
	for i := range 200 {
		name := fmt.Sprintf("s%03d", i)
		files["skills/"+name+"/SKILL.md"] = skilltest.SkillMD(name, "Skill "+name+".")
		for j := range 20 {
			files[fmt.Sprintf("skills/%s/ref/%02d.md", name, j)] = "r"
		}
	}
	skilltest.Write(t, dir, files)
	fsys, err := repository.NewDirFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	var opens atomic.Int64
	func() {
		defer func() { _ = recover() }()
		_, _, _ = repository.Scan(context.Background(), panicFS{DirFS: fsys, at: ".", panicAt: "skills/a/b/c/d/e", opens: &opens}, "src", "root", repository.Options{})
		t.Fatal("no panic")
	}()
	at := opens.Load()
	time.Sleep(300 * time.Millisecond)
	if after := opens.Load(); after != at {
		t.Errorf("Scan panicked; its reads ahead went on reading: %d opens when it returned, %d 300 ms later", at, after)
	}
}

// serialTree is a TreeFS that does not say it may be read concurrently.
type serialTree struct {
	*git.TreeFS
	ConcurrentReads struct{}
}

// readAheadGitCorpus is a git source with categories, a plugin manifest
// naming a category and a skill inside skills/, .claude/skills linking
// to skills/, one git tree at two paths (within MaxDepth at one, too
// deep at the other), broken, misnamed and internal skills, nested
// files.
func readAheadGitCorpus(t *testing.T) *git.TreeFS {
	t.Helper()
	up := gittest.NewRepo(t, "main")
	up.Write(".claude-plugin/marketplace.json", `{"plugins": [{"name": "p", "source": "./", "skills": ["./skills/cat", "./skills/group/x"]}]}`, 0)
	for i := range 6 {
		name := fmt.Sprintf("s%d", i)
		at := "skills/" + name
		if i%2 == 1 {
			at = "skills/cat/" + name
		}
		up.Write(at+"/SKILL.md", skilltest.SkillMD(name, "Skill "+name+"."), 0)
		up.Write(at+"/references/a.md", "a", 0)
		up.Write(at+"/references/deeper/b.md", "b", 0)
		up.Write(at+"/scripts/run.sh", "#!/bin/sh\n", 0o755)
	}
	for _, at := range []string{"skills/group", "skills/a/b/c/group"} {
		up.Write(at+"/x/SKILL.md", skilltest.SkillMD("x", "X."), 0)
		up.Write(at+"/x/ref/one.md", "one", 0)
	}
	up.Write("skills/broken/SKILL.md", "---\nname: [broken\n---\n", 0)
	up.Write("skills/misnamed/SKILL.md", skilltest.SkillMD("other", "Other."), 0)
	up.Write("skills/hidden/SKILL.md", "---\nname: hidden\ndescription: Hidden.\nmetadata:\n  internal: \"true\"\n---\nbody\n", 0)
	up.Write("skills/warn/SKILL.md", "---\nname: warn\ndescription: Warn.\nunknown-field: 1\n---\nbody\n", 0)
	up.Symlink("../skills", ".claude/skills")
	up.Commit("corpus")
	return fetchedTree(t, up)
}

// Over a git TreeFS, with every option that changes what a skill's read
// gives, what discovery finds does not depend on reading ahead.
func TestReadAheadOnGitFindsWhatAWalkFinds(t *testing.T) {
	t.Parallel()
	fsys := readAheadGitCorpus(t)
	ctx := context.Background()
	first, _, err := repository.Scan(ctx, serialTree{TreeFS: fsys}, "src", "root", repository.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Records of half the skills, one of them at another path.
	records := map[string]record{}
	for i, f := range first {
		tree, ok := f.Skill.Files.(interface{ TreeHash() string })
		if !ok || i%2 == 0 {
			continue
		}
		meta := f.Skill.Meta()
		if i%4 == 3 {
			meta.Path = "elsewhere/" + meta.Name
		}
		records["tree:"+tree.TreeHash()] = record{meta, f.Skill.FileList()}
	}
	var asked atomic.Int64
	known := func(key string) (skill.Meta, []skill.File, bool) {
		asked.Add(1)
		r, ok := records[key]
		return r.meta, r.files, ok
	}
	for _, opts := range []repository.Options{
		{},
		{Strict: true},
		{Include: []string{"s*", "x"}},
		{Exclude: []string{"s2", "broken"}},
		{Known: known},
		{Known: known, Strict: true},
	} {
		sweepBudgets(t, fsys, serialTree{TreeFS: fsys}, opts)
	}
	if asked.Load() == 0 {
		t.Fatal("Known never asked")
	}
}
