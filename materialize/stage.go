package materialize

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/internal/skillhash"
	"github.com/skillsync/skillsync/skill"
)

// stageOptions are the caller's rules for one skill.
type stageOptions struct {
	// check, when not nil, sees the skill's hash before anything of it can
	// go live, and can refuse it; live then stays as it is.
	check func(Hash) error
	// maxSize, when above zero, caps the bytes of the skill's files.
	maxSize int64
	// preserve, when not nil, is asked when the live copy is about to be
	// replaced, and only then, so an unchanged skill costs nothing more.
	// It returns where to keep the live copy (a user edited it), or ""
	// when it need not be kept.
	preserve func() (string, error)
}

// staged is the outcome of staging one skill.
type staged struct {
	// rec is the skill's record as it will be once wait succeeds.
	rec     *SkillRecord
	changed bool
	// preserved is where the live copy goes at commit, or "".
	preserved string
	build     *build
	// patch, when set, is the one file that changes (patch.go), put in
	// place under live instead of a build.
	patch *patch
	live  string
}

// wait waits for the skill's build, if any, queues its swap and
// completes its record; failed is told if the swap fails at commit. An
// error means nothing of the skill was staged: live stays as it was.
func (s *staged) wait(w *writer, failed func(error)) error {
	if s.patch != nil {
		w.patchSwap(s.live, s.patch, failed)
		return nil
	}
	if s.build == nil {
		return nil
	}
	files, err := s.build.wait(failed)
	if err != nil {
		return err
	}
	s.rec.files = files
	return nil
}

// fileError names the file of a skill that failed.
type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string { return "file " + e.path + ": " + e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

// stage compares s with the live directory and, when anything differs,
// builds the new version in staging for commit to swap in. old is what
// the last run recorded for live, or nil. The build goes on in the
// background: call wait on the result before using its record. A skill
// that cannot be staged (a path that is not safe, a file listed twice, a
// read that fails, more bytes than allowed) is an error, and nothing of it
// is staged.
func (w *writer) stage(ctx context.Context, live string, s Skill, old *SkillRecord, o stageOptions) (*staged, error) {
	if s.Fingerprint != "" && old != nil && old.Fingerprint == s.Fingerprint && !w.hashes() && (w.trusts() || statMatches(live, old)) {
		if o.check != nil {
			if err := o.check(old.Hash); err != nil {
				return nil, err
			}
		}
		w.count(Stats{Unchanged: old.fileCount()})
		return &staged{rec: old.withMeta(s.Meta)}, nil
	}
	st, err := w.newStager(ctx, live, s, old, o.maxSize)
	if err != nil {
		return nil, err
	}
	defer st.close()
	defer func() {
		// A panic (a bug in a source's reader) goes on up, to the caller
		// of stageAll, but not with a build that holds its slot: the
		// skills staged beside this one would wait for it for ever.
		if p := recover(); p != nil {
			if st.b != nil {
				st.b.abort()
			}
			st.dropPatch()
			panic(p)
		}
	}()
	res, err := st.run(o)
	if err != nil && st.b != nil {
		st.b.abort()
	}
	if err != nil {
		st.dropPatch()
	}
	return res, err
}

// stageJob is one skill of a source to stage, and what staging it gave.
type stageJob struct {
	skill Skill
	live  string
	// prev is the skill's record; compare, what its live files are
	// compared with (nil when the source's file records are lost).
	prev, compare *SkillRecord
	opts          stageOptions
	// refused is why the skill is not staged at all (its name).
	refused error
	st      *staged
	err     error
}

// stageAll stages the jobs not refused, as many at once as
// parallelStages gives when parallel, else one at a time: what a skill
// costs to stage is mostly reading its files from the source and hashing
// them, CPU that skills do not share. Each result stays in its job, so
// the caller reports them in the jobs' order. A panic in one is raised
// again on the caller's goroutine once the others have stopped, as it
// was when staging ran there (the daemon recovers a job's panic).
func (w *writer) stageAll(ctx context.Context, jobs []*stageJob, parallel bool) {
	workers := 1
	if parallel {
		workers = parallelStages()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var panicked any
	for range min(workers, len(jobs)) {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					mu.Lock()
					if panicked == nil {
						panicked = p
					}
					mu.Unlock()
					next.Store(int64(len(jobs))) // no job starts after it
				}
			}()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				if j := jobs[i]; j.refused == nil {
					j.st, j.err = w.stage(ctx, j.live, j.skill, j.compare, j.opts)
				}
			}
		})
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}

