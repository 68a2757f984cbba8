package config

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/repository"
)

// Entry is a repositories: entry to write: a git remote (Git, with Ref
// and Path) or a local directory (Dir), and the skills to take from it.
type Entry struct {
	// Name is the source name; "" derives one from the remote or the
	// directory.
	Name string
	Git  string
	Ref  string
	Path string
	// Dir is a local directory, absolute or relative to the current
	// directory; the config gets it relative to its own folder when that
	// is short.
	Dir string
	// Skills selects skills by name or glob; nil takes them all.
	Skills []string
	// Plugins keeps the skills of these plugin groups of the source's
	// marketplace.json (plugins:); nil reads the whole source.
	Plugins []string
}

// AddResult says what AddRepository did.
type AddResult struct {
	// Source is the name of the entry written or found.
	Source string
	// Added is set when a new entry was written.
	Added bool
	// Skills are the names added to the skills: of an entry that was
	// already there.
	Skills []string
	// Included are the names taken out of the exclude: of an entry that
	// was already there: a skill remove --skill left out, asked for again.
	Included []string
	// Plugins are the names added to the plugins: of an entry that was
	// already there.
	Plugins []string
	// Config is the config as it loads now.
	Config *Config
}

// AddRepository appends e to the repositories: of the config file at
// file, wherever that key stands, keeping comments, blank lines and order;
// a config without the key gets it at its end. The same remote and path
// at another ref, selecting skills the entry there selects, is refused
// (an ArgError) unless e.Name is given. A repository already there
// (the same remote, ref and path, or the same directory) is not added
// again: a name e selects that its exclude: lists is taken out of it, and
// when both select skills, the names it lacks are added to its skills:;
// Added is false.
func AddRepository(env hostenv.Env, file string, e Entry, kinds *repository.Registry) (AddResult, error) {
	d, err := openDocument(env, file, kinds)
	if err != nil {
		return AddResult{}, err
	}
	if e.Dir != "" {
		if e.Dir, err = env.Abs(e.Dir); err != nil {
			return AddResult{}, err
		}
	}
	if found := d.cfg.Match(e, true); len(found) > 0 {
		i := found[0]
		s := d.cfg.Sources[i]
		res := AddResult{Source: s.Name, Config: d.cfg}
		if len(e.Plugins) > 0 && len(s.Plugins) > 0 {
			return d.addPlugins(i, res, e.Plugins)
		}
		return d.addSkills(i, res, e.Skills)
	}
	if err := d.otherRef(e); err != nil {
		return AddResult{}, err
	}
	name, err := d.newName(e)
	if err != nil {
		return AddResult{}, err
	}
	lines, err := d.entryLines(name, e)
	if err != nil {
		return AddResult{}, err
	}
	if err := d.appendEntry("repositories", lines, ""); err != nil {
		return AddResult{}, &Error{File: d.file, Errs: []error{err}}
	}
	cfg, err := d.save()
	if err != nil {
		return AddResult{}, err
	}
	return AddResult{Source: name, Added: true, Config: cfg}, nil
}

// entryLines renders e as the lines of one list entry.
func (d *document) entryLines(name string, e Entry) ([]string, error) {
	type kv struct{ k, v string }
	fields := []kv{{"name", name}}
	switch {
	case e.Git != "" && e.Dir != "":
		return nil, fmt.Errorf("source %s: a git remote and a directory at once", name)
	case e.Git != "":
		fields = append(fields, kv{"git", e.Git}, kv{"ref", e.Ref}, kv{"path", e.Path})
	case e.Dir != "":
		if e.Ref != "" || e.Path != "" {
			return nil, fmt.Errorf("source %s: ref and path belong to git sources, not to the directory %s", name, e.Dir)
		}
		fields = append(fields, kv{"dir", d.relDir(e.Dir)})
	default:
		return nil, fmt.Errorf("source %s: no git remote or directory", name)
	}
	var lines []string
	for _, f := range fields {
		if f.v == "" {
			continue
		}
		v, err := scalar(f.v)
		if err != nil {
			return nil, fmt.Errorf("source %s: %s: %w", name, f.k, err)
		}
		lines = append(lines, "  "+f.k+": "+v)
	}
	if len(e.Skills) > 0 {
		v, err := flowList(e.Skills)
		if err != nil {
			return nil, fmt.Errorf("source %s: skills: %w", name, err)
		}
		lines = append(lines, "  skills: "+v)
	}
	if len(e.Plugins) > 0 {
		v, err := flowList(e.Plugins)
		if err != nil {
			return nil, fmt.Errorf("source %s: plugins: %w", name, err)
		}
		lines = append(lines, "  plugins: "+v)
	}
	lines[0] = "- " + lines[0][2:]
	return lines, nil
}

