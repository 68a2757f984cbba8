package skillsync

import (
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/workspace"

	"github.com/skillsync/skillsync/materialize"
)

// Stamp returns a value that changes whenever the catalog may have
// changed: a sync rewrote the cache's manifest, or in a layer read in
// place a folder gained or lost an entry or a SKILL.md changed, at any
// depth discovery looks. A server re-reads the catalog when the stamp
// moves. The layer's own records (usage, audit, archive, drafts) are left
// out: they change with every use and say nothing about the catalog. It
// costs one stat per folder and per SKILL.md, up to stampBudget entries.
func (e *Engine) Stamp() (string, error) {
	h := fnv.New64a()
	h.Write(stampFile(nil, filepath.Join(e.layout.CacheDir(), materialize.ManifestName)))
	for _, l := range e.localLayers() {
		budget := stampBudget
		stampTree(h, l.dir, 0, &budget)
	}
	return strconv.FormatUint(h.Sum64(), 16), nil
}

// WatchDirs returns the directories whose entries change when the
// catalog does: the cache, where a sync replaces the manifest, and each
// layer read in place, where promotion adds a skill and curation archives
// one. A server watches them to hear of a change when it happens.
func (e *Engine) WatchDirs() []string {
	dirs := []string{e.layout.CacheDir()}
	for _, l := range e.localLayers() {
		dirs = append(dirs, l.dir)
	}
	return dirs
}

// stampBudget bounds the entries one layer's stamp reads.
const stampBudget = 50000

// stampDepth is how deep a stamp looks: as deep as discovery reports.
const stampDepth = repository.MaxDepth + 2

// stampTree writes the stat data of dir, of every SKILL.md below it and of
// its folders, to h.
func stampTree(h io.Writer, dir string, depth int, budget *int) {
	if depth > 0 {
		// The layer's own folder changes with its records; what it holds
		// is stamped entry by entry below.
		h.Write(stampFile(nil, dir))
	}
	if depth > stampDepth || *budget <= 0 {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, en := range entries {
		if *budget--; *budget <= 0 {
			return
		}
		name := en.Name()
		p := filepath.Join(dir, name)
		switch {
		case depth == 0 && layerRecord(name):
		case en.IsDir():
			stampTree(h, p, depth+1, budget)
		case name == "SKILL.md" || name == "skill.md":
			h.Write(stampFile(nil, p))
		}
	}
}

// layerRecord reports whether name, at the top of a layer folder, is one
// of the layer's own records rather than skills.
func layerRecord(name string) bool {
	switch name {
	case workspace.AuditName, workspace.ArchiveName, workspace.DraftsName:
		return true
	}
	return strings.HasPrefix(name, workspace.UsageName) || strings.HasPrefix(name, workspace.ImportedName) || strings.HasPrefix(name, workspace.HookedName)
}

// stampFile appends p's size and modification time to buf, or a dash when
// p cannot be read.
func stampFile(buf []byte, p string) []byte {
	buf = append(buf, p...)
	info, err := os.Stat(p)
	if err != nil {
		return append(buf, " -\n"...)
	}
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, info.Size(), 10)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, info.ModTime().UnixNano(), 10)
	return append(buf, '\n')
}
