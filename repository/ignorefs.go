package repository

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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
	"sync"
	"syscall"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/skill"
)

// Bounds on the ignore files a listing reads: a .gitignore in a source is
// untrusted text. A real one is a few KiB and a few hundred rules.
const (
	// MaxIgnoreFileSize bounds one ignore file.
	MaxIgnoreFileSize = 256 << 10
	// MaxIgnoreRules bounds the rules in effect in one folder, the
	// user's and the work tree's included: every entry is judged
	// against each.
	MaxIgnoreRules = 10_000
	// MaxIgnoreBytes bounds the ignore files one listing reads in all.
	MaxIgnoreBytes = 16 << 20
)

// ErrIgnoreFile is wrapped by the error of a folder whose ignore rules
// could not be read: what git ignores there is unknown, so nothing in it
// is read, rather than a file the user keeps out of git.
var ErrIgnoreFile = errors.New("its ignore rules cannot be read")

// IgnoreFS is a DirFS over a folder of a git work tree that leaves out
// what git ignores there, as git status judges it: the rules of the
// user's core.excludesFile, the repository's info/exclude and every
// .gitignore from the work tree's root down to each folder. An ignored
// name is absent from every listing, and opening or stating it, or
// anything below an ignored folder, fails with fs.ErrNotExist: ignore
// rules only ever take away from what the DirFS would serve.
//
// Files git tracks although a rule matches them are left out too: git
// keeps those, but knowing them takes the index, and leaving them out
// errs on the side of not copying.
//
// Each .gitignore is read once, when its folder is first looked at, and
// kept for the life of the IgnoreFS (one listing: a Local opens a new
// one at every Sync and Skills), so an edit shows at the next listing.
type IgnoreFS struct {
	d      *DirFS   // the FS at the source's root
	prefix string   // slash path of this FS inside d, "" at its root
	st     *ignores // shared by every Sub
}

// ignores is what an IgnoreFS and its Subs know of the rules.
type ignores struct {
	d    *DirFS
	base []string // components from the work tree's root to the source's
	// env is the host whose git config says what a repository nested in
	// the folder (a cloned skill) ignores beside its .gitignore files:
	// the core.excludesFile its config and the user's name, and its
	// info/exclude, read when the repository is met (repoRules), as
	// publish of the clone reads them.
	env hostenv.Env
	// user is what the user's git config says of core.excludesFile, and
	// excludes the rules of each excludes file, read once for the
	// repositories nested in the folder (repoRules).
	user     *userExcludes
	excludes map[string][]ignoreRule

	// whole says why git ignores the folder itself, which is then judged
	// by its own .gitignore files alone (GitView); nil when it does not.
	whole *IgnoredFolder
	// ownOnly says the folder is judged by its own .gitignore files alone
	// (GitView: outside a work tree, or git ignores it whole).
	ownOnly bool

	mu    sync.Mutex
	dirs  map[string]*ignoreDir // by slash path inside the source
	bytes int                   // of ignore files read
	notes []skill.Problem
	// dropped counts the entries left out of listings, up to
	// maxDropped: discovery charges max_entries only for the entries it
	// is given, and a folder of millions of ignored files must not cost
	// more than one of millions of others.
	dropped, maxDropped int
	// left are the folders the listings left out, by the folder (a
	// slash path inside the source) whose listing did: a skill folder
	// among them is one the sync does not take (noteLeftOut), and one
	// appearing changes a dir: source's revision (LeftOutRevision).
	left map[string]*leftDir
	// looks counts the looks for a SKILL.md in folders left out, up to
	// maxLeftOutLooks.
	looks int
	// skillFile is the first SKILL.md a listing left out, and its rule
	// (LeftOutBy); "" when none was.
	skillFile     string
	skillFileRule leftRule
}

// leftDir is what the listings of one folder left out.
type leftDir struct {
	names map[string]leftRule // folders left out, by name
	// skill says a listing of the folder showed a SKILL.md: what it
	// leaves out is the skill's own files, never a skill.
	skill bool
	noted bool // noteLeftOut looked at it
}

// leftRule is where the rule that left a folder out is written.
type leftRule struct {
	text, file string
	line       int
}

// maxLeftOutLooks bounds the looks for a SKILL.md in the folders one
// listing left out: a build/ of thousands of folders costs no more.
const maxLeftOutLooks = 256

// maxLeftOutRecorded bounds the folders left out that are remembered.
const maxLeftOutRecorded = 10_000

// ignoreDir is what applies below one folder of the source.
type ignoreDir struct {
	full   []string // components from the work tree's root
	rules  []ignoreRule
	hidden bool // the folder, or one above it, is ignored
	// at is the folder whose rule why hides it (the folder itself, or
	// one above it), when hidden: a command that names a folder a
	// source's sync leaves out says which rule does (OpenGitViewIn).
	at  string
	why *leftRule
	err error // its rules could not be read (ErrIgnoreFile)
	// read is set once the folder's own .gitignore was looked for. It
	// is looked for when first needed, so that a listing of the folder
	// that shows none spares the look: a stat through the os.Root costs
	// more than the rest of a folder's judging.
	read bool
	// looked is set once whether the folder holds a .git of its own
	// (a repository nested in the source: nest) is known, from its
	// listing when that comes first, which spares a stat per folder.
	looked bool
}

