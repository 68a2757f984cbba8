package materialize

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
)

// opKind is one step of a build.
type opKind uint8

const (
	opCreate opKind = iota // create path
	opData                 // append chunk[:n] to it
	opClose                // close it with mode; its content hashed to sha
	opLink                 // hard-link path from the live copy, recorded as rec
	// opWhole is a file of one chunk at most: create, chunk[:n] (none
	// when chunk is nil) and close, in one step rather than three
	// hand-offs between the stager and the build.
	opWhole
	// opAdopt moves the file src, written whole in staging as a patch
	// (patch.go), to path, recorded as rec.
	opAdopt
)

// op is one step of a build, sent by the stager.
type op struct {
	kind  opKind
	path  string
	chunk *[]byte
	n     int
	mode  fs.FileMode
	sha   Hash
	rec   FileRecord
	src   string
}

// build writes one skill's new version into staging on its own
// goroutine, from the steps its stager sends.
type build struct {
	w         *writer
	live, dir string
	ops       chan op
	done      chan struct{}
	bad       atomic.Bool // set once err is
	err       error       // read only after bad is set or done is closed
	aborted   bool        // set by the stager before it closes ops
	files     map[string]FileRecord
	stats     Stats
	aside     string
	// dirs are the folders in dir so far, by slash path.
	dirs map[string]bool
	// recycled is set when dir is a folder an earlier run left in
	// staging; unused are its folders the new version has not needed
	// (yet), removed when the build ends.
	recycled bool
	unused   map[string]bool
}

// errAborted is the error of a build its stager gave up.
var errAborted = errors.New("staging abandoned")

// startBuild starts a build for live, waiting while parallelBuilds() run.
// It builds in a folder left in staging where there is one.
func (w *writer) startBuild(live string) *build {
	w.slots <- struct{}{}
	dir := w.take()
	recycled := dir != ""
	if !recycled {
		dir = filepath.Join(w.staging, randomName())
	}
	b := &build{
		w:        w,
		live:     live,
		dir:      dir,
		recycled: recycled,
		ops:      make(chan op, queueLen),
		done:     make(chan struct{}),
		files:    map[string]FileRecord{},
		dirs:     map[string]bool{".": true},
	}
	w.builds.Add(1)
	go b.run()
	return b
}

// send queues one step.
func (b *build) send(o op) { b.ops <- o }

// failed reports whether the build has failed; the stager stops reading
// then.
func (b *build) failed() bool { return b.bad.Load() }

// finish tells the build that no step follows; abort, that its work is to
// be thrown away.
func (b *build) finish() { close(b.ops) }
func (b *build) abort() {
	b.aborted = true
	close(b.ops)
}

func (b *build) run() {
	defer func() {
		<-b.w.slots
		b.w.builds.Done()
		close(b.done)
	}()
	var f *os.File
	fail := func(path string, err error) {
		if b.err == nil {
			b.err = &fileError{path: path, err: err}
			b.bad.Store(true)
		}
		if f != nil {
			f.Close()
			f = nil
		}
	}
	if err := b.prepare(); err != nil {
		fail(".", err)
	}
	for o := range b.ops {
		if b.err != nil {
			// Drain, so the stager never blocks on a failed build.
			b.w.recycle(o.chunk)
			if o.kind == opAdopt {
				_ = b.w.dest.remove(o.src)
			}
			continue
		}
		switch o.kind {
		case opCreate:
			var err error
			if f, err = b.create(o.path); err != nil {
				fail(o.path, err)
			}
		case opWhole:
			f, err := b.create(o.path)
			if err == nil && o.chunk != nil {
				_, err = f.Write((*o.chunk)[:o.n])
			}
			b.w.recycle(o.chunk)
			if err == nil {
				err = b.close(f, o)
			} else if f != nil {
				f.Close()
			}
			if err != nil {
				fail(o.path, err)
			}
		case opData:
			_, err := f.Write((*o.chunk)[:o.n])
			b.w.recycle(o.chunk)
			if err != nil {
				fail(o.path, err)
			}
		case opClose:
			if err := b.close(f, o); err != nil {
				fail(o.path, err)
			}
			f = nil
		case opLink:
			if err := b.link(o); err != nil {
				fail(o.path, err)
			}
		case opAdopt:
			if err := b.adopt(o); err != nil {
				fail(o.path, err)
			}
		}
	}
	if f != nil {
		f.Close()
	}
	if b.err == nil && !b.aborted {
		if err := b.dropUnused(); err != nil {
			fail(".", err)
		}
	}
	if b.err == nil && b.aborted {
		b.err = errAborted
		b.bad.Store(true)
	}
	if b.err != nil {
		_ = b.w.dest.removeAll(b.dir)
	}
}

