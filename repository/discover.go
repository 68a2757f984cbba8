package repository

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/skillsync/skillsync/skill"
	"github.com/skillsync/skillsync/workspace"
)

// MaxDepth is how far below a source's root discovery looks for skills.
const MaxDepth = 4

// maxSearchDepth is how deep discovery goes at all: past MaxDepth it only
// looks for skills to report as too deep, and a skill's listing enters no
// directory deeper than this inside the skill. Each level of a git tree is
// a lookup from its root, so depth is bounded apart from the entries.
const maxSearchDepth = 32

// errBudget stops discovery once the source's entries are spent; the
// problem saying so is recorded where it happened.
var errBudget = errors.New("the source's max_entries is spent")

// Discover finds the skills in fsys: directories holding a SKILL.md (or
// skill.md). It looks where repositories keep them: a root holding a
// SKILL.md is the one skill; otherwise the skill paths declared by Claude
// Code's .claude-plugin/marketplace.json and plugin.json, and the folders
// other tools read (skills/, skills/.curated/, .agents/skills/,
// .claude/skills/, ...), each down to MaxDepth levels; and only when none
// of those holds a skill, the whole source down to MaxDepth levels. The
// walk enters no directory whose name starts with "." nor node_modules,
// nor _drafts (proposed skills waiting for the promotion gate, never
// skills yet), nor a skill's own subdirectories, and reports a skill found
// below MaxDepth instead of loading it. rootName is the base name of the
// source root, the directory name a skill at the root itself should carry.
//
// Discovery is bounded whatever fsys holds: a directory reached twice (a
// link back to a parent, a git tree repeated at many paths) is read once
// when fsys is a DirKeyFS, at most opts.MaxEntries directory entries are
// read, and opts.Timeout bounds it in time. A source over a limit gives a
// problem, not an endless walk.
//
// With opts.Known set, a skill directory whose git tree is known is taken
// from the answer instead of being read (see Options.Known).
//
// Discover returns the usable skills in lexical order of their paths, and
// every problem found, each naming source. A skill with an error, or with
// a warning under opts.Strict, is left out, and so is one that opts'
// selection (Include, Exclude, metadata.internal; see Options.Selects)
// does not keep.
func Discover(ctx context.Context, fsys fs.FS, source, rootName string, opts Options) ([]skill.Skill, []skill.Problem, error) {
	found, problems, err := Scan(ctx, fsys, source, rootName, opts)
	if err != nil {
		return nil, nil, err
	}
	skills := make([]skill.Skill, 0, len(found))
	for _, f := range found {
		problems = append(problems, f.Problems...)
		if f.Valid() {
			skills = append(skills, f.Skill)
		}
	}
	return skills, problems, nil
}

// Found is one skill directory discovery found, usable or not.
type Found struct {
	Skill    skill.Skill
	Problems []skill.Problem
}

// Valid reports whether the skill has no error.
func (f Found) Valid() bool { return !skill.HasError(f.Problems, false) }

// Scan is Discover that also returns the skills with errors, each with its
// own problems, for reports such as skillsync validate. The problems it
// returns apart are the ones no skill owns. An error means the root could
// not be read or ctx ended (opts.Timeout included): a partial result is
// never returned as a whole one.
func Scan(ctx context.Context, fsys fs.FS, source, rootName string, opts Options) ([]Found, []skill.Problem, error) {
	if opts.Late != nil {
		opts.Late(&opts)
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	d := newDiscovery(fsys, opts)
	d.ahead = newReadAhead(ctx, d)
	// Deferred: a panic in the walk (which the daemon recovers) must not
	// leave the reads ahead running.
	defer d.ahead.close()
	err := d.discover(ctx, rootName)
	if err != nil && !errors.Is(err, errBudget) {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("source %s: discovery stopped: %w", source, ctx.Err())
		}
		return nil, nil, err
	}
	// The walk finds them in path order but for names that sort apart
	// from their folders' ("a-b" before "a/b"); a skill is hundreds of
	// bytes, and sorting 10,000 of them moved megabytes.
	byPath := func(a, b Found) int { return strings.Compare(a.Skill.Path, b.Skill.Path) }
	if !slices.IsSortedFunc(d.found, byPath) {
		slices.SortStableFunc(d.found, byPath)
	}
	capSource(d.found, opts.SourceSizeLimit())
	d.problems = append(d.problems, opts.Unmatched(d.names)...)
	for i := range d.problems {
		d.problems[i].Source = source
	}
	for _, f := range d.found {
		for i := range f.Problems {
			f.Problems[i].Source = source
		}
	}
	return d.found, d.problems, nil
}