// GitIgnoring returns d seen as git sees it when d's folder lies in a git
// work tree, or nil when it does not, or when the folder itself is one
// git ignores: the user named that folder, and the work tree's rules do
// not judge it, as they judge no folder outside a work tree (GitView then
// reads it by its own .gitignore files). env is where the user's git
// config and core.excludesFile are found.
func GitIgnoring(d *DirFS, env hostenv.Env) (*IgnoreFS, error) {
	ig, _, err := gitIgnoring(d, env)
	return ig, err
}

// gitIgnoring is GitIgnoring, saying why git ignores the folder when it
// is one git ignores.
func gitIgnoring(d *DirFS, env hostenv.Env) (*IgnoreFS, *IgnoredFolder, error) {
	root := d.Dir()
	tree, gitDir := findWorkTree(root)
	if tree == "" {
		return nil, nil, nil
	}
	rel, err := filepath.Rel(tree, root)
	if err != nil {
		return nil, nil, nil
	}
	var base []string
	if rel != "." {
		base = strings.Split(filepath.ToSlash(rel), "/")
	}
	if slices.Contains(base, ".git") {
		return nil, nil, nil // inside a repository's own folder: no work tree
	}
	st := &ignores{d: d, base: base, dirs: map[string]*ignoreDir{}, maxDropped: DefaultMaxEntries}
	var rules []ignoreRule
	add := func(name string, data []byte, depth int) error {
		more := parseIgnore(data, depth, name)
		if len(rules)+len(more) > MaxIgnoreRules {
			return fmt.Errorf("%s brings the ignore rules in effect to %d, over the %d skillsync reads: %w", name, len(rules)+len(more), MaxIgnoreRules, ErrIgnoreFile)
		}
		rules = append(rules, more...)
		return nil
	}
	if name, data, err := excludesFile(env, gitDir); err != nil {
		return nil, nil, err
	} else if err := add(name, data, 0); err != nil {
		return nil, nil, err
	}
	st.env = env
	if gitDir != "" {
		name := filepath.Join(gitDir, "info", "exclude")
		data, err := st.readOutside(name)
		if err != nil {
			return nil, nil, err
		}
		if err := add(name, data, 0); err != nil {
			return nil, nil, err
		}
	}
	// The folders from the work tree's root down to the source's: their
	// .gitignore files apply inside it, and a folder among them that is
	// ignored holds nothing git judges.
	for i := 0; i <= len(base); i++ {
		if i > 0 {
			if r := deciding(rules, base[:i], true); r != nil && !r.negate {
				at := filepath.Join(tree, filepath.Join(base[:i]...))
				return nil, &IgnoredFolder{Dir: root, At: at, Rule: r.text, File: r.file, Line: r.line}, nil
			}
		}
		if i == len(base) {
			break // the source's own .gitignore is read through d
		}
		name := filepath.Join(tree, filepath.Join(base[:i]...), ".gitignore")
		data, err := st.readOutside(name)
		if err != nil {
			return nil, nil, err
		}
		if err := add(name, data, i); err != nil {
			return nil, nil, err
		}
	}
	st.dirs["."] = &ignoreDir{full: slices.Clip(base), rules: slices.Clip(rules), looked: true}
	return &IgnoreFS{d: d, st: st}, nil, nil
}

// findWorkTree returns the work tree dir lies in (the nearest folder up
// that holds a .git folder or file with a HEAD) and its repository's
// common folder, where info/exclude is; "" when there is none.
func findWorkTree(dir string) (tree, gitDir string) {
	for {
		dot := filepath.Join(dir, ".git")
		if info, err := os.Lstat(dot); err == nil {
			switch {
			case info.IsDir():
				if isRepo(dot) {
					return dir, dot
				}
			case info.Mode().IsRegular():
				// A linked work tree or a submodule: "gitdir: PATH",
				// whose commondir (when it has one) holds info/.
				if g := gitFileDir(dir, dot); g != "" {
					return dir, g
				}
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", ""
		}
		dir = up
	}
}

// isRepo reports whether dir looks like a repository's folder to git.
func isRepo(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, "HEAD"))
	return err == nil
}

// gitFileDir reads the .git file dot of the work tree dir: the common
// folder of the repository it names, or "" when it names none.
func gitFileDir(dir, dot string) string {
	data, err := readBounded(dot, 4<<10, false)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	g, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	g = strings.TrimSpace(g)
	if !filepath.IsAbs(g) {
		g = filepath.Join(dir, g)
	}
	if !isRepo(g) {
		return ""
	}
	if c, err := readBounded(filepath.Join(g, "commondir"), 4<<10, false); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(g, common)
		}
		return common
	}
	return g
}

// excludesFile reads the user's core.excludesFile, as git finds it: the
// last of the system config, $XDG_CONFIG_HOME/git/config and ~/.gitconfig
// (or $GIT_CONFIG_GLOBAL alone) and the repository's own config (in
// gitDir) that sets it, each with the files it includes
// (configExcludes), else $XDG_CONFIG_HOME/git/ignore. It follows links,
// as git does: such files are the user's own, often links into a
// dotfiles repository.
func excludesFile(env hostenv.Env, gitDir string) (string, []byte, error) {
	u, err := readUserExcludes(env, gitDir)
	if err != nil {
		return "", nil, err
	}
	if u, err = u.withRepo(gitDir); err != nil {
		return "", nil, err
	}
	file, ok := u.name()
	if !ok {
		return file, nil, nil
	}
	data, err := readBounded(file, MaxIgnoreFileSize, true)
	if err != nil {
		return "", nil, fmt.Errorf("core.excludesFile %s: %w", file, err)
	}
	return file, data, nil
}

