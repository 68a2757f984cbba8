package materialize

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"
	"golang.org/x/text/unicode/norm"
)

// DiffKind is how a file differs from its record.
type DiffKind string

// The ways a file differs from its record.
const (
	Modified DiffKind = "modified"
	Missing  DiffKind = "missing"
	Extra    DiffKind = "extra"
	// Unsynced is a configured source the cache has no record of: no
	// sync has brought it here yet, or none could; or a configured target
	// another workspace keeps, which holds none of this one's skills.
	Unsynced DiffKind = "unsynced"
	// Corrupt is a record file of the cache that cannot be read: a sync
	// sets it aside and hashes the files again.
	Corrupt DiffKind = "corrupt"
)

// Difference is one way a destination differs from its record.
type Difference struct {
	Path string   `json:"path"`
	Kind DiffKind `json:"kind"`
}

// UnsyncedSources returns a difference for each of sources that m, the
// manifest of the cache at root, has no record of: a cache that never
// held a source does not match a config that names it.
func UnsyncedSources(root string, m *Manifest, sources []string) []Difference {
	var diffs []Difference
	for _, name := range sources {
		if m.Sources[name] == nil {
			diffs = append(diffs, Difference{Path: filepath.Join(root, name), Kind: Unsynced})
		}
	}
	return diffs
}

// VerifyCache hashes every file of the cache at root again and compares
// it with m, the cache's manifest (ReadManifest). Skills are hashed on
// every core at once: verify is bound by SHA-256 and reads, not by one
// directory's order.
func VerifyCache(root string, m *Manifest) []Difference {
	type job struct {
		dir   string
		files map[string]FileRecord
	}
	var jobs []job
	for _, source := range sortedNames(m.Sources) {
		for _, name := range sortedNames(m.Sources[source].Skills) {
			jobs = append(jobs, job{filepath.Join(root, source, name), m.Sources[source].Skills[name].Files()})
		}
	}
	results := make([][]Difference, len(jobs))
	var g errgroup.Group
	g.SetLimit(runtime.NumCPU())
	for i, j := range jobs {
		g.Go(func() error {
			results[i] = verifySkill(j.dir, j.files)
			return nil
		})
	}
	_ = g.Wait()
	var diffs []Difference
	for _, r := range results {
		diffs = append(diffs, r...)
	}
	return diffs
}

// VerifyTarget compares the entries skillsync made in a target directory
// with its record.
func VerifyTarget(dir string) ([]Difference, error) {
	rec, err := LoadTargetRecord(dir)
	if err != nil {
		return nil, err
	}
	return rec.Verify(dir), nil
}

// Verify compares the entries skillsync made in dir, the target rec is
// the record of, with it: for a caller that reads the record for more.
func (rec *TargetRecord) Verify(dir string) []Difference {
	var diffs []Difference
	for _, name := range sortedNames(rec.Skills) {
		e := rec.Skills[name]
		live := filepath.Join(dir, e.folder(name))
		if e.Mode == Symlink {
			if cur, err := os.Readlink(live); err != nil {
				diffs = append(diffs, Difference{Path: live, Kind: Missing})
			} else if cur != e.Link {
				diffs = append(diffs, Difference{Path: live, Kind: Modified})
			}
			continue
		}
		diffs = append(diffs, verifySkill(live, e.Files)...)
	}
	return diffs
}

// verifySkill compares one skill directory with its recorded files.
func verifySkill(dir string, files map[string]FileRecord) []Difference {
	var diffs []Difference
	for _, rel := range sortedNames(files) {
		f := files[rel]
		p := filepath.Join(dir, filepath.FromSlash(rel))
		info, err := os.Lstat(p)
		if err != nil {
			diffs = append(diffs, Difference{Path: p, Kind: Missing})
			continue
		}
		sha, err := hashFile(p)
		if err != nil || sha != f.SHA256 || !samePerm(info.Mode(), f.Perm()) {
			diffs = append(diffs, Difference{Path: p, Kind: Modified})
		}
	}
	for _, p := range extraFiles(dir, files) {
		diffs = append(diffs, Difference{Path: p, Kind: Extra})
	}
	return diffs
}

// extraFiles lists, sorted, the files below dir that files does not hold,
// under the rules of this system (fsRules.extraFiles).
func extraFiles(dir string, files map[string]FileRecord) []string {
	return hostRules().extraFiles(dir, files)
}

// extraFiles lists, sorted, the files below dir that files does not hold.
// What a system's file browser leaves in any folder it shows (osLitter)
// is none: a user who looked at a skill in Finder did not edit it. Where
// names are normalization-blind, a file listed in another normalization
// than its record's path is that file.
func (r fsRules) extraFiles(dir string, files map[string]FileRecord) []string {
	var extra []string
	var nfc map[string]bool
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if _, ok := files[rel]; ok || osLitter(filepath.Dir(p), d.Name()) {
			return nil
		}
		if r.normBlind {
			if nfc == nil {
				nfc = make(map[string]bool, len(files))
				for f := range files {
					nfc[norm.NFC.String(f)] = true
				}
			}
			if nfc[norm.NFC.String(rel)] {
				return nil
			}
		}
		extra = append(extra, p)
		return nil
	})
	sort.Strings(extra)
	return extra
}

// osLitter reports whether name, a file in dir, is one a file browser
// makes on its own in the folders it shows: .DS_Store (macOS Finder),
// Thumbs.db (Windows Explorer, on network folders), or an AppleDouble
// file ._X beside X, where macOS keeps the extended attributes of X on a
// file system without them (FAT, exFAT, SMB shares).
func osLitter(dir, name string) bool {
	switch name {
	case ".DS_Store", "Thumbs.db":
		return true
	}
	if x, ok := strings.CutPrefix(name, "._"); ok && x != "" {
		_, err := os.Lstat(filepath.Join(dir, x))
		return err == nil
	}
	return false
}
