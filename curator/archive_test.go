package curator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/layering"
)

// writeSkill writes a valid SKILL.md for name into dir, the skill's own
// folder, which need not be named after it.
func writeSkill(t *testing.T, dir, name string) {
	t.Helper()
	skilltest.WriteFile(t, filepath.Join(dir, "SKILL.md"), skilltest.SkillMD(name, "The "+name+" skill."))
}

// TestArchiveNestedSkillThenRestore: a skill deep in its layer archives to
// the layer's own .archive/, where ArchivedCopies finds it and Restore
// brings it back where it was.
func TestArchiveNestedSkillThenRestore(t *testing.T) {
	t.Parallel()
	layer := t.TempDir()
	deep := filepath.Join(layer, "team", "deep")
	writeSkill(t, deep, "deep")
	dst, err := Archive(layer, deep, "deep", now)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(layer, ".archive", "deep-20261130T120000Z"); dst != want || !skilltest.Exists(filepath.Join(want, "SKILL.md")) || skilltest.Exists(deep) {
		t.Fatalf("archived to %s, want %s", dst, want)
	}
	if skilltest.Exists(filepath.Join(layer, "team", ".archive")) {
		t.Error("an .archive was made beside the skill")
	}
	copies := ArchivedCopies(LayerDir{Layer: layering.Workspace, Dir: layer}, LayerDir{Layer: layering.User, Owner: "alice", Dir: filepath.Join(t.TempDir(), "none")})
	if len(copies) != 1 || copies[0].Copy != mustCopy(t, "workspace/deep") || copies[0].Dir != dst || !copies[0].At.Equal(now) {
		t.Fatalf("archived copies = %+v", copies)
	}
	// Its folder is gone by the time it comes back: it is made again.
	if err := os.Remove(filepath.Join(layer, "team")); err != nil {
		t.Fatal(err)
	}
	back, err := copies[0].Restore()
	if err != nil || back != deep || !skilltest.Exists(filepath.Join(back, "SKILL.md")) || skilltest.Exists(dst) || skilltest.Exists(dst+originSuffix) {
		t.Fatalf("restore = %s, %v", back, err)
	}
}

// TestRestoreDistrustsTheOriginNote: the note beside an archived copy is
// workspace input; one that leads out of the layer or into its records
// sends the copy to the layer's top, and a link planted where its folder
// was is never moved through.
func TestRestoreDistrustsTheOriginNote(t *testing.T) {
	t.Parallel()
	for _, note := range []string{"../../outside/deep", "/etc/deep", ".archive/deep", "_drafts/deep", "a//deep", "team/\x1b[2J"} {
		layer := t.TempDir()
		writeSkill(t, filepath.Join(layer, "deep"), "deep")
		dst, err := Archive(layer, filepath.Join(layer, "deep"), "deep", now)
		if err != nil {
			t.Fatal(err)
		}
		skilltest.WriteFile(t, dst+originSuffix, note+"\n")
		copies := ArchivedCopies(LayerDir{Layer: layering.Workspace, Dir: layer})
		if back, err := copies[0].Restore(); err != nil || back != filepath.Join(layer, "deep") {
			t.Errorf("note %q: restored to %s, %v; want the layer's top", note, back, err)
		}
	}

	layer := t.TempDir()
	deep := filepath.Join(layer, "team", "deep")
	writeSkill(t, deep, "deep")
	if _, err := Archive(layer, deep, "deep", now); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	if err := os.Remove(filepath.Join(layer, "team")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(layer, "team")); err != nil {
		t.Fatal(err)
	}
	copies := ArchivedCopies(LayerDir{Layer: layering.Workspace, Dir: layer})
	if _, err := copies[0].Restore(); err == nil || skilltest.Exists(filepath.Join(elsewhere, "deep")) {
		t.Errorf("restore through a planted link: %v", err)
	}
	if !skilltest.Exists(filepath.Join(copies[0].Dir, "SKILL.md")) {
		t.Error("the archived copy was lost")
	}
}

