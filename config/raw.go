package config

import (
	"github.com/skillsync/skillsync/internal/hostenv"

	"cmp"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/skillsync/skillsync/internal/cronspec"
	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

// rawConfig mirrors the file's keys.
type rawConfig struct {
	kinds *repository.Registry
	// lines are the lines of the top-level keys; each section has its own.
	lines         keyLines
	Workspace     string
	workspaceLine int
	User          string
	Global        string
	Strict        bool
	Hidden        []string
	// hiddenLines are the lines of hidden:'s names, in its order.
	hiddenLines   []int
	MaxFileSize   *int64
	MaxSkillSize  *int64
	MaxSourceSize *int64
	MaxEntries    *int
	MaxFetchSize  *int64
	GitHost       string
	Repositories  []rawSource
	Targets       []rawTarget
	Curator       struct {
		StaleAfter, ArchiveAfter, MinIdle *time.Duration
		Layers                            []string
		MinHosts                          *int
		line                              int
		lines                             keyLines
	}
	Schedule struct {
		Sync, Curate, Import string
		FleetPush            string
		StatCheckEvery       *int
		line                 int
		lines                keyLines
	}
	Daemon struct {
		Listen string
		line   int
		lines  keyLines
	}
	Promotion struct {
		Approvers, Targets []string
		Auto               bool
		line               int
		lines              keyLines
	}
	Fleet rawFleet
	// noTarget is an empty targets: marked NoTargetComment.
	noTarget bool
}

type rawTarget struct {
	Dir      string
	Mode     string
	AgentsMD string
	line     int
}

type rawSource struct {
	Name    string
	Timeout time.Duration
	Skills  []string
	Exclude []string
	Plugins []string
	line    int
	// kind is the one kind whose location key the entry sets, with the
	// settings its keys decoded into; kinds counts the kinds whose
	// location keys it sets, and others names the other kinds whose own
	// keys it sets.
	kind     repository.Driver
	settings repository.Settings
	kinds    int
	others   []repository.Driver
}

func (r *rawConfig) fields() fields {
	return fields{
		"workspace": nested(func(n *yaml.Node) []error {
			r.workspaceLine = n.Line
			if err := n.Decode(&r.Workspace); err != nil {
				return []error{fmt.Errorf("line %d: key \"workspace\" in the config: %s", n.Line, yamlMessage(err))}
			}
			return nil
		}),
		"hidden": nested(func(n *yaml.Node) []error {
			if msg := decodeValue("hidden", n, &r.Hidden); msg != "" {
				return []error{fmt.Errorf("line %d: key \"hidden\" in the config: %s", n.Line, msg)}
			}
			r.hiddenLines = itemLines(n)
			return nil
		}),
		"user":            &r.User,
		"global":          &r.Global,
		"strict":          &r.Strict,
		"max_file_size":   hinted{&r.MaxFileSize, limitWant(DefaultMaxFileSize)},
		"max_skill_size":  hinted{&r.MaxSkillSize, limitWant(repository.DefaultMaxSkillSize)},
		"max_source_size": hinted{&r.MaxSourceSize, limitWant(repository.DefaultMaxSourceSize)},
		"max_entries":     hinted{&r.MaxEntries, entriesWant},
		"max_fetch_size":  hinted{&r.MaxFetchSize, limitWant(defaultMaxFetchSize)},
		// where skillsync add resolves owner/repo
		"default_git_host": &r.GitHost,
		"curator": nested(func(n *yaml.Node) []error {
			c := &r.Curator
			c.line = n.Line
			var errs []error
			c.lines, errs = decodeMappingLines(n, "curator", fields{
				"stale_after": &c.StaleAfter, "archive_after": &c.ArchiveAfter, "min_idle": &c.MinIdle, "layers": &c.Layers, "min_hosts": &c.MinHosts,
			})
			return errs
		}),
		"schedule": nested(func(n *yaml.Node) []error {
			r.Schedule.line = n.Line
			var errs []error
			r.Schedule.lines, errs = decodeMappingLines(n, "schedule", fields{"sync": &r.Schedule.Sync, "curate": &r.Schedule.Curate, "import": &r.Schedule.Import, "stat_check_every": &r.Schedule.StatCheckEvery, "fleet_push": &r.Schedule.FleetPush})
			return errs
		}),
		"daemon": nested(func(n *yaml.Node) []error {
			r.Daemon.line = n.Line
			var errs []error
			r.Daemon.lines, errs = decodeMappingLines(n, "daemon", fields{"listen": &r.Daemon.Listen})
			return errs
		}),
		"promotion": nested(func(n *yaml.Node) []error {
			p := &r.Promotion
			p.line = n.Line
			var errs []error
			p.lines, errs = decodeMappingLines(n, "promotion", fields{"approvers": &p.Approvers, "targets": &p.Targets, "auto": &p.Auto})
			return errs
		}),
		"fleet": nested(r.Fleet.decode),
		"targets": nested(func(n *yaml.Node) []error {
			r.noTarget = n.Kind == yaml.SequenceNode && len(n.Content) == 0 && strings.Contains(n.LineComment, NoTargetComment)
			return decodeList(n, "targets", func(i int, n *yaml.Node) []error {
				r.Targets = append(r.Targets, rawTarget{line: n.Line})
				t := &r.Targets[len(r.Targets)-1]
				return decodeMapping(n, fmt.Sprintf("targets[%d]", i), fields{"dir": &t.Dir, "mode": &t.Mode, "agents_md": &t.AgentsMD})
			})
		}),
		"repositories": nested(func(n *yaml.Node) []error {
			return decodeList(n, "repositories", func(i int, n *yaml.Node) []error {
				r.Repositories = append(r.Repositories, rawSource{line: n.Line})
				return r.Repositories[len(r.Repositories)-1].decode(n, fmt.Sprintf("repositories[%d]", i), r.kinds)
			})
		}),
	}
}

// decode decodes one repositories: entry: its common keys, and the keys
// of its kind, the one whose location key it sets. The keys of the other
// kinds are decoded too, so that a key of the wrong kind is named as such
// (resolve reports it), not as unknown.
func (rs *rawSource) decode(n *yaml.Node, where string, kinds *repository.Registry) []error {
	f := fields{
		"name":    &rs.Name,
		"timeout": &rs.Timeout,
		"skills":  &rs.Skills,
		"exclude": &rs.Exclude,
		"plugins": &rs.Plugins,
	}
	set := map[string]bool{}
	if m := n; m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			set[m.Content[i].Value] = true
		}
	}
	for _, k := range kinds.Kinds() {
		d, _ := kinds.Lookup(k)
		st := d.Settings()
		keys := st.Keys()
		mine := slices.ContainsFunc(d.Keys, func(k string) bool { return set[k] })
		if mine {
			rs.kinds++
			rs.kind, rs.settings = d, st
		} else if slices.ContainsFunc(keys, func(k repository.Key) bool { return set[k.Name] }) {
			rs.others = append(rs.others, d)
		}
		for name, v := range keyFields(keys, where) {
			if _, taken := f[name]; !taken || mine {
				f[name] = v
			}
		}
	}
	return decodeMapping(n, where, f)
}