// parallelStages is how many skills are staged at once: one for each
// thread Go runs code on (GOMAXPROCS, which a container's CPU quota
// lowers), up to 4.
func parallelStages() int { return max(1, min(4, runtime.GOMAXPROCS(0))) }

// stager stages one skill, on one goroutine (stageAll runs several).
type stager struct {
	w       *writer
	ctx     context.Context
	live    string
	s       Skill
	list    []skill.File // sorted by path
	old     *SkillRecord
	maxSize int64
	hasher  *skillhash.Hasher
	read    int64  // bytes of the skill read so far
	b       *build // started at the first file to write
	// liveDir is set when live is a real directory; otherwise nothing in
	// it is compared, let alone linked: a link there leads elsewhere.
	// tree is live opened to lstat beneath it then (live.go), else nil.
	liveDir bool
	tree    *platform.StatDir
	// dryRun never writes: the first difference ends the run.
	dryRun bool
	// plan says whether the skill may be patched, and patch is the one
	// file written so far, when it is (patch.go).
	plan  patchPlan
	patch *patch
	// dirs are the folders of live found real (no link) while the skill
	// is staged, by slash path ("." for live): each costs one lstat for
	// the skill's reuse, patch and links together.
	dirs map[string]bool
}

// errDiffers ends a dry run.
var errDiffers = errors.New("differs")

func (w *writer) newStager(ctx context.Context, live string, s Skill, old *SkillRecord, maxSize int64) (*stager, error) {
	list := s.List
	if list == nil && s.Files != nil {
		list, _ = skill.ListFiles(s.Files, s.Name, 0)
	}
	if !slices.IsSortedFunc(list, func(a, b skill.File) int { return strings.Compare(a.Path, b.Path) }) {
		list = slices.SortedFunc(slices.Values(list), func(a, b skill.File) int { return strings.Compare(a.Path, b.Path) })
	}
	var total int64
	for i, f := range list {
		if err := checkFilePath(f.Path); err != nil {
			return nil, err
		}
		if i > 0 && list[i-1].Path == f.Path {
			return nil, &fileError{f.Path, errors.New("listed twice")}
		}
		total += f.Size
	}
	if err := w.rules.checkFiles(list); err != nil {
		return nil, err
	}
	if maxSize > 0 && total > maxSize {
		return nil, fmt.Errorf("the skill's files are %d bytes, over the limit of %d", total, maxSize)
	}
	st := &stager{w: w, ctx: ctx, live: live, s: s, list: list, old: old, maxSize: maxSize, hasher: skillhash.New(), dirs: map[string]bool{}}
	if tree, err := platform.OpenStatDir(live); err == nil {
		st.tree, st.liveDir = tree, true
		st.dirs["."] = true
	}
	st.plan = planPatch(list, old, st.liveDir)
	return st, nil
}

// sameFile is a file whose live copy already is as wanted.
type sameFile struct {
	path string
	rec  FileRecord
}