// userExcludes is what the system's and the user's git config say of
// core.excludesFile, before a repository's own config has its say: read
// once for the repositories one listing finds nested in a source (a
// folder of cloned skills), where reading it again for each cost two
// dozen system calls a clone on every sync.
type userExcludes struct {
	home string
	file string // the core.excludesFile set last, as written
	// reads counts the config files read (maxConfigFiles).
	reads int
	// perRepo says an includeIf gitdir: condition was judged: what the
	// config says depends on the repository, and is read for each.
	perRepo bool
}

// readUserExcludes reads the system's and the user's git config for
// core.excludesFile (excludesFile), includeIf gitdir: conditions judged
// against gitDir.
func readUserExcludes(env hostenv.Env, gitDir string) (userExcludes, error) {
	home, _ := env.HomeDir()
	xdg := env.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var configs []string
	if env.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		if sys := env.Getenv("GIT_CONFIG_SYSTEM"); sys != "" {
			configs = append(configs, sys)
		} else if filepath.Separator == '/' {
			configs = append(configs, "/etc/gitconfig")
		}
	}
	if g, ok := env.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		configs = append(configs, g)
	} else {
		if xdg != "" {
			configs = append(configs, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			configs = append(configs, filepath.Join(home, ".gitconfig"))
		}
	}
	u := userExcludes{home: home}
	if xdg != "" {
		u.file = filepath.Join(xdg, "git", "ignore")
	}
	for _, c := range configs {
		if c == "" || c == os.DevNull {
			continue
		}
		if err := configExcludes(c, gitDir, 0, &u); err != nil {
			return userExcludes{}, err
		}
	}
	return u, nil
}

// withRepo is u with the config of the repository whose common folder is
// gitDir read after it, which comes last and wins, as in git.
func (u userExcludes) withRepo(gitDir string) (userExcludes, error) {
	if gitDir == "" {
		return u, nil
	}
	if err := configExcludes(filepath.Join(gitDir, "config"), gitDir, 0, &u); err != nil {
		return userExcludes{}, err
	}
	return u, nil
}

// name returns the excludes file u names, and whether it is one to read:
// not /dev/null (how a user turns the global excludes off), nor a
// relative name.
func (u userExcludes) name() (string, bool) {
	file := u.file
	if rest, ok := strings.CutPrefix(file, "~/"); ok && u.home != "" {
		file = filepath.Join(u.home, rest)
	}
	if file == os.DevNull {
		return "", false
	}
	return file, file != "" && filepath.IsAbs(file)
}

// maxConfigIncludes is how deep git follows include.path and
// includeIf.*.path from one config file to the next.
const maxConfigIncludes = 10

// maxConfigFiles bounds the config files one look for core.excludesFile
// reads, includes and all: the depth alone lets a file that includes
// itself ten times over make 10^10 reads.
const maxConfigFiles = 100

