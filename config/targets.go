package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/internal/hostenv"
	"github.com/skillsync/skillsync/internal/realdir"
	"github.com/skillsync/skillsync/repository"
)

// checkTargets refuses targets that would let a sync write where it must
// not: into the cache or a layer skillsync reads, over the workspace, the
// home directory or the file system root, or into another target. Paths
// are compared as written and as the links on them lead: a target
// reached through a link to the workspace is the workspace's folder.
func checkTargets(env hostenv.Env, cfg *Config) []error {
	var errs []error
	l := cfg.Layout()
	guarded := []struct{ dir, what string }{
		{l.CacheDir(), "the cache"},
		{l.SkillsDir(), "the workspace layer"},
		{l.UserSkillsDir(), "the user layer"},
		{cfg.Global, "the global layer"},
	}
	roots := []struct{ dir, what string }{{"/", "the file system root"}, {cfg.Workspace, "the workspace"}}
	if home, err := env.HomeDir(); err == nil {
		roots = append(roots, struct{ dir, what string }{filepath.Clean(home), "the home directory"})
	}
	if len(cfg.Targets) > 0 {
		// Links are followed only where a target could reach them.
		for _, g := range guarded {
			if g.dir != "" {
				guarded = append(guarded, struct{ dir, what string }{realdir.Path(g.dir), g.what})
			}
		}
		for _, r := range roots {
			roots = append(roots, struct{ dir, what string }{realdir.Path(r.dir), r.what})
		}
	}
	real := make([]string, len(cfg.Targets))
	for i, t := range cfg.Targets {
		real[i] = realdir.Path(t.Dir)
	}
	for i, t := range cfg.Targets {
		where := fmt.Sprintf("line %d: targets[%d] %s", t.Line, i, t.Dir)
		bad := ""
		for _, g := range guarded {
			for _, dir := range []string{t.Dir, real[i]} {
				switch {
				case g.dir == "" || bad != "":
				case within(dir, g.dir):
					bad = "is " + g.what + " or inside it"
				case within(g.dir, dir):
					bad = "holds " + g.what
				}
			}
		}
		for _, r := range roots {
			if t.Dir == r.dir || real[i] == r.dir {
				bad = "is " + r.what
			}
		}
		if bad != "" && real[i] != t.Dir {
			bad += " (as the links on its path lead, to " + real[i] + ")"
		}
		if bad != "" {
			errs = append(errs, fmt.Errorf("%s %s; a target must be a folder of its own, such as .claude/skills", where, bad))
			continue
		}
		for j, o := range cfg.Targets[:i] {
			if within(t.Dir, o.Dir) || within(o.Dir, t.Dir) || within(real[i], real[j]) || within(real[j], real[i]) {
				what := "overlaps"
				if t.Dir == o.Dir && t.Mode != o.Mode {
					what = fmt.Sprintf("names the same folder with mode %s, while mode %s is", t.Mode, o.Mode)
				} else if t.Dir == o.Dir {
					what = "repeats"
				}
				errs = append(errs, fmt.Errorf("%s %s targets[%d] (line %d); give every target a folder of its own", where, what, j, o.Line))
				break
			}
		}
	}
	errs = append(errs, checkSourceFolders(cfg)...)
	return append(errs, checkAgentsMD(cfg, guarded)...)
}

// checkSourceFolders refuses a source that reads a folder a sync writes:
// a target, or the cache. Read as a source, a target's own skills (a
// user's, made by hand) would be taken for skillsync's once placed back,
// and removed with the source. A source that holds such a folder where
// discovery never looks (under a dot-folder: a monorepo whose workspace
// is inside it) is fine. Paths are compared as the links on them lead.
func checkSourceFolders(cfg *Config) []error {
	var errs []error
	var written []struct{ dir, what string } // resolved once, when a dir source asks
	for i, s := range cfg.Sources {
		d, ok := s.Settings.(Directory)
		if !ok {
			continue
		}
		if written == nil {
			written = append(written, struct{ dir, what string }{realdir.Path(cfg.Layout().CacheDir()), "the cache"})
			for j, t := range cfg.Targets {
				written = append(written, struct{ dir, what string }{realdir.Path(t.Dir), fmt.Sprintf("targets[%d] (line %d)", j, t.Line)})
			}
		}
		dir := realdir.Path(d.Directory())
		where := fmt.Sprintf("line %d: repositories[%d] (%s) dir %s", s.Line, i, s.Name, d.Directory())
		for _, w := range written {
			bad := ""
			switch {
			case within(dir, w.dir):
				bad = "is " + w.what + " or inside it"
			case within(w.dir, dir) && repository.MayRead(relSlash(dir, w.dir)):
				bad = "holds " + w.what + " where it looks for skills"
			}
			if bad != "" {
				errs = append(errs, fmt.Errorf("%s %s, a folder skillsync writes into; a source must be a folder of skills of its own", where, bad))
				break
			}
		}
	}
	return errs
}

