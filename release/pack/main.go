// Command pack writes the release archives of skillsync reproducibly:
// entries sorted, owned by root, dated from SOURCE_DATE_EPOCH (the
// commit's time), so the same commit gives the same bytes. It is run by
// release/build.sh:
//
//	go run ./release/pack -o ARCHIVE.tar.gz|ARCHIVE.zip -prefix DIR/ FILE...
//	go run ./release/pack -checkjson FILE
//	go run ./release/pack -checkbuild GOOS/GOARCH BINARY
package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	out := flag.String("o", "", "archive to write: NAME.tar.gz or NAME.zip")
	prefix := flag.String("prefix", "", "folder the files go in, inside the archive")
	checkJSON := flag.String("checkjson", "", "only check that this file is one JSON value")
	checkBin := flag.String("checkbuild", "", "only check that the binary argument is a release build for this GOOS/GOARCH")
	flag.Parse()
	var err error
	switch {
	case *checkJSON != "":
		err = validJSON(*checkJSON)
	case *checkBin != "" && flag.NArg() == 1:
		err = checkBuild(flag.Arg(0), *checkBin)
	case *out != "":
		err = pack(*out, *prefix, flag.Args(), epoch())
	default:
		err = errors.New("usage: pack -o ARCHIVE -prefix DIR/ FILE... | pack -checkjson FILE | pack -checkbuild GOOS/GOARCH BINARY")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pack:", err)
		os.Exit(1)
	}
}

// epoch is SOURCE_DATE_EPOCH, or the Unix epoch when unset.
func epoch() time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	return time.Unix(0, 0).UTC()
}

func validJSON(name string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// pack writes files (each stored under prefix + its base name) into out.
func pack(out, prefix string, files []string, mtime time.Time) (err error) {
	files = append([]string(nil), files...)
	sort.Slice(files, func(i, j int) bool { return filepath.Base(files[i]) < filepath.Base(files[j]) })
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(out)
		}
	}()
	switch {
	case strings.HasSuffix(out, ".tar.gz"):
		return packTar(f, prefix, files, mtime)
	case strings.HasSuffix(out, ".zip"):
		return packZip(f, prefix, files, mtime)
	}
	return fmt.Errorf("%s: want a .tar.gz or .zip name", out)
}

// mode is 0755 for the program, 0644 for the rest.
func mode(name string) int64 {
	base := filepath.Base(name)
	if base == "skillsync" || strings.HasSuffix(base, ".exe") {
		return 0o755
	}
	return 0o644
}

func packTar(w io.Writer, prefix string, files []string, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: prefix + filepath.Base(name), Mode: mode(name), Size: int64(len(data)),
			ModTime: mtime, Typeflag: tar.TypeReg, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func packZip(w io.Writer, prefix string, files []string, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: prefix + filepath.Base(name), Method: zip.Deflate, Modified: mtime}
		hdr.SetMode(os.FileMode(mode(name)))
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}
