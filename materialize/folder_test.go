package materialize

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// folders returns the entries of a target, skillsync's own files left out.
func folders(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, n := range entries(t, dir) {
		if !strings.HasPrefix(n, ".skillsync") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func TestTargetNormalizesNamesAndSettlesCollisions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	mk := func(name, body string) TargetSkill {
		return TargetSkill{Skill: mkSkill(name, map[string]string{"SKILL.md": body}), Source: "source team"}
	}
	// In the catalog's order (lower-cased names): the valid names take
	// their folders first whatever the order.
	skills := []TargetSkill{
		mk("Ahrefs Automation", "spaces"), mk("ahrefs-automation", "valid"),
		mk("Fine", "upper"), mk("fine", "lower"),
		mk("My_Tool", "underscore"), mk("σ-sigma", "sigma"), mk("ς-sigma", "final sigma"),
	}
	rep, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: skills})
	if err != nil || len(rep.Errors) > 0 || len(rep.Conflicts) > 0 {
		t.Fatalf("sync: %+v %v", rep, err)
	}
	want := map[string]string{ // folder -> the SKILL.md it holds
		"ahrefs-automation":   "valid",
		"ahrefs-automation_2": "spaces",
		"fine":                "lower",
		"fine_2":              "upper",
		"my-tool":             "underscore",
		"σ-sigma":             "sigma",
		"ς-sigma_2":           "final sigma", // σ and ς fold to one letter
	}
	got := folders(t, dir)
	if !slices.Equal(got, sortedNames(want)) {
		t.Fatalf("target holds %v, want %v", got, sortedNames(want))
	}
	for f, body := range want {
		if b := readFile(t, filepath.Join(dir, f, "SKILL.md")); b != body {
			t.Errorf("%s holds %q, want %q", f, b, body)
		}
	}
	// Each moved skill is named with its source and its folder, once.
	for _, w := range []struct{ skill, folder string }{
		{"Ahrefs Automation", "ahrefs-automation_2"}, {"Fine", "fine_2"}, {"My_Tool", "my-tool"}, {"ς-sigma", "ς-sigma_2"},
	} {
		n := 0
		for _, msg := range rep.Warnings {
			if strings.Contains(msg, `"`+w.skill+`"`) && strings.Contains(msg, "source team") && strings.Contains(msg, " as "+w.folder+":") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("skill %s: %d warnings naming it, its source and %s, want 1: %q", w.skill, n, w.folder, rep.Warnings)
		}
	}
	if len(rep.Warnings) != 4 {
		t.Errorf("warnings %q, want 4", rep.Warnings)
	}
	// The record keeps the real names.
	rec, err := LoadTargetRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, folder := range map[string]string{"Ahrefs Automation": "ahrefs-automation_2", "ahrefs-automation": "ahrefs-automation", "Fine": "fine_2", "My_Tool": "my-tool"} {
		if f, ok := rec.TargetFolder(name); !ok || f != folder {
			t.Errorf("record: %s in %q (%v), want %q", name, f, ok, folder)
		}
	}
	if e := rec.Skills["fine"]; e == nil || e.Folder != "" {
		t.Errorf("record of a skill in its own folder: %+v, want no folder field", e)
	}
	if diffs, err := VerifyTarget(dir); err != nil || len(diffs) != 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}
	// Nothing new: nothing written, nothing said.
	before := stat(t, filepath.Join(dir, "ahrefs-automation_2", "SKILL.md"))
	rep, err = SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: skills})
	if err != nil || rep.Written != 0 || rep.Removed != 0 || len(rep.Warnings) != 0 {
		t.Errorf("second sync: %+v %v", rep, err)
	}
	if stat(t, filepath.Join(dir, "ahrefs-automation_2", "SKILL.md")) != before {
		t.Error("an unchanged renamed skill was rewritten")
	}
	// The valid name goes: the other takes its folder, the _2 one goes.
	rep, err = SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: skills[:1]})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("third sync: %+v %v", rep, err)
	}
	if got := folders(t, dir); !slices.Equal(got, []string{"ahrefs-automation"}) {
		t.Errorf("after the valid name went: %v", got)
	}
	if b := readFile(t, filepath.Join(dir, "ahrefs-automation", "SKILL.md")); b != "spaces" {
		t.Errorf("ahrefs-automation holds %q", b)
	}
	if diffs, err := VerifyTarget(dir); err != nil || len(diffs) != 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}
}

// TestTargetMovesAnOldFolder: a target written before folder names were
// normalized holds "Old Name/" under its real name; the next sync moves
// it to old-name/ and removes the old folder.
func TestTargetMovesAnOldFolder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sk := TargetSkill{Skill: mkSkill("Old Name", v1)}
	if _, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{sk}}); err != nil {
		t.Fatal(err)
	}
	// Make it what an earlier release wrote: the folder is the name and
	// the record has no folder field.
	if err := os.Rename(filepath.Join(dir, "old-name"), filepath.Join(dir, "Old Name")); err != nil {
		t.Fatal(err)
	}
	rec, err := LoadTargetRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec.Skills["Old Name"].Folder = ""
	data, _ := json.Marshal(rec)
	if strings.Contains(string(data), `"folder"`) {
		t.Fatalf("record still has a folder: %s", data)
	}
	if err := os.WriteFile(filepath.Join(dir, RecordName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if diffs, err := VerifyTarget(dir); err != nil || len(diffs) != 0 {
		t.Fatalf("the old layout does not verify: %v %v", diffs, err)
	}
	rep, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{sk}})
	// The old folder's three files out, the new folder's three in: a
	// report counts files both ways.
	if err != nil || len(rep.Errors) > 0 || len(rep.Conflicts) > 0 || rep.Written != 3 || rep.Removed != 3 {
		t.Fatalf("sync: %+v %v", rep, err)
	}
	if got := folders(t, dir); !slices.Equal(got, []string{"old-name"}) {
		t.Errorf("target holds %v, want [old-name]", got)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "old-name") {
		t.Errorf("warnings %q", rep.Warnings)
	}
}

