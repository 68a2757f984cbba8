package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillsync/skillsync"
	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/skill"
)

type addOptions struct {
	source  string
	name    string
	ref     string
	path    string
	skills  []string
	plugins []string
	agents  []string
	global  bool
	noSync  bool
	list    bool
}

func newAddCommand(a *app, runF func(context.Context, *addOptions) error) *cobra.Command {
	opts := &addOptions{}
	cmd := &cobra.Command{
		Use:   "add SOURCE",
		Short: "Add a repository of skills to skillsync.yaml and sync",
		Long: `Add a repository to the repositories: of skillsync.yaml (writing the starter
config first when there is none) and sync, so its skills reach the targets.
The file is edited in place: comments, blank lines and order stay as they are.

SOURCE is one of:
  owner/repo, owner/repo@REF, owner/repo/PATH@REF
      a repository on GitHub, or on the host $SKILLSYNC_GIT_HOST or
      default_git_host: in the config names
  https://host/owner/repo, git@host:owner/repo.git, ssh://..., file://...
      any git remote
  https://github.com/owner/repo/tree/REF/PATH (or GitLab's /-/tree/REF/PATH)
      a folder's web page: the ref and the path come from it
  ./dir, ../dir, /abs/dir, ~/dir
      a local directory of skills, read in place

--skill selects skills by name or glob (skills: in the config); without it
every skill of the repository is taken. --plugin NAME takes the skills of
one plugin group of the repository's .claude-plugin/marketplace.json
(plugins: in the config, so every sync keeps to it); repeat it for more.
A repository already in the config (the same remote, ref and path) is not
added twice: its selection grows by the --skill or --plugin names it
lacks, and a --skill its exclude: lists (remove --skill wrote it there)
is taken out of it. The same remote and path at another ref, taking
skills the entry there takes, is refused: set ref: on that entry, or give
--name to add a second source on purpose. --agent adds the folders those agents read as targets, as init
--agent does; without --agent, a workspace without targets looks for the
installed agents as init does. With -g (--global) add edits
the user-wide config and syncs into the agents' user folders.

Its sync, like skillsync sync, moves every source to its newest revision,
not only the new one (skillsync.lock records them; only sync --frozen keeps
to it): pin a source with --ref or ref: in the config.

--list shows the skills SOURCE offers and changes nothing, like ls-remote.`,
		Example: `  skillsync add anthropics/skills --skill pdf --skill docx
  skillsync add anthropics/skills --plugin document-skills
  skillsync add acme/team-skills@v1.4.0 --agent claude-code --agent cursor
  skillsync add https://github.com/acme/skills/tree/main/skills/release-notes
  skillsync add git@gitlab.example.com:platform/skills.git --name platform
  skillsync add ../shared-skills --no-sync
  skillsync add acme/team-skills --list
  SKILLSYNC_GIT_HOST=https://git.example.com skillsync add platform/skills`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			opts.source = argv[0]
			opts.global = a.global
			return pick(runF, a.runAdd)(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.name, "name", "", "source name (default: the repository's or the directory's name)")
	f.StringVar(&opts.ref, "ref", "", "branch, tag or commit to take (default: the remote's default branch)")
	f.StringVar(&opts.path, "path", "", "folder of skills inside the repository")
	f.StringArrayVarP(&opts.skills, "skill", "s", nil, "take only this skill (a name or a glob such as 'pdf-*'); repeat for more")
	f.StringArrayVar(&opts.plugins, "plugin", nil, "take only the skills of this plugin of the source's .claude-plugin/marketplace.json; repeat for more")
	f.StringArrayVarP(&opts.agents, "agent", "a", nil, "also add this agent's skills folder as a target ('*' for every agent; see skillsync agents)")
	f.BoolVar(&opts.noSync, "no-sync", false, "edit the config only; run skillsync sync later")
	f.BoolVarP(&opts.list, "list", "l", false, "list the skills SOURCE offers and change nothing")
	return cmd
}

// configFile is the config file the editing commands change: --config,
// else $SKILLSYNC_CONFIG, else ./skillsync.yaml. name is as given, for
// messages; file is absolute, for the edits.
func (a *app) configFile() (name, file string, err error) {
	name = cmp.Or(a.configPath, a.env.Getenv("SKILLSYNC_CONFIG"), config.FileName)
	file, err = a.abs(name)
	return name, file, err
}

// shown is p, a path the command worked out from the config file it was
// given as name, as the user would write it: relative to the working
// directory when name was.
func (a *app) shown(name, p string) string {
	if filepath.IsAbs(name) {
		return p
	}
	wd, err := a.env.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil {
		return rel
	}
	return p
}

// addJSON is add's --json output.
type addJSON struct {
	Config  string `json:"config"`
	Created bool   `json:"created"`
	Source  string `json:"source"`
	Added   bool   `json:"added"`
	// Skills are the names added to the selection of a source already
	// there.
	Skills  []string        `json:"skills"`
	Targets []string        `json:"targets"`
	Sync    *syncReportJSON `json:"sync"`
}

func (a *app) runAdd(ctx context.Context, opts *addOptions) error {
	if opts.list {
		return a.lsRemote(ctx, &lsRemoteOptions{source: opts.source, ref: opts.ref, path: opts.path})
	}
	for _, n := range opts.skills {
		if !skill.ValidName(n) {
			return usageError("--skill %q is not a skill name", n)
		}
	}
	for _, n := range opts.plugins {
		if strings.TrimSpace(n) == "" {
			return usageError("--plugin needs a plugin name")
		}
	}
	named, agents, err := explicitAgents(opts.agents)
	if err != nil {
		return err
	}
	targets, skipped, err := agent.Targets(a.env, agents, opts.global)
	if err != nil {
		return usageError("--agent: %w", err)
	}
	name, file, err := a.configFile()
	if err != nil {
		return err
	}
	if name == config.FileName {
		// Neither --config, $SKILLSYNC_CONFIG nor -g: a config above is
		// the workspace meant, not a second one to start here.
		if above := config.Above(filepath.Dir(file)); above != "" {
			if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
				return nestedWorkspace(above)
			}
		}
	}
	out := addJSON{Config: name, Skills: []string{}, Targets: []string{}}
	cfg, err := a.configOrDefault(file)
	if err != nil {
		return err
	}
	entry, err := a.parseSource(opts.source, cfg.DefaultGitHost, opts.ref, opts.path)
	if err != nil {
		return err
	}
	entry.Name, entry.Skills, entry.Plugins = opts.name, opts.skills, opts.plugins
	if !opts.noSync {
		// A source that cannot be read, or lacks a skill asked for, is not
		// written into the config, where every later sync would fail on it.
		if err := a.checkOffer(ctx, cfg, entry); err != nil {
			return err
		}
	}
	if !named && len(cfg.Targets) == 0 && len(cfg.AgentsMD) == 0 && !cfg.NoTarget {
		if targets, err = a.detectTargets("add", opts.source); err != nil {
			return err
		}
	}
	if out.Created, err = a.ensureConfig(file, named && len(targets) == 0); err != nil {
		return err
	}
	res, err := config.AddRepository(a.env, file, entry, skillsync.Kinds())
	if err != nil {
		return err
	}
	out.Source, out.Added, out.Skills = res.Source, res.Added, orEmpty(selected(res))
	for _, s := range skipped {
		a.warn("agent %s %s", s, agent.WhySkipped(s, opts.global))
	}
	if out.Targets, err = a.addTargets(file, targets); err != nil {
		return err
	}
	if !a.json {
		if out.Created {
			fmt.Fprintf(a.stdout, "wrote %s\n", name)
		}
		switch {
		case res.Added:
			fmt.Fprintf(a.stdout, "%s: added source %s (%s)\n", name, res.Source, safe(describeEntry(entry)))
		case len(res.Skills) > 0 || len(res.Included) > 0:
			var did []string
			if len(res.Included) > 0 {
				did = append(did, "its exclude: no longer leaves out "+strings.Join(res.Included, ", "))
			}
			if len(res.Skills) > 0 {
				did = append(did, "its skills: now takes "+strings.Join(res.Skills, ", ")+" too")
			}
			fmt.Fprintf(a.stdout, "%s: source %s is already there; %s\n", name, res.Source, safe(strings.Join(did, "; ")))
		case len(res.Plugins) > 0:
			fmt.Fprintf(a.stdout, "%s: source %s is already there; its plugins: now takes %s too\n", name, res.Source, safe(strings.Join(res.Plugins, ", ")))
		default:
			fmt.Fprintf(a.stdout, "%s: source %s is already there (%s); nothing to add\n", name, res.Source, safe(describeEntry(entry)))
		}
		for _, t := range out.Targets {
			fmt.Fprintf(a.stdout, "%s: added target %s (%s)\n", name, t, readers(targets, t))
		}
	}
	if opts.noSync {
		if a.json {
			return writeJSON(a.stdout, out)
		}
		fmt.Fprintln(a.stdout, "run skillsync sync to fetch it and place its skills")
		return nil
	}
	report, _, err := a.syncAfterEdit(ctx, false)
	out.Sync = syncReportOf(report, err)
	if a.json && out.Sync != nil {
		if werr := writeJSON(a.stdout, out); werr != nil {
			return werr
		}
	}
	return err
}

