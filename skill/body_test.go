package skill

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"testing/iotest"
	"unicode/utf8"
)

// bigSkill is a SKILL.md of exactly MaxSkillFile bytes: a short
// frontmatter, then a body that fills the rest.
func bigSkill() []byte {
	head := "---\nname: big\ndescription: A skill with a 4 MiB body.\n---\n"
	return append([]byte(head), bytes.Repeat([]byte("instructions\n"), (MaxSkillFile-len(head))/13+1)[:MaxSkillFile-len(head)]...)
}

// countingFS counts the bytes read from its files.
type countingFS struct {
	fs.FS
	read *int64
}

func (c countingFS) Open(name string) (fs.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return countingFile{f, c.read}, nil
}

type countingFile struct {
	fs.File
	read *int64
}

func (c countingFile) Read(p []byte) (int, error) {
	n, err := c.File.Read(p)
	*c.read += int64(n)
	return n, err
}

// Loading reads the frontmatter, not the body.
func TestLoadReadsOnlyFrontmatter(t *testing.T) {
	t.Parallel()
	data := bigSkill()
	var read int64
	fsys := countingFS{fstest.MapFS{"SKILL.md": {Data: data}}, &read}
	s, problems := Load(fsys, "big", "big")
	if len(problems) != 0 || s.Name != "big" {
		t.Fatalf("Load = %+v, %v", s, problems)
	}
	if read > 8<<10 {
		t.Errorf("Load read %d bytes of a %d byte SKILL.md; only the frontmatter is needed", read, len(data))
	}
	body, err := s.ReadBody()
	if err != nil || len(body) != len(data)-len("---\nname: big\ndescription: A skill with a 4 MiB body.\n---\n") {
		t.Errorf("ReadBody = %d bytes, %v", len(body), err)
	}
}

// 400 skill directories sharing one 4 MiB SKILL.md: a catalog of them
// costs their frontmatter, not 400 copies of the body.
func TestLoadManyLargeSkillsAllocatesLittle(t *testing.T) {
	// Not parallel: it measures the memory of the whole process, which parallel tests would add to.
	data := bigSkill()
	fsys := fstest.MapFS{}
	for i := 0; i < 400; i++ {
		fsys[fmt.Sprintf("s%03d/SKILL.md", i)] = &fstest.MapFile{Data: data}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	skills := make([]Skill, 0, 400)
	for i := 0; i < 400; i++ {
		dir := fmt.Sprintf("s%03d", i)
		sub, _ := fs.Sub(fsys, dir)
		s, problems := Load(sub, dir, "big")
		if HasError(problems, false) {
			t.Fatalf("%s: %v", dir, problems)
		}
		skills = append(skills, s)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("loading 400 skills allocated %d KiB", alloc>>10)
	if alloc > 50<<20 {
		t.Errorf("loading 400 skills with a 4 MiB SKILL.md allocated %d MiB; want under 50 MiB", alloc>>20)
	}
	runtime.KeepAlive(skills)
}

// scanHead finds the same head however the reader hands out its bytes.
func TestScanHeadChunking(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"---\nname: a\ndescription: b\n---\nbody\n---\nmore",
		"\ufeff\r\n\r\n---\r\nname: a\r\ndescription: b\r\n--- \r\nbody",
		"\n\n  \n---\nname: a\n---",
		"# no frontmatter\n---\nname: a\n---\n",
		"---\nname: a\n---\r",
		"---\nname: a\n----\n--- x\n---\t\nbody",
		"---\n" + strings.Repeat("p: 1\n", MaxFrontmatter),
		"---\n" + strings.Repeat("x", 3*MaxFrontmatter) + "\n---\n",
		strings.Repeat(" \n", MaxFrontmatter) + "---\nname: a\n---\n",
		"",
	}
	for _, in := range inputs {
		want, wantCapped, _ := scanHead(strings.NewReader(in))
		for name, r := range map[string]io.Reader{
			"one byte": iotest.OneByteReader(strings.NewReader(in)),
			"half":     iotest.HalfReader(strings.NewReader(in)),
			"data+EOF": iotest.DataErrReader(strings.NewReader(in)),
		} {
			got, capped, err := scanHead(r)
			if err != nil || !bytes.Equal(got, want) || capped != wantCapped {
				t.Errorf("%s reader on %.40q: head %d bytes capped %v (%v), want %d bytes capped %v", name, in, len(got), capped, err, len(want), wantCapped)
			}
		}
		if len(want) > maxHead+4096 {
			t.Errorf("%.40q: head of %d bytes is over the cap", in, len(want))
		}
	}
}

// A frontmatter never closed within what is read is too large, however
// long its lines.
func TestHugeFrontmatterLines(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"---\nname: a\ndescription: " + strings.Repeat("x", 3*MaxFrontmatter) + "\n---\n",
		"---\n" + strings.Repeat("y", 3*MaxFrontmatter),
		"---\nname: a\r\ndescription: |\r\n" + strings.Repeat("  z\r\n", MaxFrontmatter/4) + "---\r\n",
	} {
		_, problems := Load(fstest.MapFS{"SKILL.md": {Data: []byte(in)}}, "a", "a")
		if got := rules(problems); len(got) != 1 || got[0] != "error:frontmatter-too-large" {
			t.Errorf("%.30q: problems %v", in, got)
		}
	}
	// CRLF frontmatter just under the limit once CRLF is LF is accepted.
	in := "---\r\nname: a\r\ndescription: |\r\n" + strings.Repeat("  bb\r\n", (MaxFrontmatter-40)/5) + "---\r\n"
	if len(in) <= MaxFrontmatter {
		t.Fatalf("test input of %d bytes is too small", len(in))
	}
	if _, problems := Load(fstest.MapFS{"SKILL.md": {Data: []byte(in)}}, "a", "a"); len(problems) != 1 || problems[0].Rule != "description-too-long" {
		t.Errorf("CRLF frontmatter under the limit: %v", rules(problems))
	}
}

