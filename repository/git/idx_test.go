package git

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"

	"github.com/skillsync/skillsync/internal/gittest"
)

// The index read in place finds every object of a pack where git
// show-index says it is, and no other.
func TestIdxFindsWhatGitIndexed(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, "main")
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("skills/s%03d/SKILL.md", i)] = strings.Repeat(fmt.Sprintf("line %d\n", i), 1+i%7)
	}
	r.CommitFiles("main", "many objects", files)
	pack := packOf(t, r.Dir, true)
	if out, err := exec.Command("git", "index-pack", "--index-version=2", pack).CombinedOutput(); err != nil {
		t.Fatalf("git index-pack: %v\n%s", err, out)
	}
	data, err := os.ReadFile(strings.TrimSuffix(pack, ".pack") + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := parseIdx(data)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "show-index")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git show-index: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 600 {
		t.Fatalf("%d objects in the pack", len(lines))
	}
	// Read whole, and read in place from its file.
	inPlace, err := openIdx(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, idx := range []*packIdx{idx, inPlace} {
		for _, line := range lines {
			f := strings.Fields(line) // offset hash (crc)
			want, _ := strconv.ParseInt(f[0], 10, 64)
			got, err := idx.FindOffset(plumbing.NewHash(f[1]))
			if err != nil || got != want {
				t.Fatalf("object %s at %d, %v; git says %d (whole: %v)", f[1], got, err, want, idx.data != nil)
			}
		}
		for _, missing := range []string{strings.Repeat("00", 20), strings.Repeat("ff", 20), strings.Repeat("7a", 20)} {
			if _, err := idx.FindOffset(plumbing.NewHash(missing)); !errors.Is(err, plumbing.ErrObjectNotFound) {
				t.Errorf("object %s: %v, want not found", missing, err)
			}
		}
	}
	if inPlace.data != nil || idx.data == nil {
		t.Error("the index was not read as asked")
	}
}

// Offsets past 2 GiB come from the table of large offsets; an index that
// does not hold together is refused, and a large offset past its table
// is an error, never a read out of bounds.
func TestIdxLargeOffsetsAndDamage(t *testing.T) {
	t.Parallel()
	w := new(idxfile.Writer)
	objects := map[plumbing.Hash]uint64{
		plumbing.NewHash(strings.Repeat("11", 20)): 12,
		plumbing.NewHash(strings.Repeat("22", 20)): 3 << 30,
		plumbing.NewHash(strings.Repeat("33", 20)): 5 << 32,
	}
	if err := w.OnHeader(uint32(len(objects))); err != nil {
		t.Fatal(err)
	}
	for h, off := range objects {
		w.Add(h, off, 0)
	}
	if err := w.OnFooter(plumbing.ZeroHash); err != nil {
		t.Fatal(err)
	}
	mem, err := w.Index()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := idxfile.NewEncoder(&buf).Encode(mem); err != nil {
		t.Fatal(err)
	}
	idx, err := parseIdx(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range objects {
		if got, err := idx.FindOffset(h); err != nil || uint64(got) != want {
			t.Errorf("object %s at %d, %v; want %d", h, got, err, want)
		}
	}
	// The large offset table cut short: the object past it is an error.
	data := buf.Bytes()
	cut := append(append([]byte{}, data[:len(data)-40-8]...), data[len(data)-40:]...)
	idx, err = parseIdx(cut)
	if err != nil {
		t.Fatal(err)
	}
	errs := 0
	for h := range objects {
		if _, err := idx.FindOffset(h); errors.Is(err, errBadIndex) {
			errs++
		}
	}
	if errs != 1 {
		t.Errorf("%d objects past a cut large offset table failed, want 1", errs)
	}
	for name, bad := range map[string][]byte{
		"empty":       nil,
		"version 1":   append([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 1}, data[8:]...),
		"truncated":   data[:len(data)/2],
		"header only": data[:8+256*4],
	} {
		if _, err := parseIdx(bad); !errors.Is(err, errBadIndex) {
			t.Errorf("%s: %v, want errBadIndex", name, err)
		}
	}
	// A fanout that decreases.
	bad := append([]byte{}, data...)
	copy(bad[8+4*0x20:], []byte{0xff, 0xff, 0xff, 0xff})
	if _, err := parseIdx(bad); !errors.Is(err, errBadIndex) {
		t.Errorf("decreasing fanout: %v, want errBadIndex", err)
	}
}