// relDir writes dir relative to the config's folder when it is inside
// it or beside it, so the config works from any checkout; else below
// the home folder as ~/..., so it works for every user who keeps it in
// the same place of theirs; else absolute.
func (d *document) relDir(dir string) string {
	rel, err := filepath.Rel(filepath.Dir(d.file), dir)
	if err != nil || strings.HasPrefix(rel, ".."+string(filepath.Separator)+"..") || rel == ".." {
		if home, err := d.env.HomeDir(); err == nil {
			if rel, err := filepath.Rel(home, dir); err == nil && filepath.IsLocal(rel) {
				return "~/" + filepath.ToSlash(rel)
			}
		}
		return dir
	}
	return filepath.ToSlash(rel)
}

// newName names a new entry: e.Name when given, else the repository's
// or directory's name, else owner-repo, else that with a number, so no
// two sources share one.
func (d *document) newName(e Entry) (string, error) {
	taken := map[string]bool{}
	for _, s := range d.cfg.Sources {
		taken[s.Name] = true
	}
	if e.Name != "" {
		n := repository.SourceName(e.Name)
		if taken[n] {
			return "", fmt.Errorf("a source named %s is already in %s; choose another name", n, d.file)
		}
		return n, nil
	}
	var candidates []string
	if e.Git != "" {
		repo := repository.RepoName(e.Git)
		candidates = append(candidates, repo)
		if owner := ownerOf(e.Git); owner != "" {
			candidates = append(candidates, owner+"-"+repo)
		}
	} else {
		candidates = append(candidates, filepath.Base(e.Dir))
	}
	for _, c := range candidates {
		if n := repository.SourceName(c); !taken[n] {
			return n, nil
		}
	}
	base := repository.SourceName(candidates[len(candidates)-1])
	for i := 2; ; i++ {
		if n := base + "-" + strconv.Itoa(i); !taken[n] {
			return n, nil
		}
	}
}

// ownerOf returns the folder above the repository in a remote's path:
// "acme" for https://host/acme/skills.git.
func ownerOf(remote string) string {
	p := strings.Trim(remoteKey(remote), "/")
	parts := strings.Split(p, "/")
	if len(parts) < 3 { // host, owner, repo
		return ""
	}
	return parts[len(parts)-2]
}

// caseBlindHosts are the hosting services whose repository paths ignore
// case: https://github.com/Acme/Skills is github.com/acme/skills, and a
// second source for it would materialize the same skills twice. A host
// name ignores case everywhere (DNS), a path only where the server says
// so: a self-hosted server (Gitea, cgit, git-http-backend, a GitLab with
// its own rules) may keep Acme/ and acme/ apart on a case-sensitive file
// system, so its paths keep their case.
var caseBlindHosts = map[string]bool{"github.com": true, "gitlab.com": true, "bitbucket.org": true}

