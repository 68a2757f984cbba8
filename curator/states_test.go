package curator

import (
	"testing"
	"time"

	"github.com/skillsync/skillsync/layering"
)

func TestCountStates(t *testing.T) {
	t.Parallel()
	if got := CountStates(nil, "team", []string{"a", "b"}); got["active"] != 2 || got["stale"] != 0 || got["archived"] != 0 {
		t.Errorf("without usage: %v", got)
	}
	now := time.Now()
	u := &Usage{Skills: map[Copy]*SkillUsage{
		{Layer: layering.Marketplace, Owner: "team", Name: "a"}:   {State: Stale, FirstSeenAt: &now},
		{Layer: layering.Marketplace, Owner: "team", Name: "old"}: {State: Archived, FirstSeenAt: &now},
		{Layer: layering.Marketplace, Owner: "else", Name: "b"}:   {State: Stale, FirstSeenAt: &now},
	}}
	if got := CountStates(u, "team", []string{"a", "b"}); got["active"] != 1 || got["stale"] != 1 || got["archived"] != 1 {
		t.Errorf("with usage: %v", got)
	}
}