// keyFields turns a kind's keys into fields, a nested mapping into a
// nested decoder.
func keyFields(keys []repository.Key, where string) fields {
	f := fields{}
	for _, k := range keys {
		if sub, ok := k.Value.([]repository.Key); ok {
			at := where + "." + k.Name
			f[k.Name] = nested(func(n *yaml.Node) []error { return decodeMapping(n, at, keyFields(sub, at)) })
			continue
		}
		f[k.Name] = k.Value
	}
	return f
}

// resolve checks the raw config and makes its paths absolute.
func (r *rawConfig) resolve(env hostenv.Env, base string) (*Config, []error) {
	var errs []error
	cfg := &Config{
		Workspace: absPath(env, base, r.Workspace, base),
		User:      r.User,
		Global:    absPath(env, base, r.Global, defaultGlobal(env)),
		Strict:    r.Strict,
		Hidden:    r.Hidden,
		Limits:    Limits{MaxFileSize: DefaultMaxFileSize},

		DefaultGitHost: r.GitHost,
	}
	for _, f := range [2][2]string{{"workspace", r.Workspace}, {"global", r.Global}} {
		field, value := f[0], f[1]
		if noHome(env, value) {
			errs = append(errs, fmt.Errorf("line %d: %s %q is below the home directory, and there is none here (HOME is not set): set HOME, or name the folder in full", r.lines.at(field, 0), field, value))
		}
		if err := repository.Literal(value); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %s: %w", r.lines.at(field, 0), field, err))
		}
	}
	if err := checkWorkspace(cfg.Workspace); err != nil {
		errs = append(errs, fmt.Errorf("line %d: %w: name a folder, or leave workspace: out for the config's own", r.workspaceLine, err))
	}
	if err := checkWorkspaceRoot(env, cfg.Workspace); err != nil {
		if r.workspaceLine > 0 {
			errs = append(errs, fmt.Errorf("line %d: workspace %s %w; name a folder of its own, such as a project's", r.workspaceLine, cfg.Workspace, err))
		} else {
			errs = append(errs, fmt.Errorf("the workspace, the config's folder %s, %w; move the config into a folder of its own, or set workspace:", cfg.Workspace, err))
		}
	}
	for _, l := range []struct {
		key  string
		v    *int64
		dst  *int64
		want string
	}{
		{"max_file_size", r.MaxFileSize, &cfg.Limits.MaxFileSize, limitWant(DefaultMaxFileSize)},
		{"max_skill_size", r.MaxSkillSize, &cfg.Limits.MaxSkillSize, limitWant(repository.DefaultMaxSkillSize)},
		{"max_source_size", r.MaxSourceSize, &cfg.Limits.MaxSourceSize, limitWant(repository.DefaultMaxSourceSize)},
		{"max_fetch_size", r.MaxFetchSize, &cfg.Limits.MaxFetchSize, limitWant(defaultMaxFetchSize)},
	} {
		if l.v == nil {
			continue
		}
		if *l.v <= 0 {
			errs = append(errs, fmt.Errorf("line %d: %s %d: a limit is %s; leave the key out for that default", r.lines.at(l.key, 0), l.key, *l.v, l.want))
		}
		*l.dst = *l.v
	}
	if r.MaxEntries != nil {
		if *r.MaxEntries <= 0 {
			errs = append(errs, fmt.Errorf("line %d: max_entries %d: a limit is %s; leave the key out for that default", r.lines.at("max_entries", 0), *r.MaxEntries, entriesWant))
		}
		cfg.Limits.MaxEntries = *r.MaxEntries
	}
	if r.User != "" && !oneComponent(r.User) {
		errs = append(errs, fmt.Errorf("line %d: user %q is not one folder name: write a name such as alice, whose skills are then in <workspace>/alice/skills/", r.lines.at("user", 0), r.User))
	}
	if r.GitHost != "" {
		if _, err := normalGitHost(r.GitHost); err != nil {
			errs = append(errs, fmt.Errorf("line %d: default_git_host %q: want a host, such as github.com or https://git.example.com/", r.lines.at("default_git_host", 0), redactArg(r.GitHost)))
		}
	}
	var names, renamed []string
	var lines, entries []int
	named := map[string]int{} // a name set by name:, to its index
	for i, rs := range r.Repositories {
		src, err := rs.resolve(base, fmt.Sprintf("line %d: repositories[%d]", rs.line, i), r.kinds)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if rs.Name != "" {
			// Two names the user chose alike: renaming one would move its
			// cache, lock entry and usage under a name nobody chose.
			if j, ok := named[src.Name]; ok {
				errs = append(errs, fmt.Errorf("line %d: repositories[%d]: name %q is already repositories[%d]'s (line %d); give each source a name of its own",
					rs.line, i, rs.Name, j, r.Repositories[j].line))
				continue
			}
			named[src.Name] = i
		}
		if rs.Name != "" && src.Name != rs.Name {
			// The name is a folder of the cache and a key of the lock and
			// the usage file: say what it became, before it is relied on.
			renamed = append(renamed, fmt.Sprintf("line %d: repositories[%d]: name %q is used as %q (a name is one folder name of a-z, 0-9, '.', '_' and '-', not starting with '.'); set that name to keep it", rs.line, i, rs.Name, src.Name))
		}
		names = append(names, src.Name)
		lines = append(lines, rs.line)
		entries = append(entries, i)
		cfg.Sources = append(cfg.Sources, src)
	}
	dups := findDuplicates(cfg.Sources)
	repeats := make([]bool, len(cfg.Sources))
	for _, d := range dups {
		repeats[d.Later] = true
	}
	unique, _ := repository.UniqueNames(names)
	for i := range cfg.Sources {
		// A source that repeats an earlier one is better removed than
		// named anew: its own warning says so.
		if unique[i] != names[i] && !repeats[i] {
			renamed = append(renamed, fmt.Sprintf("line %d: the source's name %q is an earlier source's too: it is used as %q; set name: to choose another", lines[i], names[i], unique[i]))
		}
		cfg.Sources[i].Name = unique[i]
	}
	for _, d := range dups {
		renamed = append(renamed, duplicateWarning(cfg.Sources[d.Later], cfg.Sources[d.Earlier], entries[d.Later], entries[d.Earlier]))
	}
	cfg.Warnings = renamed
	r.resolveHidden(cfg)
	cfg.NoTarget = r.noTarget
	for i, t := range r.Targets {
		where := fmt.Sprintf("line %d: targets[%d]", t.line, i)
		mode := TargetMode(cmp.Or(t.Mode, string(ModeCopy)))
		switch {
		case t.AgentsMD != "" && (t.Dir != "" || t.Mode != ""):
			errs = append(errs, fmt.Errorf("%s: agents_md names a file and takes no dir or mode; make them two entries", where))
		case noHome(env, t.AgentsMD) || noHome(env, t.Dir):
			errs = append(errs, fmt.Errorf("%s: %q is below the home directory, and there is none here (HOME is not set): set HOME, or name the folder in full", where, t.AgentsMD+t.Dir))
		case repository.Literal(t.AgentsMD+t.Dir) != nil:
			errs = append(errs, fmt.Errorf("%s: %w", where, repository.Literal(t.AgentsMD+t.Dir)))
		case t.AgentsMD != "":
			cfg.AgentsMD = append(cfg.AgentsMD, AgentsMDTarget{Path: absPath(env, cfg.Workspace, t.AgentsMD, ""), Line: t.line})
		case t.Dir == "":
			errs = append(errs, fmt.Errorf("%s: dir (a folder agents read) or agents_md (a file such as AGENTS.md) is required", where))
		case mode != ModeCopy && mode != ModeSymlink:
			errs = append(errs, fmt.Errorf("%s: mode %q: use copy or symlink", where, t.Mode))
		default:
			cfg.Targets = append(cfg.Targets, Target{Dir: absPath(env, cfg.Workspace, t.Dir, ""), Mode: mode, Line: t.line})
		}
	}
	errs = append(errs, checkTargets(env, cfg)...)
	errs = append(errs, r.resolveCurator(cfg)...)
	errs = append(errs, r.resolvePromotion(cfg)...)
	errs = append(errs, r.resolveFleet(env, base, cfg)...)
	return cfg, errs
}