// TestArchiveRefusesTheLayerRoot: a skill whose SKILL.md is at the layer's
// top is never moved: that would take the usage file, the audit log and
// the archive with it.
func TestArchiveRefusesTheLayerRoot(t *testing.T) {
	t.Parallel()
	layer := t.TempDir()
	writeSkill(t, layer, "root")
	skilltest.WriteFile(t, filepath.Join(layer, UsageFile), "{}")
	_, err := Archive(layer, layer+"/", "root", now)
	if !errors.Is(err, ErrLayerRoot) {
		t.Fatalf("Archive of the layer root = %v", err)
	}
	if !skilltest.Exists(filepath.Join(layer, "SKILL.md")) || !skilltest.Exists(filepath.Join(layer, UsageFile)) || skilltest.Exists(filepath.Join(layer, ArchiveDir)) {
		t.Error("the layer root was moved")
	}
	outside := filepath.Join(t.TempDir(), "x")
	writeSkill(t, outside, "x")
	if _, err := Archive(layer, outside, "x", now); err == nil || !skilltest.Exists(outside) {
		t.Errorf("Archive of a directory outside the layer = %v", err)
	}
	if _, err := Archive(layer, filepath.Join(layer, "a"), "../a", now); err == nil {
		t.Error("Archive took a name that leaves the archive")
	}
}