// relSlash is target relative to dir, which holds it, slash-separated.
func relSlash(dir, target string) string {
	rel, _ := filepath.Rel(dir, target)
	return filepath.ToSlash(rel)
}

// checkAgentsMD refuses an agents_md file outside the workspace, in the
// cache, a layer or a target folder, or named twice.
func checkAgentsMD(cfg *Config, guarded []struct{ dir, what string }) []error {
	var errs []error
	seen := map[string]int{}
	for _, a := range cfg.AgentsMD {
		where := fmt.Sprintf("line %d: agents_md %s", a.Line, a.Path)
		bad := ""
		if a.Path == cfg.Workspace || !within(a.Path, cfg.Workspace) {
			bad = "is not a file within the workspace"
		}
		for _, g := range guarded {
			if bad == "" && g.dir != "" && within(a.Path, g.dir) {
				bad = "is in " + g.what
			}
		}
		for i, t := range cfg.Targets {
			if bad == "" && within(a.Path, t.Dir) {
				bad = fmt.Sprintf("is in targets[%d] (line %d), a folder of skills", i, t.Line)
			}
		}
		if line, dup := seen[a.Path]; bad == "" && dup {
			bad = fmt.Sprintf("repeats the entry of line %d", line)
		}
		seen[a.Path] = a.Line
		if bad != "" {
			errs = append(errs, fmt.Errorf("%s %s; an agents_md file is a file of the project, such as AGENTS.md", where, bad))
		}
	}
	return errs
}

// within reports whether path is dir or below it. Both are clean and
// absolute.
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if dir == "/" {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// CheckStarterFolder refuses a folder a starter config (init, add) would
// make the workspace of, as loading that config would: the file system
// root or the home directory. Refused before it is written, the config
// is not left behind to fail every command below it.
func CheckStarterFolder(env hostenv.Env, dir string) error {
	if err := checkWorkspaceRoot(env, dir); err != nil {
		return &Error{File: filepath.Join(dir, FileName), Errs: []error{fmt.Errorf("a config here would make %s the workspace, which %w; run skillsync in a project's folder, or with -g for the user-wide config", dir, err)}}
	}
	return nil
}

// checkWorkspaceRoot refuses a workspace that is the file system root or
// the home directory: skillsync writes its cache, its lock and skills/
// into the workspace, which must not land there.
func checkWorkspaceRoot(env hostenv.Env, dir string) error {
	if dir == string(filepath.Separator) {
		return errors.New("is the file system root")
	}
	if home, err := env.HomeDir(); err == nil && dir == filepath.Clean(home) {
		return errors.New("is the home directory")
	}
	if a, folder, ok := agentFolder(dir); ok {
		return fmt.Errorf("is the folder %s reads skills from (%s), where a workspace's cache, lock and skills/ would be read as skills", a, folder)
	}
	return nil
}

// agentFolder reports whether dir is a folder an agent reads skills from
// in a project (.claude/skills), by the agent table; a folder named by
// one component alone (skills/) is any project's, and is not taken for
// one.
func agentFolder(dir string) (agentName, folder string, ok bool) {
	for _, a := range agent.Agents() {
		for _, p := range append([]string{a.Project}, a.Also...) {
			if strings.Contains(p, "/") && strings.HasSuffix(filepath.ToSlash(dir), "/"+p) {
				return a.Display, p, true
			}
		}
	}
	return "", "", false
}