// configExcludes sets u.file to the core.excludesFile the git config file
// c sets, following its include.path and includeIf.<condition>.path
// where they stand among its sections, as git does: a user's
// excludesFile is often set in a file ~/.gitconfig includes (a dotfiles
// repository's, or a per-machine one), and missing it took what the user
// keeps out of git into a publish. An includeIf whose condition is
// gitdir: or gitdir/i: is judged against the repository's folder; one
// of another condition (onbranch:, hasconfig:) is taken as met: its
// excludes are left out as well, which errs on the side of not copying.
// A file missing, or that does not parse (git would refuse to run), sets
// nothing. u.reads counts the files read so far: past maxConfigFiles it
// is an error, which fails closed (nothing is read without the rules).
func configExcludes(c, gitDir string, depth int, u *userExcludes) error {
	home := u.home
	if u.reads++; u.reads > maxConfigFiles {
		return fmt.Errorf("git config %s: more than %d config files through include.path and includeIf (a file that includes itself?): make the includes a chain", c, maxConfigFiles)
	}
	data, err := readBounded(c, MaxIgnoreFileSize, true)
	if err != nil {
		return fmt.Errorf("git config %s: %w", c, err)
	}
	cfg := gitconfig.New()
	if len(data) == 0 || gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg) != nil {
		return nil
	}
	include := func(p string) error {
		if p == "" || depth >= maxConfigIncludes {
			return nil
		}
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			p = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(c), p)
		}
		return configExcludes(p, gitDir, depth+1, u)
	}
	for _, s := range cfg.Sections {
		switch {
		case s.IsName("core"):
			if v := s.Option("excludesfile"); v != "" {
				u.file = v
			}
		case s.IsName("include"):
			for _, p := range s.OptionAll("path") {
				if err := include(p); err != nil {
					return err
				}
			}
		case s.IsName("includeIf"):
			for _, sub := range s.Subsections {
				if strings.HasPrefix(sub.Name, "gitdir") {
					u.perRepo = true
				}
				if !includeIfMet(sub.Name, c, home, gitDir) {
					continue
				}
				for _, p := range sub.OptionAll("path") {
					if err := include(p); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// includeIfMet reports whether git would take an includeIf of cond in
// the config file c for the repository at gitDir (its .git folder).
// Conditions other than gitdir: and gitdir/i: are taken as met
// (configExcludes).
func includeIfMet(cond, c, home, gitDir string) bool {
	pat, fold := "", false
	switch {
	case strings.HasPrefix(cond, "gitdir:"):
		pat = strings.TrimPrefix(cond, "gitdir:")
	case strings.HasPrefix(cond, "gitdir/i:"):
		pat, fold = strings.TrimPrefix(cond, "gitdir/i:"), true
	default:
		return true
	}
	if gitDir == "" {
		return false
	}
	switch {
	case strings.HasPrefix(pat, "~/") && home != "":
		pat = filepath.ToSlash(home) + pat[1:]
	case strings.HasPrefix(pat, "./"):
		pat = filepath.ToSlash(filepath.Dir(c)) + pat[1:]
	case !strings.HasPrefix(pat, "/") && !filepath.IsAbs(filepath.FromSlash(pat)):
		pat = "**/" + pat
	}
	if strings.HasSuffix(pat, "/") {
		pat += "**"
	}
	try := []string{filepath.ToSlash(gitDir)}
	if real, err := filepath.EvalSymlinks(gitDir); err == nil {
		try = append(try, filepath.ToSlash(real))
	}
	if fold {
		pat = strings.ToLower(pat)
	}
	parts := strings.Split(strings.TrimPrefix(pat, "/"), "/")
	for _, d := range try {
		if fold {
			d = strings.ToLower(d)
		}
		if matchParts(parts, strings.Split(strings.TrimPrefix(d, "/"), "/")) {
			return true
		}
	}
	return false
}

// readOutside reads an ignore file of the work tree outside the source:
// never through a link, as git reads a .gitignore, and within the
// listing's bounds. A missing one is empty.
func (st *ignores) readOutside(name string) ([]byte, error) {
	data, err := readBounded(name, MaxIgnoreFileSize, false)
	if errors.Is(err, errLink) {
		st.note(name, name+" is a symbolic link, which git does not follow for ignore rules; it is not read")
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, ErrIgnoreFile, err)
	}
	st.bytes += len(data)
	return data, nil
}

// errLink is readBounded's refusal of a link it was not to follow.
var errLink = errors.New("is a symbolic link")

// readBounded reads the regular file name, up to max bytes; a missing
// file is empty. Unless follow, a link is refused with errLink. The
// open cannot block on a FIFO swapped in after the look.
func readBounded(name string, max int64, follow bool) ([]byte, error) {
	look := os.Lstat
	if follow {
		look = os.Stat
	}
	info, err := look(name)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return nil, nil
	case err != nil:
		return nil, err
	case info.Mode()&fs.ModeSymlink != 0:
		return nil, errLink
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", name)
	case info.Size() > max:
		return nil, fmt.Errorf("%s is %d bytes, over the %d skillsync reads of an ignore file", name, info.Size(), max)
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(info, now) {
		return nil, fmt.Errorf("%s changed while it was read", name)
	}
	return readMax(f, name, max)
}

// readMax reads r up to max bytes, failing past them.
func readMax(r io.Reader, name string, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(bufio.NewReader(r), max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s grew past the %d skillsync reads of an ignore file", name, max)
	}
	return data, err
}

// note records a warning about an ignore file, once.
func (st *ignores) note(file, msg string) {
	st.notes = append(st.notes, skill.Problem{Level: skill.Warning, Rule: "gitignore-unread", Path: file, File: file, Message: msg})
}

// Problems returns the warnings about the ignore files read so far, such
// as a .gitignore that is a link and was not followed.
func (w *IgnoreFS) Problems() []skill.Problem {
	w.st.mu.Lock()
	defer w.st.mu.Unlock()
	return slices.Clone(w.st.notes)
}

// dir returns what is known of the folder at rel (a slash path inside
// the source): whether it is ignored, with the rules of the folders above
// it, reading their .gitignore files once. Its own are read by rules.
// st.mu is held.
func (st *ignores) dir(rel string) *ignoreDir {
	if v := st.dirs[rel]; v != nil {
		return v
	}
	parent := st.rules(path.Dir(rel))
	name := path.Base(rel)
	v := &ignoreDir{full: append(slices.Clip(parent.full), name), rules: parent.rules}
	switch {
	case parent.err != nil:
		v.err, v.read = parent.err, true
	case parent.hidden:
		v.hidden, v.read, v.at, v.why = true, true, parent.at, parent.why
	default:
		if r := deciding(parent.rules, v.full, true); r != nil && !r.negate {
			v.hidden, v.read, v.at, v.why = true, true, rel, &leftRule{text: r.text, file: r.file, line: r.line}
		}
	}
	v.looked = v.err != nil || v.hidden
	st.dirs[rel] = v
	return v
}

// nest makes v, the folder rel, judge what is in it as a repository of
// its own when it holds one (has says whether it holds a .git; nil: look).
// A repository below the work tree (a submodule, a cloned skill) has
// what is in it judged by its own rules, never the outer one's: the
// user's excludes and the .gitignore files inside it, from its root.
// Read whole, its .env went to the targets that a publish of the same
// folder, which finds that repository, kept it out of. It is done before
// the folder's own .gitignore is read (rules). st.mu is held.
func (st *ignores) nest(v *ignoreDir, rel string, has func() bool) {
	if v.looked {
		return
	}
	v.looked = true
	// The listing, when it came first, spares the look where there is
	// no .git; where there is, it must be a repository (repository).
	if has != nil && !has() {
		return
	}
	gitDir := st.repository(rel)
	if gitDir == "" {
		return
	}
	rules, err := st.repoRules(gitDir)
	if err != nil {
		v.err, v.read = err, true
		return
	}
	v.full, v.rules = nil, rules
}

// repoRules returns the rules a repository whose common folder is gitDir
// judges its work tree by, beside its .gitignore files: the
// core.excludesFile of the user's config or its own, then its
// info/exclude, as gitIgnoring reads them for the work tree a folder
// lies in. A clone's info/exclude left out of them took to the targets
// what publish of the clone (which finds it as its work tree) keeps out.
// st.mu is held.
func (st *ignores) repoRules(gitDir string) ([]ignoreRule, error) {
	if st.user == nil || st.user.perRepo {
		u, err := readUserExcludes(st.env, gitDir)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrIgnoreFile, err)
		}
		st.user = &u
	}
	u, err := st.user.withRepo(gitDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrIgnoreFile, err)
	}
	var rules []ignoreRule
	if name, ok := u.name(); ok {
		if st.excludes == nil {
			st.excludes = map[string][]ignoreRule{}
		}
		r, seen := st.excludes[name]
		if !seen {
			data, err := readBounded(name, MaxIgnoreFileSize, true)
			if err != nil {
				return nil, fmt.Errorf("%w: core.excludesFile %s: %w", ErrIgnoreFile, name, err)
			}
			r = slices.Clip(parseIgnore(data, 0, name))
			st.excludes[name] = r
		}
		rules = r
	}
	exclude := filepath.Join(gitDir, "info", "exclude")
	data, err := st.readOutside(exclude)
	if err != nil {
		return nil, err
	}
	rules = append(rules, parseIgnore(data, 0, exclude)...)
	if len(rules) > MaxIgnoreRules {
		return nil, fmt.Errorf("%s and the excludes file bring the ignore rules in effect to %d, over the %d skillsync reads: %w", exclude, len(rules), MaxIgnoreRules, ErrIgnoreFile)
	}
	return slices.Clip(rules), nil
}