func (st *stager) run(o stageOptions) (*staged, error) {
	var same []sameFile
	for _, f := range st.list {
		if err := st.ctx.Err(); err != nil {
			return nil, err
		}
		if st.b != nil && st.b.failed() {
			return nil, st.b.err
		}
		sf, ok, err := st.file(f)
		if err != nil {
			var fe *fileError
			if !errors.Is(err, errDiffers) && !errors.As(err, &fe) {
				err = &fileError{f.Path, err}
			}
			return nil, err
		}
		if ok {
			same = append(same, sf)
		}
	}
	hash := st.hasher.Sum()
	if o.check != nil {
		if err := o.check(hash); err != nil {
			return nil, err
		}
	}
	rec := newSkillRecord(hash, st.s.Fingerprint, st.s.Meta, make(map[string]FileRecord, len(st.list)))
	for _, sf := range same {
		rec.files[sf.path] = sf.rec
	}
	changed := st.b != nil || st.patch != nil || !st.liveDir
	if !changed && (st.old == nil || st.old.fileCount() != len(st.list) || !st.w.trusts() || st.dryRun) {
		// Every wanted file is in place; a file that should be gone may not
		// be: one the record does not know, or one a patch added before
		// its sync stopped.
		changed = len(st.w.rules.extraFiles(st.live, rec.files)) > 0
	}
	if !changed {
		st.w.count(Stats{Unchanged: len(st.list)})
		return &staged{rec: rec}, nil
	}
	if st.dryRun {
		return nil, errDiffers
	}
	res := &staged{rec: rec, changed: true}
	if o.preserve != nil {
		aside, err := o.preserve()
		if err != nil {
			return nil, fmt.Errorf("keep the edited copy: %w", err)
		}
		res.preserved = aside
	}
	if res.preserved == "" {
		if st.patch != nil {
			rec.files[st.patch.path] = st.patch.rec
		}
		if p := st.finishPatch(rec.files); p != nil {
			st.patch = nil
			res.patch, res.live = p, st.live
			st.w.count(Stats{Unchanged: len(same)})
			return res, nil
		}
	}
	// The skill is built whole, the one file written so far with it.
	st.unpatch()
	b := st.build()
	b.aside = res.preserved
	for _, sf := range same {
		// An edited copy is kept whole, so nothing of it is linked into the
		// new version: the two would share inodes, and an edit of one
		// would change the other.
		if res.preserved == "" && st.linkable(sf.path) {
			b.send(op{kind: opLink, path: sf.path, rec: sf.rec})
			continue
		}
		if err := st.rewrite(sf.path, sf.rec.SHA256); err != nil {
			return nil, &fileError{sf.path, err}
		}
	}
	b.finish()
	st.b = nil
	res.build = b
	return res, nil
}

// build returns the skill's build, starting it at the first file to write.
func (st *stager) build() *build {
	if st.b == nil {
		st.b = st.w.startBuild(st.live)
	}
	return st.b
}

// file reads one file of the skill, adding it to the skill's hash, or
// takes it from its live copy, unread, when it can (reuse). A file whose live copy has
// another size is written as it is read; one of
// the same size is only hashed, then read again to be written if it turns
// out to differ. It reports a file whose live copy already is as wanted,
// with its record.
func (st *stager) file(f skill.File) (sameFile, bool, error) {
	if sf, ok := st.reuse(f); ok {
		return sf, true, nil
	}
	src, size, err := st.open(f.Path, true)
	if err != nil {
		return sameFile{}, false, err
	}
	defer src.Close()
	livePath := filepath.Join(st.live, filepath.FromSlash(f.Path))
	// Without a live folder (a new skill, a cold sync) there is nothing
	// to compare: no lstat.
	var liveInfo fs.FileInfo
	err = fs.ErrNotExist
	if st.liveDir {
		liveInfo, err = os.Lstat(livePath)
	}
	if !st.liveDir || err != nil || !liveInfo.Mode().IsRegular() || liveInfo.Size() != size {
		if st.dryRun {
			return sameFile{}, false, errDiffers
		}
		sha, err := st.write(f, src, size, nil)
		if err == nil {
			st.hasher.Add(f.Path, size, sha)
		}
		return sameFile{}, false, err
	}
	sha, head, err := st.pump(src, size, nil)
	if err != nil {
		return sameFile{}, false, err
	}
	st.hasher.Add(f.Path, size, sha)
	mode := fileMode(f.Mode, head, st.s.GuessModes)
	var prev *FileRecord
	if st.old != nil {
		if r, ok := st.old.Files()[f.Path]; ok {
			prev = &r
		}
	}
	info, liveSHA := st.w.liveHash(livePath, liveInfo, prev)
	if info != nil && liveSHA == sha && st.w.rules.permMatches(info.Mode(), mode) {
		return sameFile{f.Path, FileRecord{SHA256: sha, Size: info.Size(), Mode: modeString(mode), MTime: info.ModTime().UnixNano()}}, true, nil
	}
	if st.dryRun {
		return sameFile{}, false, errDiffers
	}
	return sameFile{}, false, st.rewrite(f.Path, sha)
}

// rewrite reads a file again to write it, after a first read found that
// its live copy will not do. The content must hash as it did the first
// time.
func (st *stager) rewrite(path string, want Hash) error {
	i, _ := slices.BinarySearchFunc(st.list, path, func(f skill.File, p string) int { return strings.Compare(f.Path, p) })
	f := st.list[i]
	src, size, err := st.open(path, false)
	if err != nil {
		return err
	}
	defer src.Close()
	_, err = st.write(f, src, size, &want)
	return err
}

