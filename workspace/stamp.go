package workspace

import (
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// StampBudget bounds the entries one layer's stamp reads.
const StampBudget = 50000

// Stamp returns a value that changes whenever the catalog may have
// changed: one of files (the cache's manifest, which a sync replaces)
// changed, or in one of the layer folders read in place a folder gained
// or lost an entry or a SKILL.md changed, down to depth levels. A
// layer's own records (usage, audit, archive, drafts, the import
// journals) are left out: they change with every use and say nothing
// about the catalog. It costs one stat per folder and per SKILL.md, up to
// StampBudget entries a layer.
func Stamp(files, layers []string, depth int) string {
	h := fnv.New64a()
	for _, f := range files {
		h.Write(stampFile(nil, f))
	}
	for _, dir := range layers {
		budget := StampBudget
		stampTree(h, dir, 0, depth, &budget)
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// stampTree writes the stat data of dir, of every SKILL.md below it and of
// its folders, to h.
func stampTree(h io.Writer, dir string, depth, maxDepth int, budget *int) {
	if depth > 0 {
		// The layer's own folder changes with its records; what it holds
		// is stamped entry by entry below.
		h.Write(stampFile(nil, dir))
	}
	if depth > maxDepth || *budget <= 0 {
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
			stampTree(h, p, depth+1, maxDepth, budget)
		case name == "SKILL.md" || name == "skill.md":
			h.Write(stampFile(nil, p))
		}
	}
}

// layerRecord reports whether name, at the top of a layer folder, is one
// of the layer's own records rather than skills.
func layerRecord(name string) bool {
	switch name {
	case AuditName, ArchiveName, DraftsName:
		return true
	}
	return strings.HasPrefix(name, UsageName) || strings.HasPrefix(name, ImportedName) || strings.HasPrefix(name, HookedName)
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