// repository returns the common folder of the repository the folder rel
// holds as its own, as findWorkTree finds one (a .git folder with a
// HEAD, or a .git file naming a repository), or "" when it holds none.
// Any .git would do otherwise: an empty one, or a file of another sort,
// which git descends into as any folder, took what the outer rules leave
// out (a .env) to the targets.
func (st *ignores) repository(rel string) string {
	dir := filepath.Join(st.d.Dir(), filepath.FromSlash(rel))
	dot := filepath.Join(dir, ".git")
	info, err := os.Lstat(dot)
	switch {
	case err != nil:
		return ""
	case info.IsDir() && isRepo(dot):
		return dot
	case info.Mode().IsRegular():
		return gitFileDir(dir, dot)
	}
	return ""
}

// rules returns what applies below the folder at rel, its own .gitignore
// read. st.mu is held.
func (st *ignores) rules(rel string) *ignoreDir {
	v := st.dir(rel)
	st.nest(v, rel, nil)
	if !v.read {
		v.read = true
		st.own(v, rel)
	}
	return v
}

// own adds the rules of the .gitignore in the folder rel to v's, or sets
// v.err when they cannot be read. A .gitignore that is a link is not
// followed (git does not follow one either since 2.32): its rules are not
// read, and a warning says so.
func (st *ignores) own(v *ignoreDir, rel string) {
	name := path.Join(rel, ".gitignore")
	fail := func(err error) { v.err = fmt.Errorf("%s: %w: %w", name, ErrIgnoreFile, err) }
	// Most folders have none. One lstat by path says so for a seventh
	// of what the os.Root's walk of each component costs; it learns only
	// whether a name exists, and where it does, or the look fails for
	// another reason, the look through the os.Root decides.
	if _, err := os.Lstat(filepath.Join(st.d.Dir(), filepath.FromSlash(name))); errors.Is(err, fs.ErrNotExist) {
		return
	}
	info, err := st.d.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return
	case err != nil:
		fail(err)
		return
	case info.Mode()&fs.ModeSymlink != 0 || !info.Mode().IsRegular():
		st.note(name, fmt.Sprintf("%s is a symbolic link or not a regular file, which git does not read for ignore rules; it is not read", name))
		return
	case info.Size() > MaxIgnoreFileSize:
		fail(fmt.Errorf("it is %d bytes, over the %d skillsync reads; nothing in its folder is read", info.Size(), MaxIgnoreFileSize))
		return
	case st.bytes+int(info.Size()) > MaxIgnoreBytes:
		fail(fmt.Errorf("the source's ignore files add up to more than the %d bytes skillsync reads; nothing in its folder is read", MaxIgnoreBytes))
		return
	}
	f, err := st.d.Open(name)
	if err != nil {
		fail(err)
		return
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(info, now) {
		fail(errors.New("it changed while it was read"))
		return
	}
	data, err := readMax(f, name, MaxIgnoreFileSize)
	if err != nil {
		fail(err)
		return
	}
	st.bytes += len(data)
	more := parseIgnore(data, len(v.full), filepath.Join(st.d.Dir(), filepath.FromSlash(name)))
	if len(more) == 0 {
		return
	}
	if n := len(v.rules) + len(more); n > MaxIgnoreRules {
		fail(fmt.Errorf("it brings the ignore rules in effect to %d, over the %d skillsync reads; nothing in its folder is read", n, MaxIgnoreRules))
		return
	}
	v.rules = append(slices.Clip(v.rules), more...)
}

