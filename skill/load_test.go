package skill

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func rules(problems []Problem) []string {
	var out []string
	for _, p := range problems {
		out = append(out, string(p.Level)+":"+p.Rule)
	}
	return out
}

func TestParseRules(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 65)
	tests := []struct {
		name string
		dir  string
		text string
		want []string // level:rule, in order; nil means no problems
	}{
		{"valid", "pdf", "---\nname: pdf\ndescription: Read PDFs.\n---\nbody\n", nil},
		{"no frontmatter", "pdf", "# just markdown\n", []string{"error:frontmatter-missing"}},
		{"unterminated", "pdf", "---\nname: pdf\ndescription: x\n", []string{"error:frontmatter-unterminated"}},
		{"not a mapping", "pdf", "---\n- a\n- b\n---\n", []string{"error:frontmatter-not-mapping"}},
		{"empty frontmatter", "pdf", "---\n---\nbody", []string{"error:frontmatter-not-mapping"}},
		{"bad yaml", "pdf", "---\nname: [unclosed\n---\n", []string{"error:frontmatter-yaml"}},
		{"name missing", "pdf", "---\ndescription: x\n---\n", []string{"error:name-missing"}},
		{"name empty", "pdf", "---\nname: \"\"\ndescription: x\n---\n", []string{"error:name-missing"}},
		{"description missing", "pdf", "---\nname: pdf\n---\n", []string{"error:description-missing"}},
		{"description blank", "pdf", "---\nname: pdf\ndescription: '  '\n---\n", []string{"error:description-missing"}},
		{"name with slash", "pdf", "---\nname: a/b\ndescription: x\n---\n", []string{"error:name-unsafe"}},
		{"name with backslash", "pdf", "---\nname: a\\b\ndescription: x\n---\n", []string{"error:name-unsafe"}},
		{"name with dot first", "pdf", "---\nname: .hidden\ndescription: x\n---\n", []string{"error:name-unsafe"}},
		{"name with ESC", "pdf", "---\nname: \"a\\e[2Jb\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"name with BEL", "pdf", "---\nname: \"pdf\\a\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"name with newline", "pdf", "---\nname: \"p\\ndf\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"name with NUL", "pdf", "---\nname: \"p\\0df\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"name with DEL", "pdf", "---\nname: \"p\\x7fdf\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"name with C1 CSI", "pdf", "---\nname: \"p\\x9bdf\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"name with RLO", "pdf", "---\nname: \"fdp\u202e\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"name with isolate", "pdf", "---\nname: \"\u2066pdf\u2069\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"name with LRM", "pdf", "---\nname: \"pdf\u200e\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"name with ALM", "pdf", "---\nname: \"pdf\u061c\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"name with zero width space", "pdf", "---\nname: \"p\u200bdf\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"name with line separator", "pdf", "---\nname: \"p\u2028df\"\ndescription: x\n---\n", []string{"error:name-control-char"}},
		{"description with controls kept", "pdf", "---\nname: pdf\ndescription: \"x\\e[2J \u202e y\"\n---\n", []string{"warning:field-control-char"}},
		{"description with tag characters", "pdf", "---\nname: pdf\ndescription: \"Read PDFs.\U000e0049\U000e0067\"\n---\n", []string{"warning:field-control-char"}},
		{"description over lines and tabs", "pdf", "---\nname: pdf\ndescription: |\n  Read PDFs.\n  \tThen tables.\n---\n", nil},
		{"other fields with controls", "pdf", "---\nname: pdf\ndescription: x\nlicense: \"MIT\\a\"\ncompatibility: \"a\\x9bb\"\nversion: \"1\u200b\"\n" +
			"author: \"\u2066Ann\u2069\"\nallowed-tools: \"Read\\rBash\"\ntriggers: [\"x\\0\"]\ntags: [\"t\u00ad\"]\nmetadata: {team: \"a\\eb\"}\n---\n",
			slices.Repeat([]string{"warning:field-control-char"}, 8)},
		{"name over 255 bytes", "pdf", "---\nname: " + strings.Repeat("a", 256) + "\ndescription: x\n---\n", []string{"error:name-unsafe"}},
		{"name too long", long, "---\nname: " + long + "\ndescription: x\n---\n", []string{"warning:name-too-long"}},
		{"name upper case", "PDF", "---\nname: PDF\ndescription: x\n---\n", []string{"warning:name-not-lowercase"}},
		{"name underscore", "my_pdf", "---\nname: my_pdf\ndescription: x\n---\n", []string{"warning:name-invalid-chars"}},
		{"name leading hyphen", "-pdf", "---\nname: -pdf\ndescription: x\n---\n", []string{"warning:name-hyphen"}},
		{"name trailing hyphen", "pdf-", "---\nname: pdf-\ndescription: x\n---\n", []string{"warning:name-hyphen"}},
		{"name double hyphen", "a--b", "---\nname: a--b\ndescription: x\n---\n", []string{"warning:name-hyphen"}},
		{"name unicode letters", "café", "---\nname: café\ndescription: x\n---\n", nil},
		{"name NFKC", "pdf", "---\nname: ｐｄｆ\ndescription: x\n---\n", nil},
		{"name differs from dir", "other", "---\nname: pdf\ndescription: x\n---\n", []string{"warning:name-mismatch"}},
		{"description too long", "pdf", "---\nname: pdf\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", []string{"warning:description-too-long"}},
		{"description at limit", "pdf", "---\nname: pdf\ndescription: " + strings.Repeat("d", 1024) + "\n---\n", nil},
		{"compatibility too long", "pdf", "---\nname: pdf\ndescription: x\ncompatibility: " + strings.Repeat("c", 501) + "\n---\n", []string{"warning:compatibility-too-long"}},
		{"unknown field", "pdf", "---\nname: pdf\ndescription: x\ncolour: blue\n---\n", []string{"warning:field-unknown"}},
		{"agent field", "pdf", "---\nname: pdf\ndescription: x\nargument-hint: FILE\nmodel: opus\n---\n", nil},
		{"alias", "pdf", "---\nskill: pdf\nsummary: x\n---\n", []string{"warning:field-alias", "warning:field-alias"}},
		{"when_to_use alone", "pdf", "---\nname: pdf\nwhen_to_use: x\n---\n", []string{"warning:description-from-when-to-use"}},
		{"when_to_use not a string", "pdf", "---\nname: pdf\nwhen_to_use: [x]\n---\n", []string{"error:description-missing"}},
		{"claude code fields", "pdf", "---\nname: pdf\ndescription: x\nwhen_to_use: y\nargument-hint: \"[file]\"\narguments: [file]\n" +
			"disable-model-invocation: true\nuser-invocable: false\ndisallowed-tools: Write\nmodel: haiku\neffort: high\n" +
			"context: fork\nagent: Explore\nhooks: {}\npaths: [\"src/**\"]\nshell: bash\n---\n", nil},
		{"skillsync extensions", "pdf", "---\nname: pdf\ndescription: x\nversion: 1\nauthor: a\ntags: [t]\ntriggers: [x]\n---\n", nil},
		{"duplicate via alias", "pdf", "---\nname: pdf\nskill: other\ndescription: x\n---\n", []string{"warning:field-alias", "warning:field-duplicate"}},
		{"name is a list", "pdf", "---\nname: [a]\ndescription: x\n---\n", []string{"error:field-type", "error:name-missing"}},
		{"metadata not a map", "pdf", "---\nname: pdf\ndescription: x\nmetadata: 3\n---\n", []string{"warning:field-type"}},
		{"frontmatter too large", "pdf", "---\nname: pdf\ndescription: x\npad: " + strings.Repeat("p", MaxFrontmatter) + "\n---\n", []string{"error:frontmatter-too-large"}},
		{"unterminated and huge", "pdf", "---\n" + strings.Repeat("p: 1\n", MaxFrontmatter), []string{"error:frontmatter-too-large"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := Parse([]byte(tt.text), tt.dir)
			got := rules(problems)
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("problems = %v, want %v\n%v", got, tt.want, problems)
			}
		})
	}
}

