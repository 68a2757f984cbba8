package materialize

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"sort"

	"github.com/skillsync/skillsync/internal/skillhash"
	"github.com/skillsync/skillsync/skill"
)

// SkillHash returns the hash the manifest records for a skill whose files
// are list inside fsys (internal/skillhash: SHA-256 over each file's path,
// size and SHA-256, in path order). Contents stream: the skill is never
// held in memory whole. A file whose size differs from its listing
// or changes while it is read is an error, so the hash always describes
// one consistent set of bytes.
func SkillHash(ctx context.Context, fsys fs.FS, list []skill.File) (Hash, error) {
	files := make([]skill.File, len(list))
	copy(files, list)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	h := skillhash.New()
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return Hash{}, err
		}
		if err := hashFileInto(h, fsys, f); err != nil {
			return Hash{}, err
		}
	}
	return h.Sum(), nil
}

func hashFileInto(h *skillhash.Hasher, fsys fs.FS, f skill.File) error {
	r, err := fsys.Open(f.Path)
	if err != nil {
		return fmt.Errorf("hash %s: %w", f.Path, err)
	}
	defer r.Close()
	info, err := r.Stat()
	if err != nil {
		return fmt.Errorf("hash %s: %w", f.Path, err)
	}
	if !info.Mode().IsRegular() || info.Size() != f.Size {
		return fmt.Errorf("hash %s: the file changed since it was listed", f.Path)
	}
	content := sha256.New()
	copied, err := io.Copy(content, io.LimitReader(r, f.Size+1))
	if err != nil {
		return fmt.Errorf("hash %s: %w", f.Path, err)
	}
	if copied != f.Size {
		return fmt.Errorf("hash %s: the file changed while it was read", f.Path)
	}
	var sum Hash
	content.Sum(sum[:0])
	h.Add(f.Path, f.Size, sum)
	return nil
}
