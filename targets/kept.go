package targets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/jsonfile"
	"github.com/skillsync/skillsync/internal/platform"
	"github.com/skillsync/skillsync/internal/realdir"
	"github.com/skillsync/skillsync/materialize"
)

// readKept reads the list at file (materialize.TargetList): empty when
// there is none, and when it cannot be read, with a warning (a corrupt
// one is set aside).
func readKept(file string) (*materialize.TargetList, []string) {
	kept, err := materialize.ReadTargetList(file)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
		return kept, nil
	case errors.Is(err, jsonfile.ErrCorrupt):
		var aside string
		serr := inFolder(filepath.Dir(file), func(t *platform.Tree) (err error) {
			aside, err = jsonfile.SetAsideIn(t, filepath.Base(file), time.Now())
			return err
		})
		if serr == nil {
			err = fmt.Errorf("%w (set aside as %s)", err, filepath.Base(aside))
		}
	}
	return kept, []string{fmt.Sprintf("%v: target folders taken out of the config before this sync are left as they are", err)}
}

// writeKept writes kept to file with next as the entries of config,
// unless they are what it holds already; a workspace without targets
// leaves no file.
func writeKept(file string, kept *materialize.TargetList, config string, next []string) []string {
	if slices.Equal(kept.Configs[config], next) {
		return nil
	}
	kept.Version = 1
	if len(next) == 0 {
		delete(kept.Configs, config)
	} else {
		kept.Configs[config] = next
	}
	err := inFolder(filepath.Dir(file), func(t *platform.Tree) error {
		return jsonfile.WriteIn(t, filepath.Base(file), kept, 0o644)
	})
	if err != nil {
		return []string{fmt.Sprintf("%v: a target folder taken out of the config may be left as it is", err)}
	}
	return nil
}

// inFolder runs op on the folder dir (the cache) held open: the list is
// written or set aside in that folder, never through a link put in its
// place or on the way after the sync opened the cache. It is opened only
// for a change: a sync that changes nothing reads the list by path, as
// before, and opens nothing more.
func inFolder(dir string, op func(*platform.Tree) error) error {
	t, err := platform.OpenTree(dir)
	if err != nil {
		return err
	}
	defer t.Close()
	return op(t)
}

// home is the home directory, "" when it is not known.
func (p Places) home() string {
	home, err := p.Env.HomeDir()
	if err != nil {
		return ""
	}
	return home
}

// entry is dir as the list keeps it.
func (p Places) entry(dir string) string {
	if home := p.home(); home != "" {
		if rel, err := filepath.Rel(home, dir); err == nil && filepath.IsLocal(rel) {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return dir
}

// folder is the folder a list entry names, "" when it is below a home
// directory this process does not know.
func (p Places) folder(entry string) string {
	rest, ok := strings.CutPrefix(entry, "~/")
	if !ok {
		return entry
	}
	home := p.home()
	if home == "" {
		return ""
	}
	return filepath.Join(home, filepath.FromSlash(rest))
}

// configKey names p's config file in the list.
func (p Places) configKey() string {
	if rel, err := filepath.Rel(p.Workspace, p.Config); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return p.entry(p.Config)
}

// named is the entries of p's targets.
func (p Places) named() []string {
	entries := make([]string, 0, len(p.Targets))
	for _, t := range p.Targets {
		entries = append(entries, p.entry(t.Dir))
	}
	return entries
}

// listed is p's targets with the entries was (the list's for p's config)
// holds besides.
func (p Places) listed(was []string) []string {
	entries := p.named()
	for _, e := range was {
		if !slices.Contains(entries, e) {
			entries = append(entries, e)
		}
	}
	return entries
}

// giveUp gives up (materialize.GiveUpTarget) each folder of listed, the
// list's entries for p's config, that p no longer names under any path,
// then lists p's targets and the folders not given up yet. An entry this
// process cannot read (below a home it does not know) stays as it is. A
// folder reached through a link is left alone, as a target is
// (CheckTarget), and stays listed while it holds a record: given up once
// the link is gone, rather than left with copies no sync would remove.
func (p Places) giveUp(ctx context.Context, file string, kept *materialize.TargetList, listed []string) Result {
	var res Result
	next := p.named()
	for _, entry := range listed {
		dir := p.folder(entry)
		switch {
		case slices.Contains(next, entry):
			continue
		case dir == "":
			next = append(next, entry)
			continue
		case slices.ContainsFunc(p.Targets, func(t materialize.Target) bool { return realdir.Same(t.Dir, dir) }):
			continue
		}
		if err := p.CheckTarget(dir); err != nil {
			record := filepath.Join(dir, materialize.RecordName)
			if _, rerr := os.Lstat(record); errors.Is(rerr, fs.ErrNotExist) {
				continue // no copies of skillsync's there to give up
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("target %s, taken out of the config, is left as it is and given up by a sync that reaches it without the link (or delete %s, which leaves its copies to you): %v", dir, record, err))
			next = append(next, entry)
			continue
		}
		tr, done, err := materialize.GiveUpTargetBelow(ctx, p.root(dir), dir, p.Workspace, p.Wait)
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("target %s was taken out of the config: %v; the next sync tries again", dir, err))
		}
		res.Warnings = append(res.Warnings, tr.Errors...)
		res.Warnings = append(res.Warnings, tr.Warnings...)
		for _, pr := range tr.Preserved {
			res.Warnings = append(res.Warnings, "a copy in "+dir+" was edited: it was moved to "+pr+" rather than removed")
		}
		if tr.Removed > 0 {
			res.Targets = append(res.Targets, tr)
		}
		if !done {
			next = append(next, entry)
		}
	}
	res.Warnings = append(res.Warnings, writeKept(file, kept, p.configKey(), next)...)
	return res
}