type discovery struct {
	fsys     fs.FS
	keys     DirKeyFS // nil when fsys cannot name a directory's identity
	opts     Options
	found    []Found
	problems []skill.Problem
	names    []string // of every skill loaded, selected or not

	visits     map[string]*visit // by directory identity
	walking    []*visit          // the directories being walked, outermost first
	entries    int               // directory entries read so far
	maxEntries int
	over       bool // the entries are spent; the problem is recorded

	ahead *readAhead // nil when fsys is not a ConcurrentFS
}

// visit is what discovery knows of a directory it entered.
type visit struct {
	path   string
	depth  int
	active bool // still being walked: a way back to it from below is a loop
	skills bool // held a skill
	// held are the skill directories found below it, loaded or too deep,
	// so that the same tree reached again at another path (a git tree
	// repeated, a link) reports the ones too deep there.
	held []heldSkill
}

// heldSkill is a skill directory below a visited directory: its path and
// depth relative to that directory.
type heldSkill struct {
	rel   string
	depth int
}

// maxExpect bounds the room Options.Expect makes: a hint, not a limit.
const maxExpect = 100_000

func newDiscovery(fsys fs.FS, opts Options) *discovery {
	d := &discovery{fsys: fsys, opts: opts, visits: map[string]*visit{}, maxEntries: opts.EntryLimit()}
	d.keys, _ = fsys.(DirKeyFS)
	if n := min(opts.Expect, maxExpect); n > 0 {
		d.found, d.names = make([]Found, 0, n), make([]string, 0, n)
	}
	return d
}

// discover finds the skills of the source, looking where the repositories
// in the wild keep them: a source whose root holds a SKILL.md is that one
// skill; otherwise the paths Claude Code's plugin manifests declare and the
// folders other tools read (see roots); and only when none of those holds
// a skill, the whole source down to MaxDepth.
func (d *discovery) discover(ctx context.Context, rootName string) error {
	top, err := d.readDir(ctx, d.fsys, ".", ".")
	if err != nil {
		return err
	}
	picked := len(d.opts.Plugins) > 0
	if slices.ContainsFunc(top, isSkillFile) && !picked {
		return d.walk(ctx, ".", rootName, 0, "")
	}
	roots, err := d.roots(ctx, top)
	if err != nil {
		return err
	}
	for _, dir := range roots {
		// Roots overlap (a plugin's skills/ is also the skills/ folder,
		// .claude/skills is often a link to skills/): one read is enough
		// and the second is no news.
		if d.visits[d.key(dir)] != nil || inDrafts(dir) {
			continue
		}
		if err := d.walk(ctx, dir, path.Base(dir), 0, ""); err != nil {
			return err
		}
	}
	if len(d.found) > 0 || picked {
		return nil // plugins: reads the plugins picked and nothing else
	}
	return d.walk(ctx, ".", rootName, 0, "")
}

// inDrafts reports whether a path lies in a _drafts folder, which a
// plugin manifest may not make a root of skills either.
func inDrafts(dir string) bool { return slices.Contains(strings.Split(dir, "/"), workspace.DraftsName) }

func isSkillFile(e fs.DirEntry) bool { return e.Name() == "SKILL.md" || e.Name() == "skill.md" }