// selected is what an add made a source already there take: the names
// added to its skills: and those taken out of its exclude:, each once.
func selected(res config.AddResult) []string {
	out := slices.Clone(res.Skills)
	for _, n := range res.Included {
		if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, n) }) {
			out = append(out, n)
		}
	}
	return out
}

// configOrDefault loads the config at file, or the built-in default when
// there is none yet (add writes the starter then).
func (a *app) configOrDefault(file string) (*config.Config, error) {
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		return config.DefaultIn(a.env, skillsync.Kinds())
	}
	return config.LoadIn(a.env, file, skillsync.Kinds())
}

// checkOffer reads what entry offers, as ls-remote does, and refuses a
// source without skills or without a skill --skill names.
func (a *app) checkOffer(ctx context.Context, cfg *config.Config, entry config.Entry) error {
	src, err := entry.Source(cfg.Workspace, skillsync.Kinds())
	if err != nil {
		return err
	}
	offer, err := a.preview(ctx, cfg, src)
	if err != nil {
		return fmt.Errorf("%w; nothing was added (--no-sync adds it unchecked)", err)
	}
	for _, p := range offer.Problems {
		if p.Rule == "plugin-unknown" {
			return usageError("%s: %s; nothing was added", safe(describeEntry(entry)), safe(p.Message))
		}
	}
	var names []string
	for _, s := range offer.Skills {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		a.reportProblems(offer.Problems)
		if slices.ContainsFunc(offer.Problems, func(p skill.Problem) bool { return p.Level == skill.Error && p.Path != "" }) {
			// Skills were found, and refused: the problems above say why.
			return fmt.Errorf("%s offers no valid skill at %s; nothing was added (the problems above say what to fix; --no-sync adds it anyway)", safe(describeEntry(entry)), shortRev(offer.Revision))
		}
		return fmt.Errorf("%s offers no skill at %s; nothing was added (--path names its folder of skills; --no-sync adds it anyway)", safe(describeEntry(entry)), shortRev(offer.Revision))
	}
	for _, want := range entry.Skills {
		if !slices.ContainsFunc(names, func(n string) bool { return selects(want, n) }) {
			return usageError("%s offers no skill %s (it has: %s); nothing was added", safe(describeEntry(entry)), safe(want), safe(strings.Join(names, ", ")))
		}
	}
	return nil
}