// TestArchiveDoesNotFollowALinkedArchive: an .archive planted as a link to
// an outside directory gets no skill moved into it.
func TestArchiveDoesNotFollowALinkedArchive(t *testing.T) {
	t.Parallel()
	layer, outside := t.TempDir(), t.TempDir()
	writeSkill(t, filepath.Join(layer, "notes"), "notes")
	if err := os.Symlink(outside, filepath.Join(layer, ArchiveDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := Archive(layer, filepath.Join(layer, "notes"), "notes", now); !errors.Is(err, ErrSymlink) {
		t.Errorf("Archive into a linked .archive = %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 || !skilltest.Exists(filepath.Join(layer, "notes", "SKILL.md")) {
		t.Error("the skill moved through the link")
	}
	if copies := ArchivedCopies(LayerDir{Layer: layering.Workspace, Dir: layer}); len(copies) != 0 {
		t.Errorf("listed copies through a link: %+v", copies)
	}
}

func TestRestoreRefusesOverAnExistingDirectory(t *testing.T) {
	t.Parallel()
	layer := t.TempDir()
	writeSkill(t, filepath.Join(layer, "notes"), "notes")
	if _, err := Archive(layer, filepath.Join(layer, "notes"), "notes", now); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, filepath.Join(layer, "notes"), "notes")
	copies := ArchivedCopies(LayerDir{Layer: layering.Workspace, Dir: layer})
	if _, err := copies[0].Restore(); err == nil || !strings.Contains(err.Error(), "already exists") || !skilltest.Exists(copies[0].Dir) {
		t.Errorf("restore over a skill = %v", err)
	}
}

// TestCurateMovesWhatItArchives runs a curation over a workspace layer
// with a nested skill, a layer-root skill and a marketplace copy.
func TestCurateMovesWhatItArchives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	layer := filepath.Join(root, "skills")
	writeSkill(t, filepath.Join(layer, "team", "deep"), "deep")
	s := NewStore(layer)
	var warnings []string
	s.Warn = func(w string) { warnings = append(warnings, w) }
	deep, top, market := mustCopy(t, "workspace/deep"), mustCopy(t, "workspace/top"), mustCopy(t, "marketplace:team/pdf")
	if err := s.Seen(ctx, []Copy{deep, top, market}, now.Add(-100*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, Use{Copy: mustCopy(t, "user:alice/other"), From: FromCLI, At: now.Add(-time.Hour * 24)}); err != nil {
		t.Fatal(err)
	}
	cands := []Candidate{
		{Copy: deep, Dir: filepath.Join(layer, "team", "deep"), LayerDir: layer},
		{Copy: top, Dir: layer, LayerDir: layer},
		{Copy: market},
	}
	cur := Curation{Policy: DefaultPolicy(), Candidates: cands, Now: now, Actor: "test"}
	cur.DryRun = true
	if plan, err := s.Curate(ctx, cur); err != nil || len(plan.Changes) != 3 || !skilltest.Exists(filepath.Join(layer, "team", "deep")) {
		t.Fatalf("dry run = %+v %v", plan, err)
	}
	cur.DryRun = false
	plan, err := s.Curate(ctx, cur)
	if err != nil || len(plan.Changes) != 2 {
		t.Fatalf("plan = %+v %v", plan, err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "workspace/top stays active") {
		t.Errorf("warnings = %q", warnings)
	}
	if !skilltest.Exists(filepath.Join(layer, ".archive", "deep-20261130T120000Z", "SKILL.md")) {
		t.Error("the nested skill is not in the layer's archive")
	}
	u, _ := s.Load()
	if u.StateOf(deep) != Archived || u.StateOf(market) != Archived || u.StateOf(top) != Active || u.Curator.LastSummary == "" {
		t.Errorf("states = %v %v %v", u.StateOf(deep), u.StateOf(market), u.StateOf(top))
	}
	if got := u.ArchivedIn(layering.Marketplace, "team"); len(got) != 1 || !got["pdf"] {
		t.Errorf("ArchivedIn = %v", got)
	}
	if got := u.Archived("DEEP"); len(got) != 1 || got[0] != deep {
		t.Errorf("Archived(DEEP) = %v", got)
	}
	events, _, _ := s.Audit().Read(time.Time{}, OpArchived)
	if len(events) != 2 || events[0].Target != "marketplace:team/pdf" || !strings.Contains(events[1].Detail, "moved "+filepath.Join(layer, "team", "deep")) {
		t.Errorf("audit = %+v", events)
	}
	if err := s.MarkRestored(ctx, deep, "test", "moved back", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	u, _ = s.Load()
	if u.StateOf(deep) != Active || !u.Skills[deep].FirstSeenAt.Equal(now.Add(time.Hour)) {
		t.Errorf("restored = %+v", u.Skills[deep])
	}
}

func TestPin(t *testing.T) {
	t.Parallel()
	s := NewStore(t.TempDir())
	c := mustCopy(t, "workspace/kept")
	for i, want := range []bool{true, false} {
		changed, err := s.Pin(context.Background(), c, true, "test", now)
		if err != nil || changed != want {
			t.Errorf("pin %d: changed %v, %v", i, changed, err)
		}
	}
	events, _, _ := s.Audit().Read(time.Time{}, OpPinned)
	if len(events) != 1 || events[0].Target != "workspace/kept" {
		t.Errorf("audit = %+v", events)
	}
}

// TestCurateTakesBackACopyPutBackInItsLayer: a local copy archived before
// whose folder is in its layer again (put back by hand, or by git) is the
// user's skill, not one to keep hidden as archived: curation makes it
// active, with its idle time starting over, and a marketplace copy,
// archived by state alone, stays archived.
func TestCurateTakesBackACopyPutBackInItsLayer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	layer := filepath.Join(t.TempDir(), "skills")
	dir := filepath.Join(layer, "alpha")
	writeSkill(t, dir, "alpha")
	s := NewStore(layer)
	alpha, market := mustCopy(t, "workspace/alpha"), mustCopy(t, "marketplace:team/pdf")
	if err := s.Seen(ctx, []Copy{alpha, market}, now.Add(-100*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	cands := []Candidate{{Copy: alpha, Dir: dir, LayerDir: layer}, {Copy: market}}
	cur := Curation{Policy: DefaultPolicy(), Candidates: cands, Now: now, Actor: "test", Force: true}
	if plan, err := s.Curate(ctx, cur); err != nil || len(plan.Changes) != 2 || skilltest.Exists(dir) {
		t.Fatalf("first curation = %+v %v", plan, err)
	}
	writeSkill(t, dir, "alpha") // a new alpha, where the old one was
	later := now.Add(time.Hour)
	cur.Now = later
	plan, err := s.Curate(ctx, cur)
	if err != nil || len(plan.Changes) != 1 || plan.Changes[0].Copy != alpha || plan.Changes[0].To != Active || plan.Changes[0].Reason != BackInLayer {
		t.Fatalf("second curation = %+v %v", plan, err)
	}
	u, _ := s.Load()
	if u.StateOf(alpha) != Active || u.StateOf(market) != Archived || !u.Skills[alpha].FirstSeenAt.Equal(later) {
		t.Errorf("states %v %v, first seen %v", u.StateOf(alpha), u.StateOf(market), u.Skills[alpha].FirstSeenAt)
	}
	events, _, _ := s.Audit().Read(time.Time{}, OpRestored)
	if len(events) != 1 || events[0].Target != "workspace/alpha" || events[0].From != "archived" {
		t.Errorf("audit = %+v", events)
	}
	// Idle time started over: the next curation leaves it be.
	cur.Now = later.Add(24 * time.Hour)
	if plan, err := s.Curate(ctx, cur); err != nil || len(plan.Changes) != 0 {
		t.Errorf("third curation = %+v %v", plan, err)
	}
}