// walk looks for skills in dir and below it. A directory holding a
// SKILL.md is a skill and is not entered further; past MaxDepth a skill is
// reported as too deep instead of loaded. key is dir's identity when its
// parent's listing gave it, else "".
func (d *discovery) walk(ctx context.Context, dir, name string, depth int, key string) error {
	if key == "" {
		key = d.key(dir)
	}
	if v := d.visits[key]; v != nil {
		switch {
		case v.path == dir:
			return nil // reached again from an overlapping root
		case v.active:
			d.problem(skill.Warning, "dir-loop", dir, fmt.Sprintf("%s leads back to %s, which contains it, and is not entered", dir, v.path))
			return nil
		case depth >= v.depth:
			return d.repeated(v, dir, depth)
		}
	}
	v := &visit{path: dir, depth: depth, active: true}
	d.visits[key] = v
	d.walking = append(d.walking, v)
	before := len(d.found)
	defer func() {
		d.walking = d.walking[:len(d.walking)-1]
		v.active = false
		v.skills = len(d.found) > before
	}()

	if depth <= MaxDepth {
		if ok, err := d.known(key, dir); ok || err != nil {
			if ok {
				d.hold(dir, depth)
			}
			return err
		}
	}
	entries, err := d.readDir(ctx, d.fsys, dir, dir)
	if err != nil {
		if dir == "." || errors.Is(err, errBudget) || ctx.Err() != nil {
			return err
		}
		d.unreadableDir(dir, err)
		return nil
	}
	if slices.ContainsFunc(entries, isSkillFile) {
		d.hold(dir, depth)
		if depth > MaxDepth {
			d.tooDeep(dir, depth)
			return nil
		}
		return d.load(ctx, dir, name)
	}
	if ig, ok := d.fsys.(*IgnoreFS); ok {
		// A skill folder a .gitignore rule left out of entries is one
		// this walk would have taken: say so, naming the rule.
		ig.noteLeftOut(dir, depth)
	}
	if depth >= maxSearchDepth {
		// Not read further: a skill below would be dropped unseen.
		if slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return !skipsDir(e.Name()) && d.isDir(e, path.Join(dir, e.Name())) }) {
			d.problem(skill.Warning, "skill-too-deep", dir, fmt.Sprintf("%s is %d directories below where discovery started and its folders are not searched: a skill in them is not loaded (set path: to a folder above it)", dir, depth))
		}
		return nil
	}
	if depth < MaxDepth {
		d.ahead.children(dir, entries)
	}
	for _, e := range entries {
		if skipsDir(e.Name()) {
			continue
		}
		child := path.Join(dir, e.Name())
		if !d.isDir(e, child) {
			continue
		}
		if err := d.walk(ctx, child, e.Name(), depth+1, entryKey(e)); err != nil {
			return err
		}
	}
	return nil
}

// tooDeep reports the skill at dir, depth directories below where
// discovery started, as not loaded.
func (d *discovery) tooDeep(dir string, depth int) {
	d.problem(skill.Warning, "skill-too-deep", dir, fmt.Sprintf("%s holds a skill %d directories below where discovery started, deeper than the %d it looks; it is not loaded (set path: to a folder above it)", dir, depth, MaxDepth))
}

// hold notes the skill directory dir, found at depth, in every directory
// being walked, for repeated.
func (d *discovery) hold(dir string, depth int) {
	for _, v := range d.walking {
		rel := "."
		if dir != v.path {
			rel = strings.TrimPrefix(dir, v.path+"/")
			if v.path == "." {
				rel = dir
			}
		}
		v.held = append(v.held, heldSkill{rel: rel, depth: depth - v.depth})
	}
}

// repeated handles dir, at depth, being the directory v walked already at
// a depth no greater: its skills are read there, and the ones that lie
// too deep at dir are reported as a deep skill is, each charged to the
// source's budget as a listing would be.
func (d *discovery) repeated(v *visit, dir string, depth int) error {
	within := false
	for _, h := range v.held {
		if depth+h.depth <= MaxDepth {
			within = true
			continue
		}
		at := path.Join(dir, h.rel)
		if err := d.charge(1, at); err != nil {
			return err
		}
		d.tooDeep(at, depth+h.depth)
	}
	if v.skills && within {
		d.problem(skill.Warning, "dir-repeated", dir, fmt.Sprintf("%s is the same directory as %s (a link, or an identical tree); its skills are read there", dir, v.path))
	}
	return nil
}

