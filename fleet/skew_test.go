package fleet_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/fleet"
)

// TestClockSkew: a push measures how far the host's clock runs from the
// server's, keeps it per host, and dates the host's uses by the server's
// clock: a host behind or ahead dates its uses right, none is dated
// ahead of the server, and every count stays exact. A skew past a day is
// refused, naming the host and the skew.
func TestClockSkew(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	const tolerance = 5 * time.Second
	for _, tc := range []struct {
		name string
		// offset is the host's clock less the real time; unmeasured, the
		// heartbeat names no time.
		offset     time.Duration
		unmeasured bool
		// use is when the host says it used the skill, by its clock;
		// want when the store should say it was, by the real time.
		use, want time.Duration
		refused   string
	}{
		{name: "in_step", use: -10 * time.Minute, want: -10 * time.Minute},
		{name: "3h_behind", offset: -3 * time.Hour, use: -10 * time.Minute, want: -10 * time.Minute},
		{name: "3h_ahead", offset: 3 * time.Hour, use: -10 * time.Minute, want: -10 * time.Minute},
		{name: "23h_behind", offset: -23 * time.Hour, use: -time.Hour, want: -time.Hour},
		// Under MinSkew nothing is corrected, but nothing stays ahead.
		{name: "30s_ahead", offset: 30 * time.Second, use: -10 * time.Minute, want: -10*time.Minute + 30*time.Second},
		{name: "30s_ahead_use_now", offset: 30 * time.Second, use: 0, want: 0},
		{name: "unmeasured_use_6h_ahead", unmeasured: true, use: 6 * time.Hour, want: 0},
		{name: "2d_behind", offset: -48 * time.Hour, use: -10 * time.Minute, refused: "48h0m0s behind"},
		{name: "2d_ahead", offset: 48 * time.Hour, use: -10 * time.Minute, refused: "48h0m0s ahead of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := open(t, c, nil)
			ctx := context.Background()
			pdf := mcopy(t, "team", "pdf")
			// The host pushed once with its clock right.
			ok := hb("skewed")
			ok.At = time.Now()
			if _, err := s.Push(ctx, ok, nil); err != nil {
				t.Fatal(err)
			}
			host := hb("skewed")
			if !tc.unmeasured {
				host.At = time.Now().Add(tc.offset)
			}
			usedAt := time.Now().Add(tc.offset + tc.use)
			u := &curator.Usage{Skills: map[curator.Copy]*curator.SkillUsage{pdf: {UseCount: 4, ViewCount: 2, LastUsedAt: &usedAt, LastViewedAt: &usedAt, State: curator.Active}}}
			rep, err := fleet.PreparePush(host, u, filepath.Join(t.TempDir(), "pushed.json"), s.Identity(), func(string) {}).Send(ctx, s)
			real := time.Now()
			hosts, serr := s.Status(ctx, fleet.StatusOptions{})
			if serr != nil || len(hosts) != 1 {
				t.Fatalf("status: %+v %v", hosts, serr)
			}
			skew, measured := hosts[0].ClockSkew()
			if tc.refused != "" {
				if !errors.Is(err, fleet.ErrClockSkew) || !strings.Contains(err.Error(), "skewed") || !strings.Contains(err.Error(), tc.refused) || fleet.IsUnreachable(err) {
					t.Fatalf("push from a clock %s off: %v; want it refused, naming the host and %q", tc.offset, err, tc.refused)
				}
				if _, listed := usageOf(t, s, fleet.UsageOptions{})[pdf.String()]; listed {
					t.Error("a refused push's usage reached the store")
				}
				if !measured || (skew-tc.offset).Abs() > tolerance || !hosts[0].Failing {
					t.Errorf("status of the refused host: skew %v (measured %v), failing %v; want %v, failing", skew, measured, hosts[0].Failing, tc.offset)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.unmeasured {
				if measured || rep.ClockSkewMS != nil {
					t.Errorf("a heartbeat without a time: skew %v measured, push says %v", skew, rep.ClockSkewMS)
				}
			} else if !measured || (skew-tc.offset).Abs() > tolerance || rep.ClockSkewMS == nil || hosts[0].Failing {
				t.Errorf("skew in status %v (measured %v), in the push %v, failing %v; want %v", skew, measured, rep.ClockSkewMS, hosts[0].Failing, tc.offset)
			}
			got := usageOf(t, s, fleet.UsageOptions{Since: real.Add(-48 * time.Hour)})[pdf.String()]
			if got.Uses != 4 || got.Views != 2 || got.Hosts != 1 {
				t.Errorf("counts: %d uses, %d views, %d hosts; want 4, 2, 1", got.Uses, got.Views, got.Hosts)
			}
			want := real.Add(tc.want)
			if got.LastUsedAt == nil || got.LastUsedAt.Sub(want).Abs() > tolerance || got.LastUsedAt.After(real) {
				t.Errorf("last use %v, want %v by the real clock (not after %v)", got.LastUsedAt, want, real)
			}
			if got.LastViewedAt == nil || got.LastViewedAt.Sub(want).Abs() > tolerance {
				t.Errorf("last view %v, want %v", got.LastViewedAt, want)
			}
		})
	}
}

// TestLastUsesInThisMachinesClock: the fleet's last uses, dated by the
// store server's clock, reach this host's curation in this host's clock,
// which judges idle time by it: on a host 5 hours ahead, a use an hour
// ago is an hour ago, not six.
func TestLastUsesInThisMachinesClock(t *testing.T) {
	t.Parallel()
	c := pgCluster.Get(t)
	for _, offset := range []time.Duration{0, 5 * time.Hour, -5 * time.Hour} {
		s, schema := open(t, c, nil)
		ctx := context.Background()
		pdf := mcopy(t, "team", "pdf")
		used := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
		if _, err := s.Push(ctx, hb("other"), []fleet.Record{{Copy: pdf, Uses: 1, LastUsedAt: used, State: "active"}}); err != nil {
			t.Fatal(err)
		}
		clock := func() time.Time { return time.Now().Add(offset) }
		w := &fleet.Workspace{Store: fleet.Config{DSNFile: c.DSNFile(t, "postgres"), Schema: schema, Timeout: 5 * time.Second, Now: clock},
			Timeout: 5 * time.Second, MinHosts: 1}
		last, wait, err := w.LastUses(ctx, clock(), 2*time.Hour)
		if err != nil || wait != "" {
			t.Fatalf("clock %v off: %v %q", offset, err, wait)
		}
		if got, want := last[pdf], used.Add(offset); got.Sub(want).Abs() > 2*time.Second {
			t.Errorf("on a clock %v off the store's, pdf's last use in the fleet is %v, want %v (an hour before this clock's now)", offset, got, want)
		}
	}
}
