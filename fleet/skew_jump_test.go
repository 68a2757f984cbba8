package fleet_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
)

// TestUsesDatedAheadByAClockSincePutRight: a host whose clock ran days
// (or years) ahead recorded uses by it, its pushes refused meanwhile;
// with its clock put right, those uses' times are still ahead of the
// server. Their counts reach the store now, dated no later than the
// server's now, not held back until the clock catches up with them (for
// years, never); a copy used again since, the same. Pushed again, the
// same record counts nothing twice.
func TestUsesDatedAheadByAClockSincePutRight(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	for _, ahead := range []time.Duration{25 * time.Hour, 3 * 24 * time.Hour, 4 * 365 * 24 * time.Hour} {
		t.Run(ahead.String(), func(t *testing.T) {
			t.Parallel()
			s, _ := open(t, c, nil)
			ctx := context.Background()
			pdf, doc := mcopy(t, "team", "pdf"), mcopy(t, "team", "doc")
			pushed := filepath.Join(t.TempDir(), "pushed.json")
			usedAt := time.Now().Add(ahead)
			earlier := time.Now().Add(-time.Hour)
			u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{
				pdf: {UseCount: 4, LastUsedAt: &usedAt, State: curator.Active},
				doc: {UseCount: 1, LastUsedAt: &earlier, State: curator.Active},
			}}
			for i := range 2 {
				host := hb("put-right")
				host.At = time.Now()
				rep, err := fleet.PreparePush(host, u, pushed, s.Identity(), func(string) {}).Send(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				if len(rep.Skipped) != 0 {
					t.Errorf("push %d skipped %q", i+1, rep.Skipped)
				}
				real := time.Now()
				got := usageOf(t, s, fleet.UsageOptions{Since: real.Add(-48 * time.Hour)})
				if p := got[pdf.String()]; p.Uses != 4 || p.LastUsedAt == nil || p.LastUsedAt.After(real) {
					t.Errorf("push %d: pdf, used 4 times by a clock %s ahead: %d uses, last %v (want 4, not after %v)", i+1, ahead, p.Uses, p.LastUsedAt, real)
				}
				if d := got[doc.String()]; d.Uses != 1 {
					t.Errorf("push %d: doc %d uses, want 1", i+1, d.Uses)
				}
			}
		})
	}
}