// resolveHidden checks hidden: as skill names are checked, with
// warnings: a name that could be no skill's, once put in the form skill
// names take (skill.NormalizeName), hides nothing; a name there twice
// (compared as the catalog compares names) does no harm; a glob is read
// as a name.
func (r *rawConfig) resolveHidden(cfg *Config) {
	first := map[string]int{} // a name's key to its index
	for i, h := range r.Hidden {
		line := r.hiddenLineOf(i)
		if !skill.ValidName(skill.NormalizeName(h)) {
			// A warning, not an error: such a name loaded before
			// skillsync checked it, and a config that loaded must not
			// stop a daemon after an upgrade.
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("line %d: hidden: %q is not a skill name (one folder name: not empty, no / or \\, not starting with '.', no control or formatting character, at most 255 bytes), so it hides nothing; write the name of a skill, such as pdf", line, h))
			continue
		}
		if strings.ContainsAny(h, "*?[") {
			// skills: takes globs, and hidden: looks like it.
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("line %d: hidden: %q is read as a name, not a pattern (hidden: takes no globs): it hides only a skill of exactly that name; list each skill to hide", line, h))
		}
		k := layering.Key(h)
		if j, dup := first[k]; dup {
			where := ""
			if jl := r.hiddenLineOf(j); jl != line {
				where = fmt.Sprintf(" on line %d", jl)
			}
			why := ""
			if r.Hidden[j] != h {
				why = " (names compare without case)"
			}
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("line %d: hidden: %q is there already, as %q%s%s; remove one", line, h, r.Hidden[j], where, why))
			continue
		}
		first[k] = i
	}
}