// remoteKey is a remote reduced to host and path, so that the spellings
// of one repository compare equal: the scheme, credentials, an SSH port
// (an HTTP one stays: another server), a trailing "/" or ".git", the case
// of the host and, on the
// hosts of caseBlindHosts, the case of the path are dropped
// ("git@github.com:Acme/skills.git" and "https://github.com/acme/skills"
// both give "github.com/acme/skills"). The credentials go first, also
// those net/url cannot parse: a password holding "/" made the owner a
// piece of it.
func remoteKey(remote string) string {
	r := repository.RedactURL(strings.TrimSpace(remote))
	host, port, p := "", "", r
	if u, err := url.Parse(r); err == nil && u.Scheme != "" && u.Host != "" {
		host, p = u.Hostname(), u.Path
		// An HTTP port given is another server (two on one test host),
		// unless it is the scheme's own (https://host:443/x is
		// https://host/x); an SSH one is the same server's other door
		// (ssh://host:2222/x and https://host/x), and is left out.
		scheme := strings.ToLower(u.Scheme)
		if pt := u.Port(); pt != "" && (scheme == "http" && pt != "80" || scheme == "https" && pt != "443") {
			port = ":" + pt
		}
	} else if strings.HasPrefix(r, "file://") {
		p = strings.TrimPrefix(r, "file://")
	} else if at, colon := strings.Index(r, "@"), strings.Index(r, ":"); colon > 0 && at < colon && !strings.Contains(r[:colon], "/") {
		// scp-like: [user@]host:path
		host, p = r[at+1:colon], r[colon+1:]
	}
	host = strings.ToLower(host)
	if caseBlindHosts[host] {
		p = strings.ToLower(p)
	}
	p = strings.TrimSuffix(strings.TrimRight(p, "/"), ".git")
	return host + port + "/" + strings.TrimLeft(path.Clean("/"+p), "/")
}

// Remote is the ability of settings that track a git remote: its URL as
// configured, the ref and the folder read.
type Remote interface {
	Remote() string
	Tracks() (ref, path string)
}

// Directory is the ability of settings that read a local directory.
type Directory interface {
	Directory() string
}

// Match returns the indexes in c.Sources of the sources e names: a source
// that tracks the same remote, or one that reads the same directory (e.Dir
// absolute). With exact, ref and path must be the same too (an empty one
// is the default branch and the whole repository); without, an empty ref
// or path in e matches any.
func (c *Config) Match(e Entry, exact bool) []int {
	var out []int
	for i, s := range c.Sources {
		if e.names(s, exact) {
			out = append(out, i)
		}
	}
	return out
}

// names reports whether e names the source s, as Match says.
func (e Entry) names(s Source, exact bool) bool {
	remote, isRemote := s.Settings.(Remote)
	dir, isDir := s.Settings.(Directory)
	switch {
	case e.Git != "" && isRemote:
		ref, p := remote.Tracks()
		if remoteKey(e.Git) != remoteKey(remote.Remote()) {
			return false
		}
		if (exact || e.Ref != "") && e.Ref != ref {
			return false
		}
		if (exact || e.Path != "") && cleanRepoPath(e.Path) != cleanRepoPath(p) {
			return false
		}
		return true
	case e.Dir != "" && isDir:
		return filepath.Clean(e.Dir) == dir.Directory()
	}
	return false
}

func cleanRepoPath(p string) string {
	return strings.Trim(path.Clean("/"+filepath.ToSlash(p)), "/")
}

// sourceItem returns the list entry of c.Sources[i]: the config loaded, so
// every entry became a source, in order.
func (d *document) sourceItem(i int) (item, error) {
	k, v, err := d.blockList("repositories")
	if err != nil {
		return item{}, err
	}
	if k == nil || i >= len(v.Content) {
		return item{}, fmt.Errorf("source %d: %w", i, ErrNotFound)
	}
	its, err := d.items(v, k.Line-1)
	if err != nil {
		return item{}, err
	}
	return its[i], nil
}

// setSourceList sets key (skills, exclude) of source i to a one-line
// list, replacing the value it had; an empty list removes the key.
func (d *document) setSourceList(i int, key string, values []string) error {
	it, err := d.sourceItem(i)
	if err != nil {
		return err
	}
	var repl []string
	if len(values) > 0 {
		list, err := flowList(values)
		if err != nil {
			return fmt.Errorf("source %s: %s: %w", d.cfg.Sources[i].Name, key, err)
		}
		// The entry's keys line up under its first one.
		repl = []string{strings.Repeat(" ", it.node.Column-1) + key + ": " + list}
	}
	if k, _ := mappingKey(it.node, key); k != nil {
		from := k.Line - 1
		to := min(d.blockEnd(from, k.Column-1, true), it.end) + 1
		d.splice(from, to, repl...)
		return nil
	}
	d.splice(it.end+1, it.end+1, repl...)
	return nil
}

