package skill

import "testing"

func TestWindowsNameProblem(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"CON", "con", "nul.txt", "Aux.md", "COM1", "lpt9.log", "com¹", "a:b", "what?", "x*", `q"`, "a<b", "a>b", "p|q", "trail.", "trail ", "tab\there", "CON .txt"} {
		if WindowsNameProblem(bad) == "" {
			t.Errorf("%q passes, want a problem", bad)
		}
	}
	for _, good := range []string{"SKILL.md", "console.md", "nullable", "com10", "COM0", "lpt", "a.b.c", ".env.example", "ünïcode", "com1x.txt"} {
		if why := WindowsNameProblem(good); why != "" {
			t.Errorf("%q: %s, want none", good, why)
		}
	}
}

func TestFoldName(t *testing.T) {
	t.Parallel()
	for _, same := range [][2]string{
		{"README.md", "readme.md"}, {"K", "\u212a"}, {"Σ", "ς"}, {"σ", "ς"}, {"Docs/A", "docs/a"},
		// One name to macOS (APFS compares names normalization-blind,
		// HFS+ stores them decomposed): é as one character and as e with
		// a combining accent, in either case.
		{"caf\u00e9.md", "cafe\u0301.md"}, {"CAF\u00c9.md", "cafe\u0301.md"}, {"\u212b", "A\u030a"},
	} {
		if FoldName(same[0]) != FoldName(same[1]) {
			t.Errorf("%q and %q fold apart", same[0], same[1])
		}
	}
	if FoldName("a.md") == FoldName("b.md") {
		t.Error("different names fold together")
	}
}

func TestCaseCollisionAndPortability(t *testing.T) {
	t.Parallel()
	if p, o := CaseCollision([]string{"Docs/a.md", "SKILL.md", "docs/b.md"}); p != "docs/b.md" || o != "Docs" {
		t.Errorf("CaseCollision = %q, %q", p, o)
	}
	if p, o := CaseCollision([]string{"SKILL.md", "r\u00e9f/a.md", "re\u0301f/b.md"}); p != "re\u0301f/b.md" || o != "r\u00e9f" {
		t.Errorf("CaseCollision of a folder in NFC and in NFD = %q, %q", p, o)
	}
	if p, _ := CaseCollision([]string{"SKILL.md", "docs/a.md", "docs/b.md"}); p != "" {
		t.Errorf("CaseCollision found %q in distinct paths", p)
	}
	got := Portability("con", "skills/con", []File{{Path: "SKILL.md"}, {Path: "README.md"}, {Path: "readme.md"}, {Path: "x/a:b"}})
	files := map[string]bool{}
	for _, p := range got {
		if p.Level != Warning || p.Rule != "not-portable" || p.Skill != "con" {
			t.Errorf("problem %+v", p)
		}
		files[p.File] = true
	}
	for _, want := range []string{"skills/con", "skills/con/readme.md", "skills/con/x/a:b"} {
		if !files[want] {
			t.Errorf("no problem names %s: %v", want, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d problems, want 3: %v", len(got), got)
	}
	if got := Portability("pdf", "pdf", []File{{Path: "SKILL.md"}, {Path: "ref/a.md"}}); len(got) != 0 {
		t.Errorf("a portable skill has problems: %v", got)
	}
}
