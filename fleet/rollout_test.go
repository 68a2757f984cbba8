package fleet_test

import (
	"fmt"
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
	for env, want := range map[string]bool{"prod": true, "staging": true, "dev": false, "": false} {
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
