package materialize

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// meetFS holds every Open of SKILL.md until another skill's is under
// way too, or until wait has passed; it counts the opens that met
// another.
type meetFS struct {
	fs.FS
	wait time.Duration
	open *atomic.Int32
	met  *atomic.Int32
}

func (m meetFS) Open(name string) (fs.File, error) {
	if name == "SKILL.md" {
		m.open.Add(1)
		defer m.open.Add(-1)
		for deadline := time.Now().Add(m.wait); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if m.open.Load() > 1 {
				m.met.Add(1)
				break
			}
		}
	}
	return m.FS.Open(name)
}

// Skills of a source are staged side by side where there are cores for
// it; what the sync reports keeps the source's order, a name refused
// before staging included. With a Check, which sees skills in order,
// they are staged one at a time.
func TestSkillsAreStagedSideBySide(t *testing.T) {
	t.Parallel()
	if parallelStages() < 2 {
		t.Skip("one core: skills are staged one at a time")
	}
	var opened, met atomic.Int32
	skills := func(wait time.Duration) []Skill {
		var list []Skill
		for _, name := range []string{"alpha", "bad/name", "beta", "gamma", "delta"} {
			s := mkSkill(name, map[string]string{"SKILL.md": "---\nname: " + name + "\n---\n", "notes.md": name})
			s.Files = meetFS{s.Files, wait, &opened, &met}
			list = append(list, s)
		}
		return list
	}
	c := open(t, t.TempDir())
	refuse := errors.New("refused by the test")
	res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "1", Skills: skills(time.Second)})
	if met.Load() == 0 {
		t.Error("no two skills were read at the same time")
	}
	var got []string
	for _, err := range res.Errors {
		got = append(got, err.Error())
	}
	if len(got) != 1 || !strings.Contains(got[0], "bad/name") {
		t.Errorf("errors = %q, want the bad name alone", got)
	}
	var order []string
	for _, ch := range res.Changes {
		order = append(order, ch.Name)
	}
	if want := "alpha beta gamma delta"; strings.Join(order, " ") != want {
		t.Errorf("changes in the order %q, want %q", order, want)
	}

	met.Store(0)
	var seen []string
	res = c.SyncSource(context.Background(), Source{Name: "src", Revision: "2", Skills: skills(100 * time.Millisecond), Check: func(name string, _ Hash) error {
		seen = append(seen, name)
		if name == "gamma" {
			return refuse
		}
		return nil
	}})
	if met.Load() != 0 {
		t.Error("with a check, two skills were read at the same time")
	}
	if want := "alpha beta gamma delta"; strings.Join(seen, " ") != want {
		t.Errorf("the check saw %q, want %q", seen, want)
	}
	if len(res.Errors) != 2 || !strings.Contains(res.Errors[0].Error(), "bad/name") || !errors.Is(res.Errors[1], refuse) {
		t.Errorf("errors = %v, want the bad name, then gamma refused", res.Errors)
	}
}
