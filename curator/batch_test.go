package curator

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestRecordAllOutOfOrder: events from the past, in any order, count
// every one, move times only forward, and leave the last source with the
// latest event; recording them again changes no time.
func TestRecordAllOutOfOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := NewStore(dir)
	pdf := mustCopy(t, "workspace/pdf")
	// A use through the CLI an hour ago is newer than anything imported.
	if _, err := s.Record(context.Background(), Use{Copy: pdf, From: FromCLI, At: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	old := []Use{
		{Copy: pdf, From: FromImport, At: now.Add(-48 * time.Hour)},
		{Copy: pdf, From: FromImport, At: now.Add(-72 * time.Hour), View: true},
		{Copy: pdf, From: FromImport, At: now.Add(-24 * time.Hour), View: true},
	}
	for round := 0; round < 2; round++ {
		if _, err := s.RecordAll(context.Background(), old); err != nil {
			t.Fatal(err)
		}
	}
	u, _ := s.Load()
	r := u.Skills[pdf]
	if r.UseCount != 3 || r.ViewCount != 4 {
		t.Errorf("counts = %d uses %d views, want 3 and 4", r.UseCount, r.ViewCount)
	}
	if !r.LastUsedAt.Equal(now.Add(-time.Hour)) || r.LastSource != FromCLI {
		t.Errorf("an older import moved the last use: %v through %s", r.LastUsedAt, r.LastSource)
	}
	if !r.LastViewedAt.Equal(now.Add(-24 * time.Hour)) {
		t.Errorf("last view = %v, want the latest imported view", r.LastViewedAt)
	}
	// A newer imported event becomes the last source.
	if _, err := s.RecordAll(context.Background(), []Use{{Copy: pdf, From: FromImport, At: now}}); err != nil {
		t.Fatal(err)
	}
	u, _ = s.Load()
	if u.Skills[pdf].LastSource != FromImport || !u.Skills[pdf].LastUsedAt.Equal(now) {
		t.Errorf("after a newer import: %+v", u.Skills[pdf])
	}
}

// TestRecordAllReactivatesOnlyNewerUse: a stale copy becomes active only
// through a use newer than its staleness, with one audit line.
func TestRecordAllReactivatesOnlyNewerUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := NewStore(dir)
	pdf, old := mustCopy(t, "workspace/pdf"), mustCopy(t, "workspace/old")
	since := now.Add(-10 * 24 * time.Hour)
	if err := s.Update(context.Background(), func(u *Usage) error {
		u.SetState(pdf, Stale, since)
		u.SetState(old, Stale, since)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	re, err := s.RecordAll(context.Background(), []Use{
		{Copy: old, From: FromImport, At: since.Add(-time.Hour)},
		{Copy: pdf, From: FromImport, At: since.Add(time.Hour)},
		{Copy: pdf, From: FromImport, At: since.Add(2 * time.Hour), View: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(re) != 1 || re[0] != pdf {
		t.Errorf("reactivated = %v, want only %s", re, pdf)
	}
	u, _ := s.Load()
	if u.StateOf(pdf) != Active || u.StateOf(old) != Stale {
		t.Errorf("states: pdf %s, old %s", u.StateOf(pdf), u.StateOf(old))
	}
	// Imported uses count per day as recorded ones do: the charts read them.
	day := since.UTC().Format(DayLayout)
	if got := u.Skills[pdf].Days[day]; got != (DayCount{Uses: 1, Views: 1}) {
		t.Errorf("pdf's %s: %+v, want a use and a view", day, got)
	}
	events, _, err := NewAudit(dir).Read(time.Time{}, OpReactivated)
	if err != nil || len(events) != 1 || events[0].Target != "workspace/pdf" || events[0].Detail != "viewed through import" {
		t.Errorf("audit = %+v %v", events, err)
	}
}

// TestRecordAllRefusesBadInput: one bad use refuses the batch and writes
// nothing.
func TestRecordAllRefusesBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := NewStore(dir)
	_, err := s.RecordAll(context.Background(), []Use{
		{Copy: mustCopy(t, "workspace/pdf"), From: FromImport, At: now},
		{Copy: Copy{Layer: 3, Name: "../x"}, From: FromImport, At: now},
	})
	if err == nil {
		t.Fatal("a batch with a bad copy was recorded")
	}
	if _, err := s.RecordAll(context.Background(), []Use{{Copy: mustCopy(t, "workspace/pdf"), From: "agent", At: now}}); err == nil {
		t.Error("a batch with an unknown source was recorded")
	}
	if _, err := os.Lstat(s.Path()); !os.IsNotExist(err) {
		t.Errorf("a refused batch wrote the usage file: %v", err)
	}
}

// TestRecordAllKeepsTheWindowInAnyOrder: the days an import counts are
// kept for KeepDays back from the copy's newest use, whatever the order
// of the uses: a use past the window counts, but not as a day.
func TestRecordAllKeepsTheWindowInAnyOrder(t *testing.T) {
	t.Parallel()
	pdf := mustCopy(t, "workspace/pdf")
	past := now.AddDate(0, 0, -KeepDays-10)
	for _, uses := range [][]Use{
		{{Copy: pdf, From: FromImport, At: now}, {Copy: pdf, From: FromImport, At: past}},
		{{Copy: pdf, From: FromImport, At: past}, {Copy: pdf, From: FromImport, At: now}},
	} {
		s := NewStore(t.TempDir())
		if _, err := s.RecordAll(context.Background(), uses); err != nil {
			t.Fatal(err)
		}
		u, _ := s.Load()
		r := u.Skills[pdf]
		if _, kept := r.Days[past.UTC().Format(DayLayout)]; kept || r.UseCount != 2 || len(r.Days) != 1 {
			t.Errorf("uses at %v then %v: %d uses, days %v", uses[0].At, uses[1].At, r.UseCount, r.Days)
		}
	}
}