// key names dir's identity: its DirKey where fsys has one, else its path.
func (d *discovery) key(dir string) string {
	if d.keys != nil {
		if k, err := d.keys.DirKey(dir); err == nil {
			return k
		}
	}
	return "path:" + dir
}

// readDir lists dir of fsys in lexical order, charging every entry to the
// source's budget as it is read, so even a directory of millions of
// entries costs no more than the budget. at names dir in problems.
func (d *discovery) readDir(ctx context.Context, fsys fs.FS, dir, at string) ([]fs.DirEntry, error) {
	return readDir(ctx, fsys, dir, at, d.charge)
}

// chargeFunc spends n entries of a budget, at naming where; it fails
// once the budget is spent.
type chargeFunc func(n int, at string) error

// readDir is discovery.readDir with the budget charge spends.
func readDir(ctx context.Context, fsys fs.FS, dir, at string, charge chargeFunc) ([]fs.DirEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := charge(1, at); err != nil {
		return nil, err
	}
	f, err := fsys.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: dir, Err: errors.New("not a directory")}
	}
	var all []fs.DirEntry
	for {
		batch, err := rd.ReadDir(256)
		if cerr := charge(len(batch), at); cerr != nil {
			return nil, cerr
		}
		all = append(all, batch...)
		if err == io.EOF || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			if _, named := err.(*fs.PathError); named {
				return nil, err // it says "readdir DIR" already
			}
			return nil, &fs.PathError{Op: "readdir", Path: dir, Err: err}
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name() < all[j].Name() })
	return all, nil
}

// skipsDir reports whether the walk passes over a folder named name: a
// dot-folder, node_modules, or the workspace's drafts.
func skipsDir(name string) bool {
	return name[0] == '.' || name == "node_modules" || name == workspace.DraftsName
}

// unknowable reports whether err, from a look at a path of the source,
// leaves what is there unknown (no permission, an I/O error, an object
// the store lacks): not that nothing is there, that a path goes through a
// file, that a link leads out of the source or round in a loop, which
// the source's own content makes, and a sync takes as it is.
func unknowable(err error) bool {
	return err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrOutside) &&
		!errors.Is(err, ErrLinkLoop) && !errors.Is(err, syscall.ENOTDIR)
}

// unreadableDir reports the folder dir, which could not be read: a
// warning, since it may hold no skill; a sync keeps the cached copy of
// any skill in it (materialize.Held).
func (d *discovery) unreadableDir(dir string, err error) {
	d.problem(skill.Warning, "dir-unreadable", dir, "cannot read directory: "+err.Error()+"; skills cached from it keep their copies")
}

// charge spends n entries of the budget. The first time it runs out it
// records the problem at dir; from then on every charge fails.
func (d *discovery) charge(n int, at string) error {
	d.entries += n
	if d.entries <= d.maxEntries {
		return nil
	}
	if !d.over {
		d.over = true
		d.problem(skill.Error, "source-too-many-entries", at, fmt.Sprintf("discovery read more than %d directory entries (max_entries) and stopped at %s; the skills past it are not read (a cached copy of one stays as it is): raise max_entries for a source this big", d.maxEntries, at))
	}
	return errBudget
}

// isDir reports whether e is a directory, following a symbolic link when
// fsys allows it and reporting one it refuses.
func (d *discovery) isDir(e fs.DirEntry, name string) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	info, err := fs.Stat(d.fsys, name)
	switch {
	case err == nil:
		return info.IsDir()
	case errors.Is(err, ErrOutside):
		d.problem(skill.Warning, "symlink-outside", name, "symbolic link is skipped: it "+ErrOutside.Error())
	case unknowable(err):
		// What it leads to is unknown: skills cached from there stay.
		d.unreadableDir(name, err)
	}
	return false
}

