package materialize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skillsync/skillsync/internal/atomicfile"
)

// TargetMode is how a target receives skills.
type TargetMode string

// Target modes. Copy is the default: some agents do not follow symbolic
// links.
const (
	Copy    TargetMode = "copy"
	Symlink TargetMode = "symlink"
)

// RecordName is the file in a target directory that lists the entries
// skillsync made there. Nothing else in the directory is ever touched.
const RecordName = ".skillsync.json"

const targetStaging = ".skillsync-staging"

// TargetRecord is what skillsync made in one target directory.
type TargetRecord struct {
	Version int                     `json:"version"`
	Skills  map[string]*TargetEntry `json:"skills"`
}

// TargetEntry is one entry skillsync made: a copied skill with its files,
// or a symbolic link.
type TargetEntry struct {
	Hash  string                `json:"hash"`
	Mode  TargetMode            `json:"mode"`
	Link  string                `json:"link,omitempty"`
	Files map[string]FileRecord `json:"files,omitempty"`
}

// TargetSkill is one catalog winner to place in a target.
type TargetSkill struct {
	Skill
	// Hash is the skill's hash, recorded for verify.
	Hash string
	// Dir is the winner's directory on disk, what a symlink points to; ""
	// when it has none, in which case the skill is copied.
	Dir string
}

// TargetReport says what one target sync did.
type TargetReport struct {
	Dir       string   `json:"dir"`
	Written   int      `json:"written"`
	Removed   int      `json:"removed"`
	Conflicts []string `json:"conflicts"`
}

// LoadTargetRecord reads dir's record; a missing one is empty.
func LoadTargetRecord(dir string) (*TargetRecord, error) {
	rec := &TargetRecord{Version: 1, Skills: map[string]*TargetEntry{}}
	data, err := os.ReadFile(filepath.Join(dir, RecordName))
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, rec); err != nil {
		return &TargetRecord{Version: 1, Skills: map[string]*TargetEntry{}}, fmt.Errorf("%s is unreadable: %w", filepath.Join(dir, RecordName), err)
	}
	if rec.Skills == nil {
		rec.Skills = map[string]*TargetEntry{}
	}
	return rec, nil
}

// SyncTarget places skills in dir as mode says. A name in dir that
// skillsync did not make is a conflict: reported and left as it is.
// Entries skillsync made for skills that are gone are removed.
func SyncTarget(ctx context.Context, dir string, mode TargetMode, skills []TargetSkill, verify bool) (TargetReport, error) {
	report := TargetReport{Dir: dir, Conflicts: []string{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return report, fmt.Errorf("target %s: %w", dir, err)
	}
	rec, err := LoadTargetRecord(dir)
	if err != nil {
		return report, err
	}
	w, err := NewWriter(filepath.Join(dir, targetStaging))
	if err != nil {
		return report, err
	}
	defer os.RemoveAll(w.staging)
	w.Verify = verify
	next := &TargetRecord{Version: 1, Skills: map[string]*TargetEntry{}}
	for _, s := range skills {
		live := filepath.Join(dir, s.Name)
		prev, ours := rec.Skills[s.Name]
		if !ours {
			if _, err := os.Lstat(live); err == nil {
				report.Conflicts = append(report.Conflicts, s.Name)
				continue
			}
		}
		entry, err := stageTarget(ctx, w, live, mode, s, prev)
		if err != nil {
			return report, fmt.Errorf("target %s: %w", dir, err)
		}
		next.Skills[s.Name] = entry
	}
	for _, name := range sortedNames(rec.Skills) {
		if _, keep := next.Skills[name]; keep {
			continue
		}
		if err := w.Remove(filepath.Join(dir, name), &SkillRecord{Files: rec.Skills[name].Files}); err != nil {
			return report, err
		}
		report.Removed++
	}
	if err := w.Commit(ctx); err != nil {
		return report, fmt.Errorf("target %s: %w", dir, err)
	}
	report.Written = w.Stats.Written
	return report, atomicfile.WriteJSONIfChanged(filepath.Join(dir, RecordName), next, 0o644)
}

func stageTarget(ctx context.Context, w *Writer, live string, mode TargetMode, s TargetSkill, prev *TargetEntry) (*TargetEntry, error) {
	if mode == Symlink && s.Dir != "" {
		if err := w.StageLink(live, s.Dir); err != nil {
			return nil, err
		}
		return &TargetEntry{Hash: s.Hash, Mode: Symlink, Link: s.Dir}, nil
	}
	var old *SkillRecord
	if prev != nil && prev.Mode == Copy {
		old = &SkillRecord{Hash: prev.Hash, Files: prev.Files}
	}
	rec, _, err := w.Stage(ctx, live, s.Skill, old, nil)
	if err != nil {
		return nil, err
	}
	return &TargetEntry{Hash: rec.Hash, Mode: Copy, Files: rec.Files}, nil
}

// StageLink queues live to become a symbolic link to target, unless it
// already is one.
func (w *Writer) StageLink(live, target string) error {
	if cur, err := os.Readlink(live); err == nil && cur == target {
		return nil
	}
	staged := filepath.Join(w.staging, randomName())
	if err := os.Symlink(target, staged); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.Stats.Written++
	w.pending = append(w.pending, swap{staged: staged, live: live})
	return nil
}
