package curator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/workspace"

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/skill"
)

// ArchiveDir is the archive's directory inside a layer directory.
const ArchiveDir = workspace.ArchiveName

// ArchiveStamp is the UTC time format of archive directory names, and of
// the folders rejected and published drafts are moved to.
const ArchiveStamp = "20060102T150405Z"

// ErrLayerRoot is a skill whose SKILL.md lies at its layer directory's
// top: moving it would move the whole layer, with the usage file, the
// audit log and the archive in it.
var ErrLayerRoot = errors.New("the skill is its layer directory itself (SKILL.md at the layer's top); it is never moved, move its files into a subdirectory")

// ArchivePath returns where a copy named name, archived at now, goes in
// the layer directory layerDir: always <layerDir>/.archive/<name>-<UTC
// stamp>, however deep the skill lay in the layer. It is the one place the
// archive's layout is spelled; ArchivedCopies reads the same.
func ArchivePath(layerDir, name string, now time.Time) string {
	return filepath.Join(layerDir, ArchiveDir, name+"-"+now.UTC().Format(ArchiveStamp))
}

// Archive moves the local skill directory dir, which lies inside
// layerDir, to ArchivePath(layerDir, name, now) and returns that path.
// It refuses a dir that is the layer directory itself (ErrLayerRoot), one
// outside the layer, a name that is not one safe path component, and a
// destination that exists; the skill stays where it was.
func Archive(layerDir, dir, name string, now time.Time) (string, error) {
	if !skill.ValidName(name) {
		return "", fmt.Errorf("archive %q: not one safe path component", name)
	}
	layerDir, dir = filepath.Clean(layerDir), filepath.Clean(dir)
	rel, err := filepath.Rel(layerDir, dir)
	switch {
	case err != nil:
		return "", fmt.Errorf("archive %s: %w", name, err)
	case rel == ".":
		return "", fmt.Errorf("archive %s at %s: %w", name, dir, ErrLayerRoot)
	case rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel):
		return "", fmt.Errorf("archive %s: %s is not inside its layer directory %s", name, dir, layerDir)
	case rel == ArchiveDir || strings.HasPrefix(rel, ArchiveDir+string(filepath.Separator)):
		return "", fmt.Errorf("archive %s: %s is already in the archive", name, dir)
	}
	if _, err := os.Lstat(dir); err != nil {
		return "", fmt.Errorf("archive %s: %w", name, err)
	}
	if err := realDir(filepath.Join(layerDir, ArchiveDir)); err != nil {
		return "", fmt.Errorf("archive %s: %w", name, err)
	}
	dst := ArchivePath(layerDir, name, now)
	if _, err := os.Lstat(dst); err == nil {
		return "", fmt.Errorf("archive %s: %s already exists", name, dst)
	}
	if err := os.Rename(dir, dst); err != nil {
		return "", fmt.Errorf("archive %s: %w", name, err)
	}
	if from := filepath.ToSlash(rel); from != name {
		// Restore puts a nested skill back where it was; without this
		// note it comes back at the layer's top.
		if err := atomicfile.WriteFile(dst+originSuffix, []byte(from+"\n"), 0o644); err != nil {
			return dst, fmt.Errorf("archive %s: note where it came from (%s): %w", name, from, err)
		}
	}
	return dst, nil
}

// originSuffix names the note beside an archived directory that says
// where in its layer it lay, slash-separated, when that was not
// <layer>/<name>.
const originSuffix = ".from"

// maxOrigin bounds what is read of an origin note.
const maxOrigin = 4096

// origin reads the note beside the archived directory dir. A note that is
// missing, unreadable, or names a place outside the layer or in its
// records is no note: the copy goes back to the layer's top.
func origin(dir string) string {
	data, err := atomicfile.ReadBounded(dir+originSuffix, maxOrigin)
	if err != nil {
		return ""
	}
	from := strings.TrimSuffix(string(data), "\n")
	if !fs.ValidPath(from) || from == "." {
		return ""
	}
	for _, part := range strings.Split(from, "/") {
		if !skill.ValidName(part) || part == workspace.DraftsName {
			return ""
		}
	}
	return from
}