// open opens a file of the skill and returns its size; counted, the size
// goes against the skill's limit.
func (st *stager) open(path string, counted bool) (fs.File, int64, error) {
	src, err := st.s.Files.Open(path)
	if err != nil {
		return nil, 0, err
	}
	info, err := src.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%s)", info.Mode().Type())
	}
	if err == nil && counted && st.maxSize > 0 && st.read+info.Size() > st.maxSize {
		err = fmt.Errorf("the skill's files are over the limit of %d bytes", st.maxSize)
	}
	if err != nil {
		src.Close()
		return nil, 0, err
	}
	if counted {
		st.read += info.Size()
	}
	return src, info.Size(), nil
}

// write streams one file into the build. want, when not nil, is the hash
// the content must have.
func (st *stager) write(f skill.File, src io.Reader, size int64, want *Hash) (Hash, error) {
	if st.patchable(f.Path) {
		return st.writePatch(f, src, size, want)
	}
	st.unpatch()
	b := st.build()
	// A file of one chunk (most are) goes to the build in one step, sent
	// once it is hashed; a longer one streams, chunk by chunk.
	var held *[]byte
	heldN, streaming := 0, false
	sha, head, err := st.pump(src, size, func(chunk *[]byte, n int) {
		if !streaming && held == nil && size <= chunkSize {
			held, heldN = chunk, n
			return
		}
		if !streaming {
			streaming = true
			b.send(op{kind: opCreate, path: f.Path})
			if held != nil {
				b.send(op{kind: opData, path: f.Path, chunk: held, n: heldN})
				held = nil
			}
		}
		b.send(op{kind: opData, path: f.Path, chunk: chunk, n: n})
	})
	if err == nil && want != nil && sha != *want {
		err = errors.New("its content changed while it was read")
	}
	if err != nil {
		st.w.recycle(held)
		return sha, err
	}
	mode := fileMode(f.Mode, head, st.s.GuessModes)
	if !streaming {
		b.send(op{kind: opWhole, path: f.Path, chunk: held, n: heldN, mode: mode, sha: sha})
		return sha, nil
	}
	b.send(op{kind: opClose, path: f.Path, mode: mode, sha: sha})
	return sha, nil
}

// pump reads src to its end a chunk at a time, hashing each chunk and
// passing it to sink, which takes the chunk; without a sink the chunk is
// reused. It returns the content's SHA-256 and its
// first bytes. A source longer or shorter than size is an error: sizes
// are what the limits were checked against.
func (st *stager) pump(src io.Reader, size int64, sink func(chunk *[]byte, n int)) (Hash, []byte, error) {
	h := sha256.New()
	var head []byte
	var total int64
	stalls := 0
	for {
		if err := st.ctx.Err(); err != nil {
			return Hash{}, nil, err
		}
		if st.b != nil && st.b.failed() {
			return Hash{}, nil, st.b.err
		}
		chunk := st.w.chunk()
		n, err := src.Read(*chunk)
		if n > 0 {
			stalls = 0
			total += int64(n)
			if total > size {
				st.w.recycle(chunk)
				return Hash{}, nil, fmt.Errorf("it holds more than the %d bytes it declares", size)
			}
			data := (*chunk)[:n]
			h.Write(data)
			if len(head) < 2 {
				head = append(head, data[:min(2-len(head), n)]...)
			}
			if sink != nil {
				sink(chunk, n)
				chunk = nil
			}
		}
		st.w.recycle(chunk)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Hash{}, nil, err
		}
		if n == 0 {
			if stalls++; stalls > 100 {
				return Hash{}, nil, io.ErrNoProgress
			}
		}
	}
	if total != size {
		return Hash{}, nil, fmt.Errorf("it holds %d bytes, not the %d it declares", total, size)
	}
	var sum Hash
	h.Sum(sum[:0])
	return sum, head, nil
}

// matches reports whether live already holds exactly s's files with their
// modes and nothing else, and the record of it then. It writes nothing.
func (w *writer) matches(ctx context.Context, live string, s Skill, maxSize int64) (*SkillRecord, bool) {
	if info, err := os.Lstat(live); err != nil || !info.IsDir() {
		return nil, false
	}
	st, err := w.newStager(ctx, live, s, nil, maxSize)
	if err != nil {
		return nil, false
	}
	defer st.close()
	st.dryRun, st.plan = true, patchPlan{} // a dry run writes nothing, a patch neither
	res, err := st.run(stageOptions{})
	if err != nil {
		return nil, false
	}
	return res.rec, true
}