// inSource is name, a path of w, as a path inside the source.
func (w *IgnoreFS) inSource(name string) string {
	if w.prefix == "" {
		return name
	}
	if name == "." {
		return w.prefix
	}
	return w.prefix + "/" + name
}

// judge returns the error that hides rel (a path inside the source) when
// git ignores it or lies in a folder that is ignored or whose rules could
// not be read; isDir says how rel itself is judged. A link is judged as a
// folder when that leaves it out: a rule for folders (build/) matches one
// that leads to a folder, which the walk would enter.
func (w *IgnoreFS) judge(op, name, rel string, isDir bool) error {
	w.st.mu.Lock()
	defer w.st.mu.Unlock()
	if rel == "." {
		v := w.st.dir(".")
		return w.verdict(op, name, v.err, false)
	}
	parent := w.st.rules(path.Dir(rel))
	if parent.err != nil || parent.hidden {
		return w.verdict(op, name, parent.err, parent.hidden)
	}
	full := append(slices.Clip(parent.full), path.Base(rel))
	out := ignored(parent.rules, full, isDir)
	if !out && !isDir && ignored(parent.rules, full, true) {
		info, err := w.d.Lstat(rel)
		out = err != nil || info.Mode()&fs.ModeSymlink != 0
	}
	if !out && isDir {
		// A folder whose own rules cannot be read is closed once that
		// is known: its listing, or a look at a name in it, fails.
		v := w.st.dir(rel)
		return w.verdict(op, name, v.err, false)
	}
	return w.verdict(op, name, nil, out)
}

// verdict is judge's answer for name: the error that closes it, or
// fs.ErrNotExist when git ignores it, else nil.
func (w *IgnoreFS) verdict(op, name string, err error, hidden bool) error {
	switch {
	case err != nil:
		return &fs.PathError{Op: op, Path: name, Err: err}
	case hidden:
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return nil
}

// keep filters the entries of the folder at rel (inside the source);
// complete says they are all it holds.
func (w *IgnoreFS) keep(rel string, entries []fs.DirEntry, complete bool) ([]fs.DirEntry, error) {
	w.st.mu.Lock()
	defer w.st.mu.Unlock()
	v := w.st.dir(rel)
	if complete {
		// The listing shows whether there is a .git or a .gitignore.
		w.st.nest(v, rel, func() bool {
			return slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == ".git" })
		})
		if !v.read && !slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == ".gitignore" }) {
			v.read = true // none to read
		}
	}
	v = w.st.rules(rel)
	if v.err != nil {
		return nil, v.err
	}
	if v.hidden {
		return nil, fs.ErrNotExist
	}
	if len(v.rules) == 0 {
		return entries, nil
	}
	full := append(slices.Clip(v.full), "")
	kept := entries[:0]
	for i, e := range entries {
		full[len(full)-1] = e.Name()
		isDir := e.IsDir() || e.Type()&fs.ModeSymlink != 0
		r := deciding(v.rules, full, isDir)
		if r == nil || r.negate {
			kept = append(kept, e)
			continue
		}
		if !isDir && w.st.skillFile == "" && isSkillFile(e) {
			w.st.skillFile, w.st.skillFileRule = path.Join(rel, e.Name()), leftRule{text: r.text, file: r.file, line: r.line}
		}
		if isDir && !skipsDir(e.Name()) {
			// The filter is in place: what was before i and kept is in
			// kept, what is after it is as listed.
			w.st.leave(rel, e.Name(), r, func() bool {
				return slices.ContainsFunc(kept, isSkillFile) || slices.ContainsFunc(entries[i+1:], isSkillFile)
			})
		}
	}
	if w.st.dropped += len(entries) - len(kept); w.st.dropped > w.st.maxDropped {
		return nil, fmt.Errorf("the listing left out more than %d entries that git ignores, and stopped at this folder", w.st.maxDropped)
	}
	return kept, nil
}

// leave records the folder name, which the listing of the folder rel
// left out by the rule r; hasSkill tells whether that listing shows a
// SKILL.md. No file is looked at: the no-op sync pays nothing for it.
// st.mu is held.
func (st *ignores) leave(rel, name string, r *ignoreRule, hasSkill func() bool) {
	ld := st.left[rel]
	if ld == nil {
		if len(st.left) >= maxLeftOutRecorded {
			return
		}
		if st.left == nil {
			st.left = map[string]*leftDir{}
		}
		ld = &leftDir{names: map[string]leftRule{}}
		st.left[rel] = ld
	}
	if !ld.skill && hasSkill() {
		ld.skill = true
	}
	if _, ok := ld.names[name]; !ok && len(ld.names) < maxLeftOutRecorded {
		ld.names[name] = leftRule{text: r.text, file: r.file, line: r.line}
	}
}