// sourceIndex returns the index of the source named name.
func (d *document) sourceIndex(name string) (int, error) {
	var names []string
	for i, s := range d.cfg.Sources {
		if s.Name == name {
			return i, nil
		}
		names = append(names, s.Name)
	}
	has := "it has none"
	if len(names) > 0 {
		has = "it has: " + strings.Join(names, ", ")
	}
	return 0, fmt.Errorf("source %s: %w %s (%s)", name, ErrNotFound, d.file, has)
}

// RemoveRepository removes the entry of the source named name from the
// repositories: of the config file at file, keeping everything else as
// it was, and returns the source it removed. Removing the last entry
// leaves "repositories: []".
func RemoveRepository(env hostenv.Env, file, name string, kinds *repository.Registry) (Source, *Config, error) {
	d, err := openDocument(env, file, kinds)
	if err != nil {
		return Source{}, nil, err
	}
	i, err := d.sourceIndex(name)
	if err != nil {
		return Source{}, nil, err
	}
	it, err := d.sourceItem(i)
	if err != nil {
		return Source{}, nil, &Error{File: d.file, Errs: []error{err}}
	}
	d.splice(it.dash, it.end+1)
	if len(d.cfg.Sources) == 1 {
		k, _ := d.topKey("repositories")
		d.emptyList(k, false)
	}
	cfg, err := d.save()
	if err != nil {
		return Source{}, nil, err
	}
	return d.cfg.Sources[i], cfg, nil
}

// RemoveSkill removes skill from the skills: of the source named name in
// the config file at file; a source with no skills: list (it takes every
// skill) gets skill added to its exclude: instead. A skills: that does not
// name skill, or an exclude: that already does, is an error wrapping
// ErrNotFound; removing the last name of skills: is ErrLastSkill.
func RemoveSkill(env hostenv.Env, file, name, skill string, kinds *repository.Registry) (*Config, error) {
	d, err := openDocument(env, file, kinds)
	if err != nil {
		return nil, err
	}
	i, err := d.sourceIndex(name)
	if err != nil {
		return nil, err
	}
	s := d.cfg.Sources[i]
	if len(s.Skills) == 0 {
		// The source takes every skill it has: leave this one out.
		if slices.Contains(s.Exclude, skill) {
			return nil, fmt.Errorf("source %s already leaves %s out (exclude: %s): %w", name, skill, strings.Join(s.Exclude, ", "), ErrNotFound)
		}
		if err := d.setSourceList(i, "exclude", append(slices.Clone(s.Exclude), skill)); err != nil {
			return nil, &Error{File: d.file, Errs: []error{err}}
		}
		return d.save()
	}
	if !slices.Contains(s.Skills, skill) {
		return nil, fmt.Errorf("skill %s is not in the skills: of source %s (%s): %w", skill, name, strings.Join(s.Skills, ", "), ErrNotFound)
	}
	rest := slices.DeleteFunc(slices.Clone(s.Skills), func(n string) bool { return n == skill })
	if len(rest) == 0 {
		return nil, fmt.Errorf("%w: %s is the only skill source %s selects, and without it the source would take every skill; remove the source instead (skillsync remove %s)", ErrLastSkill, skill, name, name)
	}
	if err := d.setSourceList(i, "skills", rest); err != nil {
		return nil, &Error{File: d.file, Errs: []error{err}}
	}
	return d.save()
}

// Source resolves e as a config entry of a file in the folder base would
// be: named (derived as the config derives it when e.Name is ""), with
// its directory absolute and the defaults filled in.
func (e Entry) Source(base string, kinds *repository.Registry) (Source, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, kv := range [][2]string{{"name", e.Name}, {"git", e.Git}, {"ref", e.Ref}, {"path", e.Path}, {"dir", e.Dir}} {
		if kv[1] != "" {
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: kv[0]}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[1]})
		}
	}
	var rs rawSource
	if errs := rs.decode(m, "source", kinds); len(errs) > 0 {
		return Source{}, &ArgError{Err: errors.Join(errs...)}
	}
	rs.Skills, rs.Plugins = e.Skills, e.Plugins
	src, err := rs.resolve(base, "source", kinds)
	if err != nil {
		return src, &ArgError{Err: err}
	}
	return src, nil
}

