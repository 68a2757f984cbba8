package curator

import (
	"context"
	"testing"
	"time"

	"github.com/skillsync/skillsync/layering"
)

func TestRecordCountsDays(t *testing.T) {
	t.Parallel()
	store := NewStore(t.TempDir())
	c, err := NewCopy(layering.Workspace, "", "pdf")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	record := func(at time.Time, view bool) {
		t.Helper()
		if _, err := store.Record(context.Background(), Use{Copy: c, View: view, From: FromCLI, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	record(day.AddDate(0, 0, -100), false) // falls out of the window
	record(day, false)
	record(day, false)
	record(day, true)
	record(day.AddDate(0, 0, -83), true) // the oldest day kept
	u, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	got := u.Skills[c].Days
	if len(got) != 2 || got["2026-12-01"] != (DayCount{Uses: 2, Views: 1}) || got["2026-09-09"] != (DayCount{Views: 1}) {
		t.Errorf("days = %v", got)
	}
	if u.Skills[c].UseCount != 3 {
		t.Errorf("use count = %d: the day window must not touch the totals", u.Skills[c].UseCount)
	}
}