// hiddenLineOf is the line of hidden:'s i-th name, else of the key.
func (r *rawConfig) hiddenLineOf(i int) int {
	if i < len(r.hiddenLines) {
		return r.hiddenLines[i]
	}
	return r.lines.at("hidden", 0)
}

// itemLines returns the line of every item of the list n; nil when n is
// no list.
func itemLines(n *yaml.Node) []int {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.SequenceNode {
		return nil
	}
	lines := make([]int, len(n.Content))
	for i, v := range n.Content {
		lines[i] = v.Line
	}
	return lines
}

// resolvePromotion checks the promotion gate: every target is a local
// layer that is on or a configured source. Whether that source's kind
// takes promotions is decided when one is made.
func (r *rawConfig) resolvePromotion(cfg *Config) []error {
	p := r.Promotion
	cfg.Promotion = Promotion{Approvers: p.Approvers, Targets: p.Targets, Auto: p.Auto, Line: p.line}
	var errs []error
	for _, a := range p.Approvers {
		if strings.TrimSpace(a) == "" {
			errs = append(errs, fmt.Errorf("line %d: promotion: an approver is empty: name each one, or leave approvers: out to let anyone named approve", p.lines.at("approvers", p.line)))
		}
	}
	for _, t := range p.Targets {
		at := p.lines.at("targets", p.line)
		switch {
		case t == PromoteWorkspace:
		case t == PromoteUser:
			if cfg.User == "" {
				errs = append(errs, fmt.Errorf("line %d: promotion: target user needs user: set (the user layer is off)", at))
			}
		case !slices.ContainsFunc(cfg.Sources, func(s Source) bool { return s.Name == t }):
			errs = append(errs, fmt.Errorf("line %d: promotion: target %q is not workspace, user or the name of a source in repositories:", at, t))
		}
	}
	return errs
}