func TestReadBodyErrors(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: a\ndescription: b\n---\nbody")}}
	s, _ := Load(fsys, "a", "a")
	fsys["SKILL.md"] = &fstest.MapFile{Data: []byte("no frontmatter any more")}
	if _, err := s.ReadBody(); err == nil || !strings.Contains(err.Error(), "no frontmatter") {
		t.Errorf("ReadBody of a changed file: %v", err)
	}
	fsys["SKILL.md"] = &fstest.MapFile{Data: make([]byte, MaxSkillFile+1)}
	if _, err := s.ReadBody(); err == nil {
		t.Error("ReadBody of a file over MaxSkillFile must fail")
	}
	delete(fsys, "SKILL.md")
	if _, err := s.ReadBody(); err == nil {
		t.Error("ReadBody of a missing file must fail")
	}
}

// ReadBodyPage cuts the body at a character's end, never inside a
// multi-byte character or between CR and LF, and End is where the rest
// starts in the file: what it shows and what read on from End gives back
// the body whole, whatever the cut.
func TestReadBodyPage(t *testing.T) {
	t.Parallel()
	head := "---\r\nname: page\r\ndescription: A skill read in pages.\r\n---\r\n"
	body := "é日\r\nx🙂\r\n\r\nend"
	file := []byte(head + body)
	sum := sha256.Sum256(file)
	s := Skill{Name: "page", Path: "page", File: "SKILL.md", Files: fstest.MapFS{"SKILL.md": {Data: file}}}
	for n := 0; n <= len([]rune(body))+1; n++ {
		page, err := s.ReadBodyPage(n)
		if err != nil {
			t.Fatal(err)
		}
		shown := file[page.Start:page.End]
		if page.Start != int64(len(head)) || page.Size != int64(len(file)) || page.Sum != sum ||
			page.Text != strings.ReplaceAll(string(shown), "\r\n", "\n") || !utf8.Valid(shown) ||
			utf8.RuneCount(shown) > n || page.Cut() != (page.End < page.Size) {
			t.Errorf("ReadBodyPage(%d) = %+v", n, page)
		}
		if rest := string(file[page.End:]); strings.HasPrefix(rest, "\n") || string(shown)+rest != body {
			t.Errorf("ReadBodyPage(%d) ends at %d: %q then %q", n, page.End, shown, rest)
		}
		if n >= len([]rune(body)) && page.Cut() {
			t.Errorf("ReadBodyPage(%d) cut a body of %d characters", n, len([]rune(body)))
		}
	}

	// A 4 MiB body: its first 24,000 characters, and End where they end.
	data := bigSkill()
	big := Skill{Name: "big", Path: "big", File: "SKILL.md", Files: fstest.MapFS{"SKILL.md": {Data: data}}}
	page, err := big.ReadBodyPage(24000)
	if err != nil || len([]rune(page.Text)) != 24000 || !page.Cut() || page.Size != MaxSkillFile ||
		string(data[page.Start:page.End]) != page.Text || page.Sum != sha256.Sum256(data) {
		t.Errorf("ReadBodyPage(24000) of a 4 MiB SKILL.md: %d characters, %d to %d of %d, %v", len([]rune(page.Text)), page.Start, page.End, page.Size, err)
	}
}
