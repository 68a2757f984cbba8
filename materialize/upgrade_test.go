package materialize

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/internal/jsonfile"
)

// firstKindHash is a skill hash of the first kind, as skillsync.lock
// version 1 holds it: SHA-256 over the files in path order, each framed
// as len(path) path len(content) content.
func firstKindHash(t *testing.T, files map[string]string) Hash {
	t.Helper()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
		binary.BigEndian.PutUint64(n[:], uint64(len(files[p])))
		h.Write(n[:])
		h.Write([]byte(files[p]))
	}
	var sum Hash
	h.Sum(sum[:0])
	return sum
}

// downgrade rewrites the skill records of source "src" as the first
// version wrote them, with hashes of the first kind, and points the
// manifest at them.
func downgrade(t *testing.T, root string, contents map[string]map[string]string) {
	t.Helper()
	m, err := readManifest(root, true)
	if err != nil {
		t.Fatal(err)
	}
	rec := m.Sources["src"]
	for name, sk := range rec.Skills {
		sk.Hash = firstKindHash(t, contents[name])
	}
	data := bytes.Replace(encodeSkills(rec), []byte(skillsMagic), []byte(oldSkillsMagic), 1)
	ref, err := writeRecord(dest{}, root, data, skillsExt)
	if err != nil {
		t.Fatal(err)
	}
	var x map[string]any
	name := filepath.Join(root, manifestName)
	raw, err := os.ReadFile(name)
	if err != nil || json.Unmarshal(raw, &x) != nil {
		t.Fatalf("read the manifest: %v", err)
	}
	x["sources"].(map[string]any)["src"].(map[string]any)["skill_records"] = ref.String()
	raw, _ = json.Marshal(x)
	if err := os.WriteFile(name, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Records of the first version (before skill hashes of the second kind)
// are read with their hashes computed again from the file records: a
// reader sees the hashes a sync from scratch records, and the next sync
// writes the records anew, and no cached file.
func TestRecordsOfTheFirstVersionAreUpgraded(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	a := map[string]string{"SKILL.md": "---\nname: a\n---\n", "run.sh": "#!/bin/sh\n"}
	b := map[string]string{"SKILL.md": "---\nname: b\n---\n", "ref/x.md": "x"}
	sa, sb := mkSkill("a", a), mkSkill("b", b)
	syncOnce(t, root, "1", sa, sb)
	want := map[string]Hash{"a": hashAlone(t, sa), "b": hashAlone(t, sb)}
	downgrade(t, root, map[string]map[string]string{"a": a, "b": b})

	m, err := readManifest(root, false)
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range want {
		if got := m.Sources["src"].Skills[name].Hash; got != h {
			t.Errorf("skill %s read with hash %s, want %s", name, got, h)
		}
	}

	changes, st := syncOnce(t, root, "1", sa, sb)
	if len(changes) != 0 || st.Written != 0 {
		t.Errorf("the upgrade changed %v and wrote %d files", changes, st.Written)
	}
	m, err = readManifest(root, false)
	if err != nil {
		t.Fatal(err)
	}
	data, err := readRecord(root, m.Sources["src"].skillsRef, skillsExt)
	if err != nil || !bytes.HasPrefix(data, []byte(skillsMagic)) {
		t.Errorf("the skill records were not written anew: %q %v", data[:min(len(data), 30)], err)
	}
	for name, h := range want {
		if got := m.Sources["src"].Skills[name].Hash; got != h {
			t.Errorf("skill %s recorded with hash %s after the sync, want %s", name, got, h)
		}
	}
}

// A target's record of version 1 holds hashes of the first kind: its
// copies get today's hashes from their file records, so a sync trusts
// them as it trusts any record, and writes nothing.
func TestTargetRecordOfVersionOneIsUpgraded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s := TargetSkill{Skill: mkSkill("a", v1)}
	s.Hash = hashAlone(t, s.Skill)
	if _, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{s}}); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, RecordName)
	rec, err := LoadTargetRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Skills["a"].Hash != s.Hash {
		t.Fatalf("the target recorded %s, the skill hashes to %s", rec.Skills["a"].Hash, s.Hash)
	}
	rec.Version, rec.Skills["a"].Hash = 1, firstKindHash(t, v1)
	if err := jsonfile.Write(name, rec, 0o644); err != nil {
		t.Fatal(err)
	}

	back, err := LoadTargetRecord(dir)
	if err != nil || back.Version != TargetRecordVersion || back.Skills["a"].Hash != s.Hash {
		t.Fatalf("read back: version %d hash %s (%v), want %d and %s", back.Version, back.Skills["a"].Hash, err, TargetRecordVersion, s.Hash)
	}
	r, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{s}})
	if err != nil || r.Written != 0 || len(r.Preserved) != 0 {
		t.Errorf("the upgraded target was written: %+v %v", r, err)
	}
	var onDisk struct{ Version int }
	if raw, err := os.ReadFile(name); err != nil || json.Unmarshal(raw, &onDisk) != nil || onDisk.Version != TargetRecordVersion {
		t.Errorf("the target's record is still version %d (%v)", onDisk.Version, err)
	}
	if _, err := fs.Stat(os.DirFS(dir), "a/SKILL.md"); err != nil {
		t.Error(err)
	}
}

// Records of the first version whose file records are lost still list
// their skills (a reader needs only the skill records, as with today's),
// with no hash, since one of the first kind could not be checked; a sync
// keeps the source, hashes its cached files again, records today's hashes
// and writes no file.
func TestRecordsOfTheFirstVersionWithoutFileRecords(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	a := map[string]string{"SKILL.md": "---\nname: a\n---\n", "run.sh": "#!/bin/sh\n"}
	sa := mkSkill("a", a)
	syncOnce(t, root, "1", sa)
	downgrade(t, root, map[string]map[string]string{"a": a})
	m, _, err := loadIndex(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(recordPath(root, m.Sources["src"].filesRef, filesExt)); err != nil {
		t.Fatal(err)
	}

	read, err := ReadSkills(root)
	if err != nil || read.Sources["src"] == nil || read.Sources["src"].Skills["a"] == nil {
		t.Fatalf("a reader lost the skills: %v", err)
	}
	if h := read.Sources["src"].Skills["a"].Hash; !h.IsZero() {
		t.Errorf("read with the unchecked hash %s", h)
	}

	c := open(t, root)
	if w := c.OpenWarnings(); len(w) != 1 || !strings.Contains(w[0], "hashed again") {
		t.Errorf("open warnings: %q", w)
	}
	if c.Manifest().Sources["src"] == nil || c.Current(Source{Name: "src", Revision: "1"}) {
		t.Fatal("the source was dropped, or trusted without its file records")
	}
	res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "1", Skills: []Skill{sa}})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if err := c.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Written != 0 {
		t.Errorf("the sync wrote %d files", st.Written)
	}
	c.Close()
	after, err := readManifest(root, true)
	if err != nil || after.Sources["src"].Skills["a"].Hash != hashAlone(t, sa) {
		t.Errorf("after the sync: %v, hash %s", err, after.Sources["src"].Skills["a"].Hash)
	}
}
