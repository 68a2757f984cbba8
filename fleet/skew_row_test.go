package fleet_test

import (
	"math"
	"testing"

	"github.com/skillsync/skillsync/fleet"
)

// TestClockSkewOfAHandWrittenRow: a host row's clock_skew_ms past what a
// duration holds (written by hand) reads as the longest skew of its
// sign, not wrapped round to one that shows the clock right.
func TestClockSkewOfAHandWrittenRow(t *testing.T) {
	t.Parallel()
	for _, ms := range []int64{math.MaxInt64, math.MinInt64, math.MaxInt64 / 1000, -(math.MaxInt64 / 1000)} {
		h := fleet.HostStatus{ClockSkewMS: &ms}
		skew, ok := h.ClockSkew()
		if !ok || skew.Abs() <= fleet.MaxSkew || (skew > 0) != (ms > 0) {
			t.Errorf("clock_skew_ms %d: skew %v (measured %v), want past %v, of its sign", ms, skew, ok, fleet.MaxSkew)
		}
	}
	ms := int64(-90_000)
	if skew, ok := (fleet.HostStatus{ClockSkewMS: &ms}).ClockSkew(); !ok || skew.Seconds() != -90 {
		t.Errorf("clock_skew_ms -90000: %v", skew)
	}
}