// create creates path in the build, and its folders.
func (b *build) create(path string) (*os.File, error) {
	err := b.mkdirs(path)
	if err == nil {
		err = b.clearPath(path)
	}
	if err != nil {
		return nil, err
	}
	return b.w.dest.openFile(b.staged(path), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// prepare makes the build's folder: a new one, or a recycled one emptied
// of its files, its folders kept for the new version to reuse. A
// recycled folder that cannot be emptied is left to a later run's
// removal, and the build takes a new one: whatever is in staging, the
// skill is built.
func (b *build) prepare() error {
	if b.recycled {
		dirs, err := b.w.dest.emptyTree(b.dir)
		if err == nil {
			err = b.w.dest.chmodDir(b.dir, 0o755)
		}
		if err == nil {
			b.dirs, b.unused = dirs, maps.Clone(dirs)
			delete(b.unused, ".")
			return nil
		}
		b.recycled = false
		_ = b.w.dest.removeAll(b.dir)
		b.dir = filepath.Join(b.w.staging, randomName())
	}
	return b.w.dest.mkdir(b.dir, 0o755)
}

// emptyTree removes every entry below dir that is not a folder, never
// following a link, and returns dir's folders by slash path, "."
// included.
func (d dest) emptyTree(dir string) (map[string]bool, error) {
	dirs := map[string]bool{".": true}
	var walk func(rel string) error
	walk = func(rel string) error {
		full := filepath.Join(dir, filepath.FromSlash(rel))
		entries, err := os.ReadDir(full)
		if err != nil {
			return err
		}
		for _, e := range entries {
			child := path.Join(rel, e.Name())
			if e.IsDir() {
				dirs[child] = true
				if err := walk(child); err != nil {
					return err
				}
				continue
			}
			if err := d.remove(filepath.Join(full, e.Name())); err != nil {
				return err
			}
		}
		return nil
	}
	return dirs, walk(".")
}

// clearPath removes a recycled folder where the new version has a file.
func (b *build) clearPath(file string) error {
	if !b.dirs[file] {
		return nil
	}
	if err := b.w.dest.removeAll(b.staged(file)); err != nil {
		return err
	}
	for d := range b.dirs {
		if d == file || strings.HasPrefix(d, file+"/") {
			delete(b.dirs, d)
			delete(b.unused, d)
		}
	}
	return nil
}

// dropUnused removes the recycled folders the new version has no file
// in, deepest first.
func (b *build) dropUnused() error {
	if len(b.unused) == 0 {
		return nil
	}
	dirs := slices.SortedFunc(maps.Keys(b.unused), func(x, y string) int {
		return strings.Count(y, "/") - strings.Count(x, "/")
	})
	for _, d := range dirs {
		if err := b.w.dest.remove(b.staged(d)); err != nil {
			return err
		}
	}
	b.unused = nil
	return nil
}

// mkdirs makes the folders of a file's path in the build, each once: the
// build is the only writer of its folder, so what it made it need not
// look at again.
func (b *build) mkdirs(file string) error {
	dir := path.Dir(file)
	for p := dir; p != "." && b.unused[p]; p = path.Dir(p) {
		delete(b.unused, p)
	}
	if b.dirs[dir] {
		return nil
	}
	if err := b.mkdirs(dir); err != nil {
		return err
	}
	if err := b.w.dest.mkdir(b.staged(dir), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	b.dirs[dir] = true
	return nil
}

// staged is where path goes in the build.
func (b *build) staged(path string) string {
	return filepath.Join(b.dir, filepath.FromSlash(path))
}

// close finishes one written file and records it.
func (b *build) close(f *os.File, o op) error {
	// fstat rather than lstat of the path, and a chmod only where the
	// umask left another mode than wanted: a cold sync closes every file
	// of the source.
	info, err := f.Stat()
	if err == nil && info.Mode().Perm() != o.mode.Perm() {
		err = f.Chmod(o.mode) // which changes neither size nor mtime
	}
	if err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	b.files[o.path] = FileRecord{SHA256: o.sha, Size: info.Size(), Mode: modeString(o.mode), MTime: info.ModTime().UnixNano()}
	b.stats.Written++
	b.stats.BytesWritten += info.Size()
	return nil
}

// link hard-links an unchanged live file into the build, so it keeps its
// inode and mtime. Where a link cannot be made it is copied, and must
// still hash as recorded.
func (b *build) link(o op) error {
	src, dst := filepath.Join(b.live, filepath.FromSlash(o.path)), b.staged(o.path)
	if err := b.mkdirs(o.path); err != nil {
		return err
	}
	if err := b.clearPath(o.path); err != nil {
		return err
	}
	if err := b.w.dest.link(src, dst); err == nil {
		b.files[o.path] = o.rec
		b.stats.Unchanged++
		return nil
	}
	in, err := b.w.dest.openFile(src, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := b.w.dest.openFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	sum, err := hashReader(io.TeeReader(io.LimitReader(in, o.rec.Size+1), out))
	if err != nil {
		out.Close()
		return err
	}
	if sum != o.rec.SHA256 {
		out.Close()
		return fmt.Errorf("the live copy changed while it was copied")
	}
	return b.close(out, op{path: o.path, mode: o.rec.Perm(), sha: sum})
}

// adopt moves a file written whole in staging into the build.
func (b *build) adopt(o op) error {
	err := b.mkdirs(o.path)
	if err == nil {
		err = b.clearPath(o.path)
	}
	if err == nil {
		err = b.w.dest.rename(o.src, b.staged(o.path))
	}
	if err != nil {
		_ = b.w.dest.remove(o.src)
		return err
	}
	b.files[o.path] = o.rec
	b.stats.Written++
	b.stats.BytesWritten += o.rec.Size
	return nil
}

// wait waits for the build and, when it succeeded, queues its swap and
// counts its work. An error means nothing of the skill was staged.
func (b *build) wait(failed func(error)) (map[string]FileRecord, error) {
	<-b.done
	if b.err != nil {
		return nil, b.err
	}
	b.w.count(b.stats)
	b.w.queue(&swap{staged: b.dir, live: b.live, aside: b.aside, failed: failed})
	return b.files, nil
}