// selects reports whether the --skill value want, a name or a glob,
// selects the skill name; names compare ignoring case.
func selects(want, name string) bool {
	if strings.EqualFold(want, name) {
		return true
	}
	ok, err := path.Match(strings.ToLower(want), strings.ToLower(name))
	return err == nil && ok
}

// ensureConfig writes the starter config at file when there is none and
// reports whether it did; noTarget is writeStarter's.
func (a *app) ensureConfig(file string, noTarget bool) (bool, error) {
	if _, err := os.Lstat(file); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("config %s: %w", file, err)
	}
	_, err := a.writeStarter(file, false, noTarget)
	return true, err
}

// parseSource reads SOURCE as add, remove and ls-remote take it, with
// --ref and --path applied: a flag may fill in what SOURCE leaves out, not
// contradict it.
func (a *app) parseSource(arg, configuredHost, ref, path string) (config.Entry, error) {
	host, err := config.GitHost(a.env, configuredHost)
	if err != nil {
		return config.Entry{}, err
	}
	e, err := config.ParseSource(a.env, arg, host)
	if err != nil {
		return config.Entry{}, err
	}
	for _, f := range []struct {
		flag, value string
		dst         *string
	}{{"--ref", ref, &e.Ref}, {"--path", path, &e.Path}} {
		switch {
		case f.value == "":
		case e.Dir != "":
			return config.Entry{}, usageError("%s: %s is a local directory, not a git repository", f.flag, arg)
		case *f.dst != "" && *f.dst != f.value:
			return config.Entry{}, usageError("%s %s contradicts %s in %s", f.flag, f.value, *f.dst, arg)
		default:
			*f.dst = f.value
		}
	}
	switch {
	case e.Dir != "":
		if info, err := os.Stat(e.Dir); err != nil || !info.IsDir() {
			return config.Entry{}, usageError("source %s: %s is not a directory", arg, e.Dir)
		}
	case !strings.Contains(arg, ":") && strings.HasPrefix(e.Git, host):
		// owner/repo that is also a folder here: say which one was meant.
		// An absolute path or a ./ one never reaches the host (a bare
		// repository there is read as file://), so it gets no hint.
		if here, err := a.abs(arg); err != nil {
			return config.Entry{}, err
		} else if info, err := os.Stat(here); err == nil && info.IsDir() {
			a.warn("%s is read as a repository on %s; write ./%s for the local folder", arg, host, arg)
		}
	}
	return e, nil
}