// load reads the skill at dir and lists its files, or takes what was
// read ahead of it when that still fits the budget. Only an ended ctx or
// a spent budget is returned; anything else is a problem of the skill.
func (d *discovery) load(ctx context.Context, dir, name string) error {
	l := d.ahead.take(ctx, dir, name)
	if l != nil && ctx.Err() == nil && d.entries+l.charged <= d.maxEntries {
		d.entries += l.charged // every charge of the listing succeeds
	} else {
		l = d.readSkill(ctx, dir, name, d.charge)
	}
	if l.subErr != nil {
		d.problem(skill.Error, "dir-unreadable", dir, l.subErr.Error())
		return nil
	}
	d.names = append(d.names, selectionName(l.s))
	if !l.selected {
		// Left out by the source's selection: neither listed nor
		// reported, so excluding a broken skill silences it.
		return nil
	}
	d.found = append(d.found, Found{Skill: l.s, Problems: l.problems})
	return l.stop
}

// loaded is a skill as readSkill read it.
type loaded struct {
	s        skill.Skill
	problems []skill.Problem
	selected bool
	subErr   error // the skill's directory could not be opened
	stop     error // what stopped the listing: an ended ctx, a spent budget
	charged  int   // entries the listing spent
}

// readSkill reads the skill at dir and, when it is usable and selected,
// lists its files, each directory read charged. It reads only d's FS and
// options, so it may run on another goroutine than the walk's.
func (d *discovery) readSkill(ctx context.Context, dir, name string, charge chargeFunc) *loaded {
	l := &loaded{}
	sub, err := fs.Sub(d.fsys, dir)
	if err != nil {
		l.subErr = err
		return l
	}
	s, ok := d.recall(sub, dir, name)
	var problems []skill.Problem
	if !ok {
		s, problems = skill.Options{Strict: d.opts.Strict}.Load(sub, dir, name)
		linkedOut(sub, s.File, problems)
	}
	l.s, l.selected = s, d.opts.Selects(s)
	if !l.selected {
		return l
	}
	counted := func(n int, at string) error {
		l.charged += n
		return charge(n, at)
	}
	if !skill.HasError(problems, d.opts.Strict) {
		var fileProblems []skill.Problem
		s.Listing, fileProblems, l.stop = d.list(ctx, sub, dir, counted)
		for i := range fileProblems {
			fileProblems[i].Skill = s.Name
		}
		problems = append(problems, fileProblems...)
		if size := listingSize(s.Listing); size > d.opts.SkillSizeLimit() {
			problems = append(problems, skill.Problem{Level: skill.Error, Rule: "skill-too-large", Skill: s.Name, Path: dir, File: dir,
				Message: fmt.Sprintf("the skill's files add up to %d bytes, over max_skill_size %d; the skill is skipped", size, d.opts.SkillSizeLimit())})
		}
	}
	if d.opts.Strict {
		// A portable skill holds nothing another system cannot write.
		problems = append(problems, skill.Portability(s.Name, dir, s.Listing)...)
		problems = skill.Strict(problems)
	}
	l.s, l.problems = s, problems
	return l
}

// linkedOut gives a SKILL.md that could not be opened because it is a
// symbolic link leading out of the source, or round in a loop, the rule
// skill-md-link, with the fix: such a link is the source's own content,
// as unknowable says, so the skill is invalid as the source has it (a
// sync keeps a cached copy of it, and a skill the cache never had is a
// problem that leaves the source whole), not a read that failed, which
// says nothing of the skill (skill-md-unreadable, materialize.Held). It
// looks again only at a SKILL.md that could not be read.
func linkedOut(sub fs.FS, file string, problems []skill.Problem) {
	for i, p := range problems {
		if p.Rule != "skill-md-unreadable" || file == "" {
			continue
		}
		_, err := fs.Stat(sub, file)
		var why string
		switch {
		case errors.Is(err, ErrOutside):
			why = "a symbolic link that " + ErrOutside.Error()
		case errors.Is(err, ErrLinkLoop):
			why = "a symbolic link that leads round in a loop"
		default:
			continue
		}
		problems[i].Rule = "skill-md-link"
		problems[i].Message = fmt.Sprintf("%s is %s, so the skill is skipped: make %s a file of the skill, or a link to one inside the source", file, why, file)
	}
}