// LayerDir is a local layer's directory and whose it is: the workspace's
// skills/ (owner empty), or a user's <user>/skills/ (owner the user).
type LayerDir struct {
	Layer layering.Layer
	Owner string
	Dir   string
}

// ArchivedCopy is a local copy in its layer's .archive/.
type ArchivedCopy struct {
	Copy
	// Dir is the archived directory, LayerDir the layer it came from.
	Dir      string
	LayerDir string
	At       time.Time
	// From is where in its layer the copy lay, slash-separated, when that
	// was not the layer's top; empty otherwise.
	From string
}

// ArchivedCopies lists the archived copies in the layers' .archive/
// directories, newest first (ties by key). An .archive that is a symbolic
// link is skipped, as is any entry that is not a directory or whose name
// is not <safe name>-<UTC stamp>.
func ArchivedCopies(layers ...LayerDir) []ArchivedCopy {
	var out []ArchivedCopy
	for _, l := range layers {
		archive := filepath.Join(l.Dir, ArchiveDir)
		if checkRealDir(archive) != nil {
			continue
		}
		entries, _ := os.ReadDir(archive)
		for _, en := range entries {
			i := strings.LastIndex(en.Name(), "-")
			if i < 0 || !en.IsDir() { // IsDir is false for a link
				continue
			}
			at, err := time.Parse(ArchiveStamp, en.Name()[i+1:])
			if err != nil {
				continue
			}
			c, err := NewCopy(l.Layer, l.Owner, en.Name()[:i])
			if err != nil {
				continue
			}
			dir := filepath.Join(archive, en.Name())
			out = append(out, ArchivedCopy{Copy: c, Dir: dir, LayerDir: l.Dir, At: at, From: origin(dir)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.After(out[j].At)
		}
		return out[i].Copy.String() < out[j].Copy.String()
	})
	return out
}

// RestorePath is where Restore moves an archived copy back to: where it
// lay in its layer (From), or the layer directory's top, <LayerDir>/<name>.
func (a ArchivedCopy) RestorePath() string {
	if a.From != "" {
		return filepath.Join(a.LayerDir, filepath.FromSlash(a.From))
	}
	return filepath.Join(a.LayerDir, a.Name)
}

// CanRestore says why Restore would refuse: something already stands at
// RestorePath, or the archived entry is no longer a real directory. The
// error says where the archived copy stays.
func (a ArchivedCopy) CanRestore() error {
	// A skill of the same name at the layer's top (where promotion puts
	// one) would stand beside the restored copy, two of one name.
	for _, dst := range []string{a.RestorePath(), filepath.Join(a.LayerDir, a.Name)} {
		if _, err := os.Lstat(dst); err == nil {
			return fmt.Errorf("restore %s: %s already exists; move it away first, the archived copy stays in %s", a.Name, dst, a.Dir)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("restore %s: %w", a.Name, err)
		}
	}
	if err := checkRealDir(a.Dir); err != nil {
		return fmt.Errorf("restore %s: %w", a.Name, err)
	}
	return nil
}

// Restore moves the archived directory back to RestorePath and returns it,
// unless CanRestore refuses.
func (a ArchivedCopy) Restore() (string, error) {
	if err := a.CanRestore(); err != nil {
		return "", err
	}
	dst := a.RestorePath()
	if err := realParents(a.LayerDir, filepath.Dir(dst)); err != nil {
		return "", fmt.Errorf("restore %s: %w; the archived copy stays in %s", a.Name, err, a.Dir)
	}
	if err := os.Rename(a.Dir, dst); err != nil {
		return "", fmt.Errorf("restore %s: %w", a.Name, err)
	}
	os.Remove(a.Dir + originSuffix)
	return dst, nil
}

// realParents makes the folders from layer down to dir, refusing any that
// is a symbolic link, so a restore never moves a skill through a link
// planted where its folder was.
func realParents(layer, dir string) error {
	rel, err := filepath.Rel(layer, dir)
	if err != nil || rel == "." {
		return err
	}
	at := layer
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		at = filepath.Join(at, part)
		if err := os.Mkdir(at, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", at, err)
		}
		if err := checkRealDir(at); err != nil {
			return err
		}
	}
	return nil
}
