package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPackIsReproducibleAndReadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe := filepath.Join(dir, "skillsync")
	readme := filepath.Join(dir, "README.md")
	os.WriteFile(exe, []byte("binary"), 0o600)
	os.WriteFile(readme, []byte("# readme"), 0o600)
	when := time.Unix(1796128705, 0).UTC()
	for _, ext := range []string{".tar.gz", ".zip"} {
		a, b := filepath.Join(dir, "a"+ext), filepath.Join(dir, "b"+ext)
		if err := pack(a, "x_1/", []string{readme, exe}, when); err != nil {
			t.Fatal(err)
		}
		if err := pack(b, "x_1/", []string{exe, readme}, when); err != nil {
			t.Fatal(err)
		}
		da, _ := os.ReadFile(a)
		db, _ := os.ReadFile(b)
		if !bytes.Equal(da, db) {
			t.Errorf("%s: two packs of the same files differ", ext)
		}
		got := map[string]string{}
		modes := map[string]os.FileMode{}
		if ext == ".zip" {
			zr, err := zip.NewReader(bytes.NewReader(da), int64(len(da)))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				rc, _ := f.Open()
				data, _ := io.ReadAll(rc)
				rc.Close()
				got[f.Name], modes[f.Name] = string(data), f.Mode().Perm()
			}
		} else {
			gz, err := gzip.NewReader(bytes.NewReader(da))
			if err != nil {
				t.Fatal(err)
			}
			tr := tar.NewReader(gz)
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				data, _ := io.ReadAll(tr)
				got[h.Name], modes[h.Name] = string(data), os.FileMode(h.Mode).Perm()
				if !h.ModTime.Equal(when) || h.Uname != "root" {
					t.Errorf("%s: header %+v", h.Name, h)
				}
			}
		}
		if got["x_1/skillsync"] != "binary" || got["x_1/README.md"] != "# readme" || len(got) != 2 {
			t.Errorf("%s holds %v", ext, got)
		}
		if modes["x_1/skillsync"] != 0o755 || modes["x_1/README.md"] != 0o644 {
			t.Errorf("%s modes %v", ext, modes)
		}
	}
	if err := pack(filepath.Join(dir, "c.rar"), "", []string{exe}, when); err == nil {
		t.Error("an unknown archive kind was written")
	}
	if _, err := os.Stat(filepath.Join(dir, "c.rar")); err == nil {
		t.Error("a failed pack left its file")
	}
}