// listingSize is the total size of a skill's files, from their listing:
// stat or a git object header, never their content.
func listingSize(files []skill.File) int64 {
	var n int64
	for _, f := range files {
		n += f.Size
	}
	return n
}

// capSource skips, in path order, the usable skill that takes the source's
// total past max and every usable skill after it, so which skills are kept
// depends only on the source, never on the order they were read in.
func capSource(found []Found, max int64) {
	var total int64
	over := false
	for i := range found {
		f := &found[i]
		if !f.Valid() {
			continue
		}
		total += listingSize(f.Skill.Listing)
		if total > max {
			over = true
		}
		if over {
			f.Problems = append(f.Problems, skill.Problem{Level: skill.Error, Rule: "source-too-large", Skill: f.Skill.Name, Path: f.Skill.Path, File: f.Skill.Path,
				Message: fmt.Sprintf("the source's skills add up to more than max_source_size %d bytes from this one on, in path order; it is skipped", max)})
		}
	}
}

// list walks a skill's files with skill.ListFiles, every directory read
// charged. It returns the error that stopped it, if any: an ended ctx or
// a spent budget, which stop discovery too.
func (d *discovery) list(ctx context.Context, sub fs.FS, dir string, charge chargeFunc) ([]skill.File, []skill.Problem, error) {
	b := &budgetFS{FS: sub, ctx: ctx, charge: charge, dir: dir}
	files, problems := skill.ListFiles(b, dir, d.opts.MaxFileSize)
	if b.err == nil {
		return files, problems, nil
	}
	// The directories left unread were reported one by one as
	// unreadable; one error says why instead.
	kept := problems[:0]
	for _, p := range problems {
		if p.Rule != "file-unreadable" {
			kept = append(kept, p)
		}
	}
	p := skill.Problem{Level: skill.Error, Path: dir, File: dir}
	switch {
	case errors.Is(b.err, errBudget):
		p.Rule, p.Message = "source-too-many-entries", "the skill's files were not all listed: "+errBudget.Error()
	case ctx.Err() != nil:
		return nil, nil, ctx.Err()
	default:
		p.Rule, p.Message = "skill-too-deep", b.err.Error()
	}
	kept = append(kept, p)
	if errors.Is(b.err, errBudget) {
		return nil, kept, errBudget
	}
	return nil, kept, nil
}

// budgetFS is a skill's files as skill.ListFiles walks them: every
// directory read is charged to the source's budget, and none deeper than
// maxSearchDepth levels inside the skill is read. After the first refusal
// every read fails, so the walk ends at once.
type budgetFS struct {
	fs.FS
	ctx    context.Context
	charge chargeFunc
	dir    string // the skill's path in the source, for problems
	err    error
}

func (b *budgetFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if b.err != nil {
		return nil, b.err
	}
	if name != "." && strings.Count(name, "/")+1 > maxSearchDepth {
		b.err = fmt.Errorf("%s is more than %d directories deep inside the skill; the skill is skipped", path.Join(b.dir, name), maxSearchDepth)
		return nil, b.err
	}
	entries, err := readDir(b.ctx, b.FS, name, path.Join(b.dir, name), b.charge)
	if errors.Is(err, errBudget) || b.ctx.Err() != nil {
		b.err = err
	}
	return entries, err
}

func (b *budgetFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(b.FS, name) }

func (d *discovery) problem(level skill.Level, rule, dir, msg string) {
	d.problems = append(d.problems, skill.Problem{Level: level, Rule: rule, Path: dir, File: dir, Message: msg})
}
