package repository

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
)

// treeRevision hashes every regular file below the root of fsys, in
// lexical order: its path and size, and either its content or its mode and
// modification time. Dot-directories are left out, as discovery leaves
// them out.
func treeRevision(ctx context.Context, fsys fs.FS, content bool) (Revision, error) {
	h := sha256.New()
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil && name != "." && d != nil && d.IsDir() {
			// A directory that cannot be read is one skill's problem,
			// which discovery reports; the rest of the source syncs. It is
			// hashed as unreadable, so the revision changes once it can be.
			fmt.Fprintf(h, "%d:%s \x00unreadable dir\n", len(name), name)
			return fs.SkipDir
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if name != "." && d.Name()[0] == '.' {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%d:%s %d ", len(name), name, info.Size())
		if !content {
			fmt.Fprintf(h, "%o %d\n", info.Mode(), info.ModTime().UnixNano())
			return nil
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		// A file that cannot be read is one skill's problem, which the
		// cache reports when it stages that skill; it must not fail the
		// whole source. It is hashed as unreadable, so the revision
		// changes once it can be read.
		f, err := fsys.Open(name)
		if err != nil {
			h.Write([]byte("\x00unreadable\n"))
			return nil
		}
		defer f.Close()
		if _, err := io.Copy(h, f); err != nil {
			h.Write([]byte("\x00unreadable\n"))
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash source files: %w", err)
	}
	return Revision(hex.EncodeToString(h.Sum(nil))), nil
}