// describeEntry says where an entry points, for messages.
func describeEntry(e config.Entry) string {
	if e.Dir != "" {
		return e.Dir
	}
	s := repository.RedactURL(e.Git)
	if e.Ref != "" {
		s += "@" + e.Ref
	}
	if e.Path != "" {
		s += " path " + e.Path
	}
	return s
}

// addTargets adds each folder as a target of the config at file and
// returns the ones that were not there yet.
func (a *app) addTargets(file string, targets []agent.Target) ([]string, error) {
	added := []string{}
	for _, t := range targets {
		add, what := config.AddTarget, t.Dir
		if t.AgentsMD != "" {
			add, what = config.AddAgentsMD, t.AgentsMD
		}
		ok, err := add(a.env, file, what, skillsync.Kinds())
		if err != nil {
			return nil, err
		}
		if ok {
			added = append(added, what)
		}
	}
	return added, nil
}

// syncAfterEdit syncs the workspace after add or remove changed its
// config, printing the report unless --json (the caller puts it in its
// own JSON). pruneAll lets a config left without sources empty the cache:
// the user removed the last one on purpose. stopped says the sync
// stopped before it had a report (a config it refuses, another sync
// holding the lock): with --json report is then empty (stoppedReport),
// so the JSON still says so, as sync --json does; else nil.
func (a *app) syncAfterEdit(ctx context.Context, pruneAll bool) (report *skillsync.SyncReport, stopped bool, err error) {
	progress := a.progress()
	eng, err := a.writeEngine(progress.option()...)
	if err == nil {
		report, err = eng.Sync(ctx, skillsync.SyncOptions{Wait: skillsync.DefaultWait, Jobs: skillsync.DefaultJobs, PruneAll: pruneAll})
		progress.clear()
	}
	if report == nil {
		if a.json {
			report = stoppedReport(err)
		}
		return report, true, err
	}
	if a.json {
		for _, w := range report.Warnings {
			a.warn("%s", safe(w))
		}
	}
	out := syncOutcome(report, err)
	if !a.json {
		a.printSyncReport(report, out)
	}
	return report, false, out
}