// TestTargetSymlinkFolders: a link takes the normalized folder too.
func TestTargetSymlinkFolders(t *testing.T) {
	ctx := context.Background()
	dir, to := t.TempDir(), t.TempDir()
	sk := TargetSkill{Skill: mkSkill("Big Tool", v1), Dir: to}
	if _, err := SyncTarget(ctx, Target{Dir: dir, Mode: Symlink, Skills: []TargetSkill{sk}}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(filepath.Join(dir, "big-tool")); err != nil || got != to {
		t.Errorf("link: %q %v", got, err)
	}
	if diffs, err := VerifyTarget(dir); err != nil || len(diffs) != 0 {
		t.Errorf("verify: %v %v", diffs, err)
	}
}

// TestTargetKeptEntriesKeepTheirFolders: a skill whose source failed
// keeps its folder; a new skill that would want it gets _2.
func TestTargetKeptEntriesKeepTheirFolders(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{{Skill: mkSkill("Report Tool", v1)}}}); err != nil {
		t.Fatal(err)
	}
	rep, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Keep: []string{"Report Tool"}, Skills: []TargetSkill{{Skill: mkSkill("report_tool", map[string]string{"SKILL.md": "other"})}}})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("sync: %+v %v", rep, err)
	}
	if got := folders(t, dir); !slices.Equal(got, []string{"report-tool", "report-tool_2"}) {
		t.Errorf("target holds %v", got)
	}
	if b := readFile(t, filepath.Join(dir, "report-tool_2", "SKILL.md")); b != "other" {
		t.Errorf("report-tool_2 holds %q", b)
	}
}

func TestHostileTargetRecordFolders(t *testing.T) {
	for _, rec := range []string{
		`{"version":1,"skills":{"a":{"hash":"","mode":"copy","folder":"../victim"}}}`,
		`{"version":1,"skills":{"a":{"hash":"","mode":"copy","folder":".skillsync.json"}}}`,
		`{"version":1,"skills":{"a":{"hash":"","mode":"copy","folder":"b"},"b":{"hash":"","mode":"copy"}}}`,
	} {
		var r TargetRecord
		if err := json.Unmarshal([]byte(rec), &r); err != nil {
			t.Fatal(err)
		}
		if err := r.Validate(); err == nil {
			t.Errorf("record %s validates", rec)
		}
	}
	// A sync with such a record sets it aside and removes nothing outside.
	root := t.TempDir()
	dir := filepath.Join(root, "target")
	p := victim(t, filepath.Join(root, "victim"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hostile := `{"version":1,"skills":{"a":{"hash":"","mode":"copy","folder":"../victim","files":{"keep.txt":{"sha256":"","size":8,"mode":"0644"}}}}}`
	if err := os.WriteFile(filepath.Join(dir, RecordName), []byte(hostile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := SyncTarget(context.Background(), Target{Dir: dir, Mode: Copy}); err != nil {
		t.Fatal(err)
	}
	assertIntact(t, p)
}

// TestTargetFilesDifferingInCase: on a case-insensitive file system
// (forced here) two files of one skill whose paths differ only in case
// are a problem naming the skill and both files; the skill is not
// written and the others are.
func TestTargetFilesDifferingInCase(t *testing.T) {
	dir := t.TempDir()
	rules := fsRules{foldCase: true}
	rep, err := SyncTarget(context.Background(), Target{Dir: dir, Mode: Copy, rules: &rules, Skills: []TargetSkill{
		{Skill: mkSkill("readmes", map[string]string{"SKILL.md": "x", "README.md": "1", "readme.md": "2"})},
		{Skill: mkSkill("ok", v1)},
		{Skill: mkSkill("OK", v1)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "skill readmes") ||
		!strings.Contains(rep.Errors[0], "readme.md") || !strings.Contains(rep.Errors[0], "README.md") {
		t.Errorf("errors %q, want one naming readmes, README.md and readme.md", rep.Errors)
	}
	if got := folders(t, dir); !slices.Equal(got, []string{"ok", "ok_2"}) {
		t.Errorf("target holds %v, want [ok ok_2]", got)
	}
}

// TestTargetLeavesAFolderOfTheUsersInAnotherCase: the user's own Alpha/
// is the folder alpha/ on a file system that folds case, so a skill alpha
// is a conflict left alone on every system, not written beside it.
func TestTargetLeavesAFolderOfTheUsersInAnotherCase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "Alpha"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "Alpha", "SKILL.md"), "the user's own")
	rep, err := SyncTarget(ctx, Target{Dir: dir, Mode: Copy, Skills: []TargetSkill{{Skill: mkSkill("alpha", v1)}, {Skill: mkSkill("beta", v1)}}})
	if err != nil || !slices.Equal(rep.Conflicts, []string{"alpha"}) {
		t.Fatalf("sync: %+v %v", rep, err)
	}
	if got := folders(t, dir); !slices.Equal(got, []string{"Alpha", "beta"}) {
		t.Errorf("folders %v, want the user's Alpha and beta", got)
	}
	if readFile(t, filepath.Join(dir, "Alpha", "SKILL.md")) != "the user's own" {
		t.Error("the user's folder changed")
	}
}