// addPlugins adds the plugins an entry already there lacks to its
// plugins:, as AddRepository grows a skills: list; Plugins in the result
// names them.
func (d *document) addPlugins(i int, res AddResult, plugins []string) (AddResult, error) {
	s := d.cfg.Sources[i]
	for _, n := range plugins {
		if !slices.Contains(s.Plugins, n) && !slices.Contains(res.Plugins, n) {
			res.Plugins = append(res.Plugins, n)
		}
	}
	if len(res.Plugins) == 0 {
		return res, nil
	}
	if err := d.setSourceList(i, "plugins", append(slices.Clone(s.Plugins), res.Plugins...)); err != nil {
		return AddResult{}, err
	}
	var err error
	if res.Config, err = d.save(); err != nil {
		return AddResult{}, err
	}
	return res, nil
}

// addSkills makes the entry already there at i take the skills add asks
// for: remove --skill wrote a name into exclude: when the entry had no
// skills:, and without taking it out again an add of that skill would
// change nothing, for good. A name that only a glob of exclude: leaves
// out stays out: the glob is the user's own.
func (d *document) addSkills(i int, res AddResult, skills []string) (AddResult, error) {
	s := d.cfg.Sources[i]
	if len(skills) == 0 {
		return res, nil
	}
	exclude := slices.DeleteFunc(slices.Clone(s.Exclude), func(x string) bool {
		if slices.ContainsFunc(skills, func(n string) bool { return strings.EqualFold(n, x) }) {
			res.Included = append(res.Included, x)
			return true
		}
		return false
	})
	if len(s.Skills) > 0 {
		for _, n := range skills {
			if !slices.Contains(s.Skills, n) && !slices.Contains(res.Skills, n) {
				res.Skills = append(res.Skills, n)
			}
		}
	}
	if len(res.Skills) == 0 && len(res.Included) == 0 {
		return res, nil
	}
	if len(res.Skills) > 0 {
		if err := d.setSourceList(i, "skills", append(slices.Clone(s.Skills), res.Skills...)); err != nil {
			return AddResult{}, err
		}
	}
	if len(res.Included) > 0 {
		if err := d.reparse(); err != nil {
			return AddResult{}, &Error{File: d.file, Errs: []error{err}}
		}
		if err := d.setSourceList(i, "exclude", exclude); err != nil {
			return AddResult{}, err
		}
	}
	var err error
	if res.Config, err = d.save(); err != nil {
		return AddResult{}, err
	}
	return res, nil
}

// otherRef refuses e, a remote that is not in the config at its ref,
// when an entry reads the same remote and path at another ref and selects
// skills e would select too: a second entry with a derived name would
// cache every such skill twice, one copy shadowing the other, where the
// user most likely meant to pin, or move, the entry there. An e.Name
// given says two sources are meant.
func (d *document) otherRef(e Entry) error {
	if e.Git == "" || e.Name != "" {
		return nil
	}
	for _, s := range d.cfg.Sources {
		st, ok := s.Settings.(Remote)
		if !ok {
			continue
		}
		ref, p := st.Tracks()
		if remoteKey(e.Git) != remoteKey(st.Remote()) || cleanRepoPath(e.Path) != cleanRepoPath(p) || ref == e.Ref {
			continue
		}
		if !overlaps(Source{Skills: e.Skills, Plugins: e.Plugins}, s) {
			continue
		}
		where := fmt.Sprintf("%s:%d", d.file, s.Line)
		var msg string
		switch {
		case ref == "":
			msg = fmt.Sprintf("source %s is already there without a ref; to pin it, set ref: %s on that entry in %s", s.Name, e.Ref, where)
		case e.Ref == "":
			msg = fmt.Sprintf("source %s is already there at ref %s; to follow the default branch, take ref: out of that entry in %s", s.Name, ref, where)
		default:
			msg = fmt.Sprintf("source %s is already there at ref %s; to move it, set ref: %s on that entry in %s", s.Name, ref, e.Ref, where)
		}
		return &ArgError{Err: fmt.Errorf("%s, or skillsync remove %s first; --name NAME adds it as a second source beside it, caching the skills both take twice", msg, s.Name)}
	}
	return nil
}