// resolveCurator checks the curator and schedule sections.
func (r *rawConfig) resolveCurator(cfg *Config) []error {
	var errs []error
	c := r.Curator
	cfg.Curator = DefaultCuration()
	bad := false
	for _, d := range []struct {
		key  string
		v    *time.Duration
		dst  *time.Duration
		zero bool // 0 is a value of its own
		want string
	}{
		{"stale_after", c.StaleAfter, &cfg.Curator.StaleAfter, false, "a positive duration, such as 720h (30 days, the default)"},
		{"archive_after", c.ArchiveAfter, &cfg.Curator.ArchiveAfter, false, "a positive duration, such as 2160h (90 days, the default)"},
		{"min_idle", c.MinIdle, &cfg.Curator.MinIdle, true, "a duration of 0 (no wait) or more, such as 2h (the default)"},
	} {
		if d.v == nil {
			continue
		}
		*d.dst = *d.v
		if *d.v < 0 || *d.v == 0 && !d.zero {
			errs, bad = append(errs, fmt.Errorf("line %d: curator: %s %s: write %s", c.lines.at(d.key, c.line), d.key, *d.v, d.want)), true
		}
	}
	if cur := cfg.Curator; !bad && cur.ArchiveAfter < cur.StaleAfter {
		key := "archive_after"
		if c.ArchiveAfter == nil {
			key = "stale_after" // the default archive_after is the shorter
		}
		errs = append(errs, fmt.Errorf("line %d: curator: archive_after (%s) is shorter than stale_after (%s): a skill is stale before it is archived; make archive_after the longer", c.lines.at(key, c.line), cur.ArchiveAfter, cur.StaleAfter))
	}
	if c.Layers != nil {
		cfg.Curator.Layers = c.Layers
		for _, l := range c.Layers {
			if l != "workspace" && l != "user" && l != "marketplace" {
				errs = append(errs, fmt.Errorf("line %d: curator: layer %q: use workspace, user or marketplace", c.lines.at("layers", c.line), l))
			}
		}
	}
	cfg.Schedule = Schedule{Sync: cmp.Or(r.Schedule.Sync, DefaultSyncSchedule), Curate: cmp.Or(r.Schedule.Curate, DefaultCurateSchedule),
		Import: cmp.Or(r.Schedule.Import, DefaultImportSchedule), StatCheckEvery: DefaultStatCheckEvery}
	if n := r.Schedule.StatCheckEvery; n != nil {
		if *n < 0 {
			errs = append(errs, fmt.Errorf("line %d: schedule: stat_check_every %d: write 0 (never) or a count of syncs, such as %d (the default)", r.Schedule.lines.at("stat_check_every", r.Schedule.line), *n, DefaultStatCheckEvery))
		}
		cfg.Schedule.StatCheckEvery = *n
	}
	for _, f := range [][2]string{{"sync", cfg.Schedule.Sync}, {"curate", cfg.Schedule.Curate}, {"import", cfg.Schedule.Import}} {
		if err := cronspec.Check(f[1]); err != nil {
			errs = append(errs, fmt.Errorf("line %d: schedule.%s %q does not parse: %w", r.Schedule.lines.at(f[0], r.Schedule.line), f[0], f[1], err))
		}
	}
	cfg.Daemon.Listen = r.Daemon.Listen
	if l := r.Daemon.Listen; l != "" {
		if _, _, err := net.SplitHostPort(l); err != nil {
			if _, _, err2 := net.SplitHostPort(":" + l); err2 != nil {
				errs = append(errs, fmt.Errorf("line %d: daemon: listen %q is not host:port or a port, such as 127.0.0.1:9090 or 9090: %w", r.Daemon.lines.at("listen", r.Daemon.line), l, err))
			}
		}
	}
	return errs
}

