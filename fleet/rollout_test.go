package fleet_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/fleet"
)

func TestRolloutOverManyHosts(t *testing.T) {
	t.Parallel()
	const hosts = 20000
	for _, skill := range []string{"pdf", "deploy-checklist", "Review"} {
		in := map[int]int{}
		for i := range hosts {
			host := fmt.Sprintf("host-%05d.example", i)
			prev := false
			for _, p := range []int{1, 10, 50, 100} {
				reason := fleet.HeldBack(host, "prod", skill, map[string]string{"rollout": fmt.Sprintf("%d%%", p)})
				now := reason == ""
				if prev && !now {
					t.Fatalf("host %s takes %s at a lower percentage but not at %d%%", host, skill, p)
				}
				if now {
					in[p]++
				}
				prev = now
			}
		}
		for _, p := range []int{1, 10, 50} {
			want := hosts * p / 100
			if got := in[p]; got < want*85/100 || got > want*115/100 {
				t.Errorf("%s at %d%%: %d of %d hosts, want about %d", skill, p, got, hosts, want)
			}
		}
		if in[100] != hosts {
			t.Errorf("%s at 100%%: %d of %d hosts", skill, in[100], hosts)
		}
	}
	// The same host does not take every skill at 10%: the skill's name is
	// in the hash.
	taken := 0
	for i := range 1000 {
		if fleet.HeldBack("one-host", "", fmt.Sprintf("skill-%d", i), map[string]string{"rollout": "10%"}) == "" {
			taken++
		}
	}
	if taken < 60 || taken > 140 {
		t.Errorf("one host takes %d of 1000 skills at 10%%", taken)
	}
}

func TestRolloutEnvironments(t *testing.T) {
	t.Parallel()
	meta := map[string]string{"environments": "prod staging"}
	for env, want := range map[string]bool{"prod": true, "staging": true, "Prod": true, "STAGING": true, "dev": false, "": false, "prod-eu": false} {
		if got := fleet.HeldBack("h", env, "pdf", meta) == ""; got != want {
			t.Errorf("environment %q: takes %v, want %v", env, got, want)
		}
	}
	if fleet.HeldBack("h", "dev", "pdf", nil) != "" {
		t.Error("a skill without rollout metadata is held back")
	}
	for _, bad := range []string{"ten", "101%", "-1%", "NaN"} {
		if r := fleet.HeldBack("h", "", "pdf", map[string]string{"rollout": bad}); r == "" {
			t.Errorf("rollout %q placed the skill", bad)
		}
	}
	if p, err := fleet.ParsePercent(" 2.5% "); err != nil || p != 2.5 || fleet.FormatPercent(p) != "2.5%" {
		t.Errorf("ParsePercent: %v %v", p, err)
	}
}

// TestParsePercentRefusesWhatIsNoPercentage: strconv reads "1_0" as 10,
// "0x1p3" as 8, "1e1" as 10 and "-0" as a negative zero; in a skill's
// metadata.rollout each is a typo, and a typo holds the skill back
// rather than place it on a share nobody wrote.
func TestParsePercentRefusesWhatIsNoPercentage(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"1_0%", "0x1p3", "1e1%", "-0%", "+5%", ".%", "2.555%", "1e-320", "10 0%"} {
		if p, err := fleet.ParsePercent(s); err == nil {
			t.Errorf("ParsePercent(%q) = %v, want an error", s, p)
		}
		if reason := fleet.HeldBack("h", "", "x", map[string]string{"rollout": s}); !strings.Contains(reason, "want a percentage") {
			t.Errorf("rollout %q: held back %q, want for a malformed rollout", s, reason)
		}
	}
	for s, want := range map[string]float64{"0%": 0, "100%": 100, "33.3%": 33.3, "10 %": 10, " 2.25 ": 2.25, "007": 7, ".5%": 0.5} {
		if p, err := fleet.ParsePercent(s); err != nil || p != want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", s, p, err, want)
		}
	}
}

// TestBucketIsTheCanonicalIDs: a host's bucket is that of the id the
// store keys it by (hostid.Canonical), so two workspaces of one host
// under two spellings take a staged skill together, and fleet status's
// one host is one bucket. An id that is canonical keeps the bucket it
// had when buckets hashed the id as spelled: the expected buckets below
// were computed by that code, and must never change (a host would take
// or drop a staged skill on an upgrade). Only ids spelled otherwise
// (capitals, NFD) moved, once.
func TestBucketIsTheCanonicalIDs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host, skill string
		want        int
	}{
		{"build-01", "pdf", 5159},
		{"build-01", "Deploy-Checklist", 6546},
		{"ci-runner-7", "pdf", 4101},
		{"ci-runner-7", "Deploy-Checklist", 3600},
		{"caf\u00e9-7", "pdf", 6998},
		{"caf\u00e9-7", "Deploy-Checklist", 4175},
		{"host-00042.example", "pdf", 8382},
		{"host-00042.example", "Deploy-Checklist", 8192},
		{"laptop-3f2a9c1e", "pdf", 4549},
		{"laptop-3f2a9c1e", "Deploy-Checklist", 1279},
		{"\u03c3\u03bf\u03c6\u03b9\u03b1", "pdf", 1013},
		{"\u03c3\u03bf\u03c6\u03b9\u03b1", "Deploy-Checklist", 8763},
		// Spellings of those: the canonical id's bucket (as spelled they
		// were "Build-01" 1368 and 7436, NFD "café-7" 2275 and 23).
		{"Build-01", "pdf", 5159},
		{"BUILD-01", "Deploy-Checklist", 6546},
		{"cafe\u0301-7", "pdf", 6998},
		{"CAFE\u0301-7", "Deploy-Checklist", 4175},
		{"\u03a3\u039f\u03a6\u0399\u0391", "pdf", 1013},
		{"\u212aiosk", "pdf", fleet.Bucket("kiosk", "pdf")},
	} {
		if got := fleet.Bucket(tc.host, tc.skill); got != tc.want {
			t.Errorf("Bucket(%q, %q) = %d, want %d", tc.host, tc.skill, got, tc.want)
		}
	}
	// Held back or not, the spellings of one host agree at every share.
	for i := range 200 {
		skill := fmt.Sprintf("skill-%d", i)
		for _, p := range []string{"1%", "25%", "50%", "99.99%"} {
			meta := map[string]string{"rollout": p}
			a, b := fleet.HeldBack("Build-01", "prod", skill, meta), fleet.HeldBack("build-01", "prod", skill, meta)
			if a != b {
				t.Fatalf("%s at %s: Build-01 %q, build-01 %q", skill, p, a, b)
			}
		}
	}
}
