package repository

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/skill"
)

// conventions are where repositories keep skills by their own choice, in
// the order discovery reads them: the skills/ convention with the curated,
// experimental and system sets of openai/skills (vercel-labs/skills
// src/skills.ts, the priority search of discoverSkills).
var conventions = [...]string{
	"skills",
	"skills/.curated",
	"skills/.experimental",
	"skills/.system",
}

// folders is where the tools that install skills look for them in a
// repository, in the order discovery reads them: the conventions, then
// every agent's project folders from the one agent table (agent.Agents).
func folders() []string {
	return append(conventions[:], agent.ProjectFolders()...)
}

// MayRead reports whether discovery may read the folder at rel, a slash
// path inside a source: one under no folder the walk passes over
// (skipsDir: a dot-folder, node_modules, the drafts), or one in a folder
// of the tools' it reads (.claude/skills, skills/.curated, ...).
func MayRead(rel string) bool {
	for _, dir := range folders() {
		if rel == dir || strings.HasPrefix(rel, dir+"/") {
			return true
		}
	}
	for part := range strings.SplitSeq(rel, "/") {
		if part != "" && skipsDir(part) {
			return false
		}
	}
	return true
}

// Claude Code's plugin manifests, relative to the directory holding
// .claude-plugin/ (the marketplace root).
const (
	MarketplaceManifest = ".claude-plugin/marketplace.json"
	PluginManifest      = ".claude-plugin/plugin.json"
)

// MaxManifestSize bounds a plugin manifest read from a source: a real one
// is a few KiB, and a source is untrusted.
const MaxManifestSize = 1 << 20

// roots returns the directories to look for skills in, in order, before
// the walk of the whole source: the skill paths the plugin manifests
// declare, then the folders that exist. Each path is relative to the
// source root and checked to stay inside it.
func (d *discovery) roots(ctx context.Context, top []fs.DirEntry) ([]string, error) {
	var roots []string
	present := map[string]bool{}
	for _, e := range top {
		present[e.Name()] = true
	}
	if present[".claude-plugin"] {
		declared, err := d.pluginRoots(ctx)
		if err != nil {
			return nil, err
		}
		roots = append(roots, declared...)
	}
	if len(d.opts.Plugins) > 0 {
		if !present[".claude-plugin"] {
			d.problem(skill.Error, "plugin-unknown", MarketplaceManifest, fmt.Sprintf("plugins: %s: the source has no %s, so it has no plugins to pick", strings.Join(d.opts.Plugins, ", "), MarketplaceManifest))
		}
		return roots, nil
	}
	for _, dir := range folders() {
		first, _, _ := strings.Cut(dir, "/")
		if !present[first] {
			continue
		}
		info, err := fs.Stat(d.fsys, dir)
		switch {
		case err == nil && info.IsDir():
			roots = append(roots, dir)
		case unknowable(err):
			d.unreadableDir(dir, err)
		}
	}
	return roots, nil
}