// noteLeftOut is told by discovery that it walks the folder dir, depth
// levels below where it started, and would walk the folders in it: each
// folder its listing left out by a rule that is a skill folder (holds a
// SKILL.md, at MaxDepth at most), or holds one right below it, gets a
// gitignored-skill warning (Problems) naming the folder, the rule and
// its file and line. Without it a skill folder a .gitignore names
// (drafts/, *-wip/) was dropped by the sync in silence. It looks at
// the folders left out only, and only when discovery runs (never on a
// sync whose source did not change), maxLeftOutLooks looks at most.
func (w *IgnoreFS) noteLeftOut(dir string, depth int) {
	w.st.mu.Lock()
	defer w.st.mu.Unlock()
	rel := w.inSource(dir)
	ld := w.st.left[rel]
	if ld == nil || ld.noted || ld.skill || depth >= MaxDepth {
		return
	}
	ld.noted = true
	for _, name := range slices.Sorted(maps.Keys(ld.names)) {
		at := path.Join(rel, name)
		r := ld.names[name]
		if w.st.holdsSkill(at) {
			w.st.noteSkill(at, at, r)
			continue
		}
		if depth+2 > MaxDepth {
			continue
		}
		for _, sub := range w.st.subdirs(at) {
			if w.st.holdsSkill(path.Join(at, sub)) {
				w.st.noteSkill(path.Join(at, sub), at, r)
			}
		}
	}
}

// holdsSkill reports whether the folder rel holds a SKILL.md (or
// skill.md), within the looks left. st.mu is held.
func (st *ignores) holdsSkill(rel string) bool {
	for _, name := range []string{"SKILL.md", "skill.md"} {
		if st.looks++; st.looks > maxLeftOutLooks {
			return false
		}
		if _, err := st.d.Lstat(path.Join(rel, name)); err == nil {
			return true
		}
	}
	return false
}

// subdirs lists the folders in rel that discovery would enter, as many as
// the looks left allow. st.mu is held.
func (st *ignores) subdirs(rel string) []string {
	if st.looks >= maxLeftOutLooks {
		return nil
	}
	st.looks++
	f, err := st.d.Open(rel)
	if err != nil {
		return nil
	}
	defer f.Close()
	rd, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil
	}
	entries, _ := rd.ReadDir(maxLeftOutLooks - st.looks + 1)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && !skipsDir(e.Name()) {
			dirs = append(dirs, e.Name())
		}
	}
	slices.Sort(dirs)
	return dirs
}

// noteSkill records the warning for the skill folder rel, left out as
// the folder at is (rel or one above it) by the rule r. st.mu is held.
func (st *ignores) noteSkill(rel, at string, r leftRule) {
	onDisk := func(p string) string { return filepath.Join(st.d.Dir(), filepath.FromSlash(p)) }
	why := "git ignores it"
	if at != rel {
		why = "git ignores the folder " + onDisk(at) + " that holds it"
	}
	st.notes = append(st.notes, skill.Problem{Level: skill.Warning, Rule: RuleGitignoredSkill, Path: rel, File: r.file, Line: r.line,
		Message: fmt.Sprintf("skill folder %s is left out of the sync: %s, by the rule %q (%s:%d); change the rule, or move the skill, to have it synced", onDisk(rel), why, r.text, r.file, r.line)})
}

// RuleGitignoredSkill is the rule of the warning about a skill folder a
// .gitignore rule keeps out of a local source's sync.
const RuleGitignoredSkill = "gitignored-skill"

// LeftOutRevision folds into rev, a revision of the folder view reads
// (LayoutRevision), the folders its listings left out by a rule, those
// of skills aside: a skill folder a rule leaves out appearing then
// changes the revision, and the sync that reads the source again says
// so (noteLeftOut), where a new *-wip/ folder changed nothing and was
// never named. The names come from the listings the revision made: no
// file more is looked at. rev is returned as it is when nothing was left
// out.
func LeftOutRevision(rev Revision, view fs.FS) Revision {
	ig, ok := view.(*IgnoreFS)
	if !ok {
		return rev
	}
	ig.st.mu.Lock()
	defer ig.st.mu.Unlock()
	var lines []string
	for rel, ld := range ig.st.left {
		if ld.skill {
			continue
		}
		for name, r := range ld.names {
			lines = append(lines, fmt.Sprintf("%s\x00%s\x00%s:%d", path.Join(rel, name), r.text, r.file, r.line))
		}
	}
	if len(lines) == 0 {
		return rev
	}
	slices.Sort(lines)
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", rev)
	for _, l := range lines {
		fmt.Fprintf(h, "%d:%s\n", len(l), l)
	}
	return Revision(hex.EncodeToString(h.Sum(nil)))
}

// LeftOutBy says what the listings of view so far left out by a
// .gitignore rule, for a source that yields no skills: the first folder,
// in path order, that is not inside a skill, or else a SKILL.md, with the
// rule and where it is written ("the folder pdf, by the rule \"*\"
// (/src/.gitignore:1)"); "" when they left out neither, or view is not
// an IgnoreFS. It looks at no file: the listings made it.
func LeftOutBy(view fs.FS) string {
	ig, ok := view.(*IgnoreFS)
	if !ok {
		return ""
	}
	ig.st.mu.Lock()
	defer ig.st.mu.Unlock()
	first, at := leftRule{}, ""
	for rel, ld := range ig.st.left {
		if ld.skill {
			continue
		}
		for name, r := range ld.names {
			if p := path.Join(rel, name); at == "" || p < at {
				first, at = r, p
			}
		}
	}
	what := "the folder " + at
	if at == "" {
		if ig.st.skillFile == "" {
			return ""
		}
		first, what = ig.st.skillFileRule, "the file "+ig.st.skillFile
	}
	return fmt.Sprintf("%s, by the rule %q (%s:%d)", what, first.text, first.file, first.line)
}