// resolve checks one repositories: entry and names it.
func (rs rawSource) resolve(base, where string, kinds *repository.Registry) (Source, error) {
	src := Source{Kind: rs.kind.Kind, Settings: rs.settings, Timeout: rs.Timeout, Line: rs.line, Skills: rs.Skills, Exclude: rs.Exclude, Plugins: rs.Plugins}
	if rs.kinds != 1 {
		var usage []string
		for _, k := range kinds.Kinds() {
			d, _ := kinds.Lookup(k)
			usage = append(usage, d.Usage)
		}
		return src, fmt.Errorf("%s: set exactly one of %s", where, orList(usage))
	}
	for _, d := range rs.others {
		var own []string
		for _, k := range d.Settings().Keys() {
			if !slices.Contains(d.Keys, k.Name) {
				own = append(own, k.Name)
			}
		}
		return src, fmt.Errorf("%s: %s belong to %s: sources", where, andList(own), d.Keys[0])
	}
	if rs.Timeout < 0 {
		return src, fmt.Errorf("%s: timeout %s: write a positive duration, such as 60s", where, rs.Timeout)
	}
	sel := repository.Options{Include: rs.Skills, Exclude: rs.Exclude, Plugins: rs.Plugins}
	if err := sel.Validate(); err != nil {
		return src, fmt.Errorf("%s: %w", where, err)
	}
	derived, err := rs.settings.Resolve(base)
	if err != nil {
		return src, fmt.Errorf("%s: %w", where, err)
	}
	src.Name = repository.SourceName(cmp.Or(rs.Name, derived))
	return src, nil
}

// defaultMaxFetchSize is the git kind's default max_fetch_size (config
// names no kind), for the messages about that key.
const defaultMaxFetchSize = 1 << 30

// entriesWant says what max_entries takes.
var entriesWant = fmt.Sprintf("a positive number of directory entries, such as %d (the default)", repository.DefaultMaxEntries)

// limitWant says what a size limit takes, with its default as the
// example: "a positive number of bytes, such as 10485760 (10 MiB, the
// default)".
func limitWant(def int64) string {
	return fmt.Sprintf("a positive number of bytes, such as %d (%s, the default)", def, sizeWords(def))
}

// sizeWords writes n bytes in the largest binary unit that divides it.
func sizeWords(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// andList joins "a, b and c"; orList "a, b or c".
func andList(s []string) string { return joinLast(s, " and ") }
func orList(s []string) string  { return joinLast(s, " or ") }

func joinLast(s []string, last string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + last + s[len(s)-1]
}

// oneComponent reports whether s is one directory name.
func oneComponent(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}

// noHome reports whether p starts with ~ where no home directory is
// known: it would be taken as a folder named ~ in the workspace.
func noHome(env hostenv.Env, p string) bool {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return false
	}
	_, err := env.HomeDir()
	return err != nil
}