func TestParseFields(t *testing.T) {
	t.Parallel()
	text := "\ufeff\r\n\r\n---\r\n" +
		"name: pdf\r\n" +
		"summary: Extract text.\r\n" +
		"license: MIT\r\n" +
		"compatibility: needs poppler\r\n" +
		"version: 1.2\r\n" +
		"author: Ann\r\n" +
		"metadata:\r\n  team: docs\r\n  level: 3\r\n  nested: {a: 1}\r\n" +
		"tools: Read, Bash Grep\r\n" +
		"trigger_patterns: [convert a pdf, extract tables]\r\n" +
		"tag: docs, pdf\r\n" +
		"disable-model-invocation: true\r\n" +
		"---\r\n# PDF\r\nbody\r\n"
	s, problems := Parse([]byte(text), "pdf")
	for _, p := range problems {
		if p.Rule != "field-alias" {
			t.Errorf("unexpected problem %v", p)
		}
	}
	check := func(field, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
	check("name", s.Name, "pdf")
	check("description", s.Description, "Extract text.")
	check("license", s.License, "MIT")
	check("compatibility", s.Compatibility, "needs poppler")
	check("version", s.Version, "1.2")
	check("author", s.Author, "Ann")
	check("metadata.team", s.Metadata["team"], "docs")
	check("metadata.level", s.Metadata["level"], "3")
	check("metadata.nested", s.Metadata["nested"], "a: 1")
	check("allowed-tools", strings.Join(s.AllowedTools, "|"), "Read|Bash|Grep")
	check("triggers", strings.Join(s.Triggers, "|"), "convert a pdf|extract tables")
	check("tags", strings.Join(s.Tags, "|"), "docs|pdf")
	if _, err := s.ReadBody(); err == nil {
		t.Error("ReadBody of a parsed skill without files must fail")
	}
	loaded, _ := Load(fstest.MapFS{"SKILL.md": {Data: []byte(text)}}, "pdf", "pdf")
	body, err := loaded.ReadBody()
	check("body", body, "# PDF\nbody\n")
	if err != nil {
		t.Error(err)
	}
	if !s.DisableModelInvocation() {
		t.Error("disable-model-invocation: true was not kept")
	}
}

func TestAliasesMapToFields(t *testing.T) {
	t.Parallel()
	for alias, f := range keys {
		text := "---\nname: n\ndescription: d\n" + alias + ": v\n---\n"
		if f == fieldName {
			text = "---\n" + alias + ": v\ndescription: d\n---\n"
		} else if f == fieldDescription {
			text = "---\nname: n\n" + alias + ": v\n---\n"
		} else if f == fieldMetadata {
			text = "---\nname: n\ndescription: d\n" + alias + ": {k: v}\n---\n"
		}
		s, _ := Parse([]byte(text), "")
		got := map[field]string{
			fieldName: s.Name, fieldDescription: s.Description, fieldLicense: s.License,
			fieldCompatibility: s.Compatibility, fieldVersion: s.Version, fieldAuthor: s.Author,
			fieldMetadata: s.Metadata["k"], fieldAllowedTools: strings.Join(s.AllowedTools, ""),
			fieldTriggers: strings.Join(s.Triggers, ""), fieldTags: strings.Join(s.Tags, ""),
		}[f]
		if got != "v" {
			t.Errorf("alias %q: field %s = %q, want %q", alias, canonical[f], got, "v")
		}
	}
}

func TestProblemLines(t *testing.T) {
	t.Parallel()
	text := "\n\n---\nname: Bad_Name\ndescription: x\ncolour: blue\n---\n"
	_, problems := Parse([]byte(text), "Bad_Name")
	want := map[string]int{"name-not-lowercase": 4, "name-invalid-chars": 4, "field-unknown": 6}
	for _, p := range problems {
		if line, ok := want[p.Rule]; ok && p.Line != line {
			t.Errorf("%s at line %d, want %d", p.Rule, p.Line, line)
		}
		delete(want, p.Rule)
	}
	if len(want) > 0 {
		t.Errorf("missing problems: %v", want)
	}
	// yaml.v3 places this error on the line of the unclosed flow (its line
	// 2); three blank lines and the opening "---" come before it.
	_, problems = Parse([]byte("\n\n\n---\nname: a\ndescription: b\nx: [1\n---\n"), "a")
	if len(problems) != 1 || problems[0].Rule != "frontmatter-yaml" || problems[0].Line != 6 {
		t.Errorf("yaml error = %+v, want frontmatter-yaml at line 6", problems)
	}
}

func TestBillionLaughsRefused(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("---\nname: lol\ndescription: x\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + itoa(i) + ": &a" + itoa(i) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	b.WriteString("---\n")
	_, problems := Parse([]byte(b.String()), "lol")
	found := false
	for _, p := range problems {
		if p.Rule == "frontmatter-aliases" && p.Level == Error {
			found = true
		}
	}
	if !found {
		t.Fatalf("billion laughs not refused: %v", rules(problems))
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestLoadFromFS(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"SKILL.md":         {Data: []byte("---\nname: pdf\ndescription: x\n---\n")},
		"scripts/run.sh":   {Data: []byte("#!/bin/sh\n"), Mode: 0o755},
		"references/a.md":  {Data: []byte("a")},
		".git/config":      {Data: []byte("x")},
		"sub/dir/deep.txt": {Data: []byte("deep")},
	}
	s, problems := Load(fsys, "skills/pdf", "pdf")
	if len(problems) != 0 || s.Name != "pdf" || s.File != "SKILL.md" || s.Path != "skills/pdf" {
		t.Fatalf("Load = %+v, %v", s, problems)
	}
	files, problems := ListFiles(fsys, "skills/pdf", 0)
	var names []string
	for _, f := range files {
		names = append(names, f.Path)
	}
	if got := strings.Join(names, " "); got != "SKILL.md references/a.md scripts/run.sh sub/dir/deep.txt" || len(problems) != 0 {
		t.Errorf("files = %s, problems %v", got, problems)
	}
	_, problems = ListFiles(fsys, "skills/pdf", 3)
	if !HasError(problems, false) || problems[0].File != "skills/pdf/SKILL.md" {
		t.Errorf("a file over the size limit must be an error of the skill, got %v", problems)
	}
	// The problem names the setting that raises the limit.
	if msg := problems[0].Message; problems[0].Rule != "file-too-large" || !strings.Contains(msg, "over the limit of 3 bytes") || !strings.Contains(msg, "max_file_size") {
		t.Errorf("file-too-large says %q, not the setting that raises the limit", msg)
	}
}

func TestLoadMissingAndLowercase(t *testing.T) {
	t.Parallel()
	_, problems := Load(fstest.MapFS{"README.md": {Data: []byte("x")}}, "a", "a")
	if got := rules(problems); len(got) != 1 || got[0] != "error:skill-md-missing" {
		t.Errorf("problems = %v", got)
	}
	s, problems := Load(fstest.MapFS{"skill.md": {Data: []byte("---\nname: a\ndescription: b\n---\n")}}, "a", "a")
	// Read, with a warning: agents that look for SKILL.md alone would
	// never see it.
	if got := rules(problems); len(got) != 1 || got[0] != "warning:skill-md-name" || s.File != "skill.md" || s.Name != "a" {
		t.Errorf("skill.md: %+v %v", s, got)
	}
	if got := rules(Strict(problems)); len(got) != 1 || got[0] != "error:skill-md-name" {
		t.Errorf("skill.md in strict mode: %v", got)
	}
	_, problems = Load(fstest.MapFS{"SKILL.md": {Mode: 0o755 | 1<<31}}, "a", "a")
	if got := rules(problems); len(got) != 1 || got[0] != "error:skill-md-not-regular" {
		t.Errorf("a directory named SKILL.md: problems = %v", got)
	} else if msg := problems[0].Message; !strings.Contains(msg, "SKILL.md is a directory, not a file") || !strings.Contains(msg, "write SKILL.md as a file") {
		// Said in words, with the fix, not as a mode (d---------).
		t.Errorf("a directory named SKILL.md: %q", msg)
	}
}

func TestValidName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"pdf": true, "a-b": true, "Ünï": true, "": false, ".x": false, "a/b": false, "a\\b": false,
		"a\x00b": false, strings.Repeat("x", 255): true, strings.Repeat("x", 256): false,
		"a\x1bb": false, "a\nb": false, "a\u202eb": false, "a\u2066b": false, "a\x7fb": false, "a\u0085b": false,
		"a\xffb": false, "日本": true, "ab日/c": false, "é\\x": false, "a日\x1b": false, "aé\u202e": false, "ab\xff": false,
		"aé": true, "a-é-b": true,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

// A problem printed on a terminal shows a hostile path or message as
// escapes, never as control sequences or extra lines.
func TestProblemStringEscapes(t *testing.T) {
	t.Parallel()
	p := Problem{Level: Warning, Rule: "r", Source: "team", Path: "skills/\x1b[2Jx", File: "skills/\x1b[2Jx/SKILL.md\nfake: row", Line: 3, Message: "bad \u202e thing"}
	got := p.String()
	want := `team:skills/\x1b[2Jx/SKILL.md\nfake: row:3: warning: bad \u202e thing (r)`
	if got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// A problem of no place begins as the program's own messages do.
	p = Problem{Level: Error, Rule: "cache-unreadable", Message: "the cache is corrupt"}
	if got, want := p.String(), "skillsync: error: the cache is corrupt (cache-unreadable)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestAllowedTools(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml, raw string
		want            []string
	}{
		{"spaces", "Read Grep Glob", "Read Grep Glob", []string{"Read", "Grep", "Glob"}},
		{"patterns with spaces", "Bash(git add:*) Bash(npm run test:*) Read", "Bash(git add:*) Bash(npm run test:*) Read",
			[]string{"Bash(git add:*)", "Bash(npm run test:*)", "Read"}},
		{"commas", "Read, Grep,Glob", "Read, Grep,Glob", []string{"Read", "Grep", "Glob"}},
		{"commas and patterns", `"Read, Bash(git diff *), Bash(a, b)"`, "Read, Bash(git diff *), Bash(a, b)",
			[]string{"Read", "Bash(git diff *)", "Bash(a, b)"}},
		{"nested parentheses", "Bash(echo (a b)) Read", "Bash(echo (a b)) Read", []string{"Bash(echo (a b))", "Read"}},
		{"tabs and runs of spaces", "\"Read\\t\\tGrep   Glob \"", "Read\t\tGrep   Glob", []string{"Read", "Grep", "Glob"}},
		{"mcp tools", "mcp__linear__create_issue Read", "mcp__linear__create_issue Read", []string{"mcp__linear__create_issue", "Read"}},
		{"unclosed parenthesis", "Read Bash(git add Grep", "Read Bash(git add Grep", []string{"Read", "Bash(git add Grep"}},
		{"stray closing parenthesis", "Read) Grep", "Read) Grep", []string{"Read)", "Grep"}},
		{"block scalar", "|\n  Read\n  Bash(git log:*)\n", "Read\nBash(git log:*)", []string{"Read", "Bash(git log:*)"}},
		{"yaml list", "\n  - Bash(git add:*)\n  - Read\n  - \" Grep \"\n", "Bash(git add:*) Read Grep", []string{"Bash(git add:*)", "Read", "Grep"}},
		{"flow list", "[Read, \"Bash(a, b)\"]", "Read Bash(a, b)", []string{"Read", "Bash(a, b)"}},
		{"empty", `""`, "", nil},
		{"null", "~", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, problems := Parse([]byte("---\nname: pdf\ndescription: x\nallowed-tools: "+tt.yaml+"\n---\n"), "pdf")
			if len(problems) != 0 {
				t.Fatalf("problems: %v", problems)
			}
			if s.AllowedToolsRaw != tt.raw {
				t.Errorf("raw = %q, want %q", s.AllowedToolsRaw, tt.raw)
			}
			if !slices.Equal(s.AllowedTools, tt.want) {
				t.Errorf("tools = %q, want %q", s.AllowedTools, tt.want)
			}
		})
	}
}

// Claude Code's when_to_use is its own field: it is not merged into
// description, and its text is kept.
func TestWhenToUseKept(t *testing.T) {
	t.Parallel()
	s, problems := Parse([]byte("---\nname: pdf\ndescription: Read PDFs.\nwhen_to_use: When the user drops a PDF.\n---\n"), "pdf")
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	if s.Description != "Read PDFs." || s.WhenToUse() != "When the user drops a PDF." || s.Extra["when_to_use"] != "When the user drops a PDF." {
		t.Errorf("description %q, when_to_use %q", s.Description, s.WhenToUse())
	}
	s, problems = Parse([]byte("---\nname: pdf\nwhen_to_use: When the user drops a PDF.\n---\n"), "pdf")
	if HasError(problems, false) || s.Description != "When the user drops a PDF." || s.WhenToUse() != s.Description || problems[0].Line != 3 {
		t.Errorf("when_to_use alone: description %q, problems %v", s.Description, problems)
	}
}

// Only strict mode reports fields outside the specification: clients'
// fields and skillsync's extensions alike, each on its line.
func TestStrictReportsFieldsOutsideSpec(t *testing.T) {
	t.Parallel()
	text := "---\nname: pdf\ndescription: x\nlicense: MIT\ncompatibility: any\nmetadata: {a: b}\nallowed-tools: Read\n" +
		"version: 1\nwhen_to_use: y\nmodel: haiku\ncolour: blue\nsummary: z\n---\n"
	_, lenient := Parse([]byte(text), "pdf")
	if got := strings.Join(rules(lenient), ","); got != "warning:field-unknown,warning:field-alias,warning:field-duplicate" {
		t.Errorf("lenient: %s", got)
	}
	_, strict := Options{Strict: true}.Parse([]byte(text), "pdf")
	var lines []int
	for _, p := range strict {
		if p.Rule == "field-not-in-spec" {
			lines = append(lines, p.Line)
		}
	}
	if !slices.Equal(lines, []int{8, 9, 10}) {
		t.Errorf("strict: field-not-in-spec at lines %v, want [8 9 10]; %v", lines, strict)
	}
	if !HasError(strict, true) || len(strict) != 6 {
		t.Errorf("strict problems: %v", rules(strict))
	}
	_, problems := Options{Strict: true}.Load(fstest.MapFS{"SKILL.md": {Data: []byte(text)}}, "pdf", "pdf")
	if len(problems) != len(strict) {
		t.Errorf("Options.Load does not pass Strict on: %v", rules(problems))
	}
}

// TestStrictAgreesWithSkillsRef checks the cases where skills-ref, the
// specification's reference validator, decides: a BOM before the opening
// "---" is invalid there, a license list and an empty metadata are valid.
func TestStrictAgreesWithSkillsRef(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		lenient    []string // level:rule without --strict
		strict     []string // with it
	}{
		{"bom", "\xef\xbb\xbf---\nname: pdf\ndescription: x\n---\n", nil, []string{"warning:frontmatter-bom"}},
		{"license list", "---\nname: pdf\ndescription: x\nlicense:\n  - MIT\n  - Apache-2.0\n---\n", nil, nil},
		{"empty metadata", "---\nname: pdf\ndescription: x\nmetadata:\n---\n", nil, nil},
		{"metadata a list", "---\nname: pdf\ndescription: x\nmetadata: [a]\n---\n", []string{"warning:field-type"}, []string{"warning:field-type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, lenient := Parse([]byte(tt.text), "pdf")
			if got := rules(lenient); !slices.Equal(got, tt.lenient) {
				t.Errorf("lenient: %v, want %v", got, tt.lenient)
			}
			_, strict := Options{Strict: true}.Parse([]byte(tt.text), "pdf")
			if got := rules(strict); !slices.Equal(got, tt.strict) {
				t.Errorf("strict: %v, want %v", got, tt.strict)
			}
			if tt.name == "license list" && s.License != "MIT, Apache-2.0" {
				t.Errorf("license = %q", s.License)
			}
		})
	}
}

func TestListFilesRefusesControlCharacters(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"scripts/run\x1b[2J.sh", "bad\ndir/x.md", "a\u202eb.txt"} {
		fsys := fstest.MapFS{"SKILL.md": {Data: []byte("x")}, name: {Data: []byte("y")}, ".env.example": {Data: []byte("z")}}
		files, problems := ListFiles(fsys, "skills/pdf", 0)
		if !HasError(problems, false) || !strings.Contains(problems[0].Rule, "file-name-control-char") {
			t.Errorf("%q: problems %v", name, rules(problems))
		}
		for _, f := range files {
			if f.Path == name {
				t.Errorf("%q was listed", name)
			}
		}
		// Dot files stay allowed.
		if !slices.ContainsFunc(files, func(f File) bool { return f.Path == ".env.example" }) {
			t.Errorf("%q: a dot file was left out: %v", name, files)
		}
	}
}