// ConcurrentReads marks an IgnoreFS as safe to read from several
// goroutines: what it learns of the rules is guarded.
func (w *IgnoreFS) ConcurrentReads() {}

// Dir returns the directory the FS serves.
func (w *IgnoreFS) Dir() string {
	return filepath.Join(w.d.Dir(), filepath.FromSlash(w.prefix))
}

// Open opens name for reading; a folder's listing leaves out what git
// ignores.
func (w *IgnoreFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	rel := w.inSource(name)
	f, err := w.d.Open(rel)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: rootErr(err)}
	}
	info, err := f.Stat()
	if err == nil {
		err = w.judge("open", name, rel, info.IsDir())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if info.IsDir() {
		return &ignoreDirFile{File: f, w: w, rel: rel, name: name}, nil
	}
	return f, nil
}

// ignoreDirFile is an open folder of an IgnoreFS.
type ignoreDirFile struct {
	fs.File
	w         *IgnoreFS
	rel, name string
	// ahead is a batch read to learn whether the one before was the
	// last, with its error.
	ahead    []fs.DirEntry
	aheadErr error
	peeked   bool
}

// ReadDir reads the folder's entries, n at most when n > 0, leaving out
// what git ignores. A batch all of whose entries are ignored is not
// returned empty, which a caller would take for the end.
func (f *ignoreDirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	rd, ok := f.File.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: f.name, Err: errors.New("not a directory")}
	}
	for {
		var batch []fs.DirEntry
		var err error
		if f.peeked {
			batch, err, f.ahead, f.aheadErr, f.peeked = f.ahead, f.aheadErr, nil, nil, false
		} else {
			batch, err = rd.ReadDir(n)
		}
		complete := n <= 0 || err == io.EOF
		if n > 0 && err == nil && len(batch) < n {
			// Likely the last batch: the next read, which the caller
			// would make anyway, says so.
			f.ahead, f.aheadErr = rd.ReadDir(n)
			f.peeked = true
			complete = len(f.ahead) == 0 && f.aheadErr == io.EOF
		}
		kept, kerr := f.w.keep(f.rel, batch, complete)
		if kerr != nil {
			return nil, &fs.PathError{Op: "readdir", Path: f.name, Err: kerr}
		}
		if len(kept) > 0 || err != nil || n <= 0 || len(batch) == 0 {
			return kept, err
		}
	}
}

// Stat returns the FileInfo of name, as DirFS.Stat, unless git ignores it.
func (w *IgnoreFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	rel := w.inSource(name)
	info, err := w.d.Stat(rel)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: rootErr(err)}
	}
	if err := w.judge("stat", name, rel, info.IsDir()); err != nil {
		return nil, err
	}
	return info, nil
}

// Lstat returns the FileInfo of name itself, as DirFS.Lstat, unless git
// ignores it.
func (w *IgnoreFS) Lstat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrInvalid}
	}
	rel := w.inSource(name)
	info, err := w.d.Lstat(rel)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: rootErr(err)}
	}
	isDir := info.IsDir() || info.Mode()&fs.ModeSymlink != 0
	if err := w.judge("lstat", name, rel, isDir); err != nil {
		return nil, err
	}
	return info, nil
}

// ReadDir lists the folder name in lexical order, leaving out what git
// ignores.
func (w *IgnoreFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	rel := w.inSource(name)
	if err := w.judge("readdir", name, rel, true); err != nil {
		return nil, err
	}
	entries, err := w.d.ReadDir(rel)
	kept, kerr := w.keep(rel, entries, err == nil)
	if kerr != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: kerr}
	}
	if err != nil {
		return kept, &fs.PathError{Op: "readdir", Path: name, Err: rootErr(err)}
	}
	return kept, nil
}

// Sub returns the IgnoreFS of the folder dir, judged by the same rules.
func (w *IgnoreFS) Sub(dir string) (fs.FS, error) {
	if !fs.ValidPath(dir) {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: fs.ErrInvalid}
	}
	prefix := w.inSource(dir)
	if prefix == "." {
		prefix = ""
	}
	return &IgnoreFS{d: w.d, prefix: prefix, st: w.st}, nil
}

// DirKey names the identity of the folder name, as DirFS.DirKey, unless
// git ignores it.
func (w *IgnoreFS) DirKey(name string) (string, error) {
	if _, err := w.Stat(name); err != nil {
		return "", err
	}
	return w.d.DirKey(w.inSource(name))
}

var (
	_ fs.StatFS    = (*IgnoreFS)(nil)
	_ fs.SubFS     = (*IgnoreFS)(nil)
	_ fs.ReadDirFS = (*IgnoreFS)(nil)
	_ DirKeyFS     = (*IgnoreFS)(nil)
	_ ConcurrentFS = (*IgnoreFS)(nil)
)