// pluginRoots reads the skill paths Claude Code's manifests declare, as
// Claude Code resolves them (code.claude.com/docs/en/plugins/
// marketplace-reference and manifest-reference):
//
//   - the marketplace root is the directory holding .claude-plugin/, and a
//     plugin's "source" starting with "./" is relative to it; a bare name is
//     relative to metadata.pluginRoot; a source object (github, url, npm,
//     ...) is another repository, which skillsync does not fetch;
//   - a plugin's skills are the paths in "skills" (a string or a list,
//     relative to the plugin root) of its marketplace entry and of its own
//     .claude-plugin/plugin.json, which replace the default skills/ folder
//     of the plugin root;
//   - a path is a skill directory or a directory of skills.
//
// The manifests are hostile input: bounded in size, every path relative,
// without "..", and charged to the source's budget.
func (d *discovery) pluginRoots(ctx context.Context) (roots []string, err error) {
	var names []string // of every plugin the manifests have
	if len(d.opts.Plugins) > 0 {
		defer func() {
			if err == nil {
				d.unknownPlugins(names)
			}
		}()
	}
	if data, ok := d.manifest(MarketplaceManifest); ok {
		var m struct {
			Metadata struct {
				PluginRoot string `json:"pluginRoot"`
			} `json:"metadata"`
			Plugins []struct {
				Name   string          `json:"name"`
				Source json.RawMessage `json:"source"`
				Skills json.RawMessage `json:"skills"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			d.problem(skill.Warning, "plugin-manifest-invalid", MarketplaceManifest, "cannot parse "+MarketplaceManifest+": "+err.Error())
		}
		pluginRoot := "."
		if m.Metadata.PluginRoot != "" {
			p, err := manifestPath(".", m.Metadata.PluginRoot)
			if err != nil {
				d.problem(skill.Warning, "plugin-path-invalid", MarketplaceManifest, fmt.Sprintf("metadata.pluginRoot %q is ignored: %v", m.Metadata.PluginRoot, err))
			} else {
				pluginRoot = p
			}
		}
		for _, p := range m.Plugins {
			if err := d.charge(1, MarketplaceManifest); err != nil {
				return roots, err
			}
			names = append(names, p.Name)
			if !d.picks(p.Name) {
				continue
			}
			base, ok := d.pluginSource(p.Name, p.Source, pluginRoot)
			if !ok {
				continue
			}
			if info, err := fs.Stat(d.fsys, base); err != nil || !info.IsDir() {
				if unknowable(err) {
					d.unreadableDir(base, err)
				} else {
					d.problem(skill.Warning, "plugin-missing", MarketplaceManifest, fmt.Sprintf("plugin %q: its folder %s is not a directory of this source; its skills are not synced", p.Name, base))
				}
				continue
			}
			declared, ok := d.skillPaths(MarketplaceManifest, p.Name, p.Skills)
			if !ok {
				continue
			}
			// The plugin's own manifest adds its paths (Claude Code's
			// default strict mode merges the two).
			own := path.Join(base, PluginManifest)
			if data, ok := d.manifest(own); ok {
				var pm struct {
					Skills json.RawMessage `json:"skills"`
				}
				if err := json.Unmarshal(data, &pm); err != nil {
					d.problem(skill.Warning, "plugin-manifest-invalid", own, "cannot parse "+own+": "+err.Error())
				} else if more, ok := d.skillPaths(own, p.Name, pm.Skills); ok {
					declared = append(declared, more...)
				}
			}
			more, err := d.resolveSkillPaths(ctx, MarketplaceManifest, base, declared)
			roots = append(roots, more...)
			if err != nil {
				return roots, err
			}
		}
	}
	if data, ok := d.manifest(PluginManifest); ok {
		var pm struct {
			Name   string          `json:"name"`
			Skills json.RawMessage `json:"skills"`
		}
		if err := json.Unmarshal(data, &pm); err != nil {
			d.problem(skill.Warning, "plugin-manifest-invalid", PluginManifest, "cannot parse "+PluginManifest+": "+err.Error())
		} else if names = append(names, pm.Name); !d.picks(pm.Name) {
			// plugins: names other plugins
		} else if declared, ok := d.skillPaths(PluginManifest, pm.Name, pm.Skills); ok {
			more, err := d.resolveSkillPaths(ctx, PluginManifest, ".", declared)
			roots = append(roots, more...)
			if err != nil {
				return roots, err
			}
		}
	}
	return roots, nil
}

// pluginSource returns the plugin root a marketplace entry's source names,
// or false when it is not in this repository or not a safe path.
func (d *discovery) pluginSource(name string, raw json.RawMessage, pluginRoot string) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return pluginRoot, true
	}
	var src string
	if err := json.Unmarshal(raw, &src); err != nil {
		d.problem(skill.Warning, "plugin-remote-source", MarketplaceManifest, fmt.Sprintf("plugin %q comes from another repository, which skillsync does not fetch; add that repository as a source of its own", name))
		return "", false
	}
	base := "."
	if src != "." && !strings.HasPrefix(src, "./") {
		base = pluginRoot // a bare name is relative to metadata.pluginRoot
	}
	p, err := manifestPath(base, src)
	if err != nil {
		d.problem(skill.Warning, "plugin-path-invalid", MarketplaceManifest, fmt.Sprintf("plugin %q: source %q is ignored: %v", name, src, err))
		return "", false
	}
	return p, true
}

// skillPaths decodes a "skills" field, a string or a list of strings. nil
// with true means the field is absent: the plugin's skills/ folder.
func (d *discovery) skillPaths(file, plugin string, raw json.RawMessage) ([]string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		d.problem(skill.Warning, "plugin-manifest-invalid", file, fmt.Sprintf("plugin %q: \"skills\" must be a path or a list of paths", plugin))
		return nil, false
	}
	if list == nil {
		list = []string{}
	}
	return list, true
}

// resolveSkillPaths turns the declared paths of a plugin rooted at base
// into directories of the source, reporting the ones that are unsafe or
// missing. No declared path means the plugin's skills/ folder, whose
// absence is no problem.
func (d *discovery) resolveSkillPaths(ctx context.Context, file, base string, declared []string) ([]string, error) {
	if declared == nil {
		p := path.Join(base, "skills")
		if info, err := fs.Stat(d.fsys, p); err == nil && info.IsDir() {
			return []string{p}, nil
		}
		return nil, nil
	}
	var out []string
	for _, raw := range declared {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if err := d.charge(1, file); err != nil {
			return out, err
		}
		p, err := manifestPath(base, raw)
		if err != nil {
			d.problem(skill.Warning, "plugin-path-invalid", file, fmt.Sprintf("skill path %q is ignored: %v", raw, err))
			continue
		}
		info, err := fs.Stat(d.fsys, p)
		if unknowable(err) {
			d.unreadableDir(p, err)
			continue
		}
		if err != nil || !info.IsDir() {
			d.problem(skill.Warning, "plugin-path-missing", file, fmt.Sprintf("declares skills at %s, which is not a directory of this source", p))
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// manifestPath joins p, a path from a manifest, to base, refusing what
// could leave the source: an absolute path, a ".." component, a
// backslash or NUL.
func manifestPath(base, p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("empty path")
	case path.IsAbs(p) || strings.ContainsAny(p, "\\\x00"):
		return "", errors.New("not a relative slash-separated path")
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return "", errors.New(`".." is not allowed`)
		}
	}
	joined := path.Join(base, p)
	if !fs.ValidPath(joined) {
		return "", errors.New("not a path inside the source")
	}
	return joined, nil
}

// manifest reads the manifest at name, up to MaxManifestSize bytes. It
// reports false, with a problem where one is due, when there is none to
// read.
func (d *discovery) manifest(name string) ([]byte, bool) {
	info, err := fs.Stat(d.fsys, name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false
	case err != nil:
		d.badManifest(name, err)
		return nil, false
	case !info.Mode().IsRegular():
		d.problem(skill.Warning, "plugin-manifest-invalid", name, name+" is not a regular file")
		return nil, false
	case info.Size() > MaxManifestSize:
		d.problem(skill.Warning, "plugin-manifest-too-large", name, fmt.Sprintf("%s is %d bytes, over the %d read; it is ignored", name, info.Size(), MaxManifestSize))
		return nil, false
	}
	f, err := d.fsys.Open(name)
	if err != nil {
		d.badManifest(name, err)
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestSize+1))
	if err == nil && len(data) > MaxManifestSize {
		err = errors.New("it grew while being read")
	}
	if err != nil {
		d.badManifest(name, err)
		return nil, false
	}
	return data, true
}

// badManifest reports the manifest name, which could not be read. Where
// err leaves it unknown (unknowable) the skills it declares are too, and
// a sync keeps the cached copy of every skill of the source the read
// does not find (materialize.Held); where the source's content made it
// unreadable (a link out, a loop) it is an invalid manifest.
func (d *discovery) badManifest(name string, err error) {
	if unknowable(err) {
		d.problem(skill.Warning, "plugin-manifest-unreadable", name, "cannot read "+name+": "+err.Error()+"; skills cached from this source keep their copies")
		return
	}
	d.problem(skill.Warning, "plugin-manifest-invalid", name, "cannot read "+name+": "+err.Error())
}

// LayoutRevision is treeRevision of fsys, extended by the directories
// discovery reads that treeRevision's walk leaves out: .claude-plugin/ and
// the dot-folders of other tools (.claude/skills, skills/.curated, ...).
// A change there then changes the revision as a change anywhere else does.
func LayoutRevision(ctx context.Context, fsys fs.FS, content bool) (Revision, error) {
	rev, err := treeRevision(ctx, fsys, content)
	if err != nil {
		return "", err
	}
	top, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return "", fmt.Errorf("hash source files: %w", err)
	}
	d := newDiscovery(fsys, Options{})
	roots, err := d.roots(ctx, top)
	if err != nil {
		return "", fmt.Errorf("hash source files: %w", err)
	}
	var hidden []string
	if info, err := fs.Stat(fsys, ".claude-plugin"); err == nil && info.IsDir() {
		hidden = append(hidden, ".claude-plugin")
	}
	for _, dir := range roots {
		if strings.HasPrefix(dir, ".") || strings.Contains(dir, "/.") {
			hidden = append(hidden, dir)
		}
	}
	if len(hidden) == 0 {
		return rev, nil
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", rev)
	for _, dir := range hidden {
		sub, err := fs.Sub(fsys, dir)
		if err != nil {
			return "", fmt.Errorf("hash source files: %w", err)
		}
		r, err := treeRevision(ctx, sub, content)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%d:%s %s\n", len(dir), dir, r)
	}
	return Revision(hex.EncodeToString(h.Sum(nil))), nil
}

// picks reports whether plugins: keeps the plugin named name: always when
// plugins: is not set; names compare without case.
func (d *discovery) picks(name string) bool {
	if len(d.opts.Plugins) == 0 {
		return true
	}
	return slices.ContainsFunc(d.opts.Plugins, func(p string) bool { return strings.EqualFold(p, name) })
}

// maxPluginsNamed bounds the plugins a plugin-unknown problem lists.
const maxPluginsNamed = 30

// unknownPlugins reports each name of plugins: that no manifest has,
// listing the plugins there are (names).
func (d *discovery) unknownPlugins(names []string) {
	for _, want := range d.opts.Plugins {
		if slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, want) }) {
			continue
		}
		have := slices.Compact(slices.Sorted(slices.Values(names)))
		list := "none"
		if len(have) > maxPluginsNamed {
			list = strings.Join(have[:maxPluginsNamed], ", ") + fmt.Sprintf(" and %d more", len(have)-maxPluginsNamed)
		} else if len(have) > 0 {
			list = strings.Join(have, ", ")
		}
		d.problem(skill.Error, "plugin-unknown", MarketplaceManifest, fmt.Sprintf("plugins: %q is not a plugin of this source; it has: %s", want, list))
	}
}
