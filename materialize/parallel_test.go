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

// panicFS panics on opening notes.md, as a bug in a source's reader
// would, once SKILL.md is read (and, in a new skill, written).
type panicFS struct{ fs.FS }

func (p panicFS) Open(name string) (fs.File, error) {
	if name == "notes.md" {
		panic("a bug in the source's reader")
	}
	return p.FS.Open(name)
}

// A panic while staging reaches the caller of SyncSource, as it did when
// staging ran on its goroutine: the daemon recovers a job's panic. (If
// it stays on a stager's goroutine, it ends the test binary.) The skill
// that panicked gives up its build, so the skills staged beside it do
// not wait for its slot.
func TestStagingPanicReachesTheCaller(t *testing.T) {
	t.Parallel()
	c := open(t, t.TempDir())
	var skills []Skill
	for _, name := range []string{"alpha", "beta", "gamma", "delta", "epsilon"} {
		s := mkSkill(name, map[string]string{"SKILL.md": name, "notes.md": name})
		if name == "beta" {
			s.Files = panicFS{s.Files}
		}
		skills = append(skills, s)
	}
	sync := func(rev string, skills []Skill) (res Result, p any) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() { p = recover() }()
			res = c.SyncSource(context.Background(), Source{Name: "src", Revision: rev, Skills: skills})
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the sync is stuck")
		}
		return res, p
	}
	if _, p := sync("1", skills); p != "a bug in the source's reader" {
		t.Fatalf("recovered %v, want the reader's panic", p)
	}
	if res, p := sync("2", []Skill{skills[0], skills[2]}); p != nil || len(res.Errors) > 0 {
		t.Errorf("the sync after the panic: %v %v", p, res.Errors)
	}
}

// A name refused on its own is not held against a later one that folds
// to the same on a file system that ignores case.
func TestRefusedNameTakesNoFoldedName(t *testing.T) {
	t.Parallel()
	c := open(t, t.TempDir())
	c.writer.rules = fsRules{foldCase: true}
	bad := "\u017f" + strings.Repeat("a", 254) // 256 bytes: too long a name; "ſ" folds to "s"
	good := "s" + strings.Repeat("a", 254)
	res := c.SyncSource(context.Background(), Source{Name: "src", Revision: "1", Skills: []Skill{
		mkSkill(bad, map[string]string{"SKILL.md": "x"}),
		mkSkill(good, map[string]string{"SKILL.md": "y"}),
	}})
	if len(res.Errors) != 1 || len(res.Changes) != 1 || res.Changes[0].Name != good {
		t.Errorf("errors %v, changes %v; want the long name refused and %s added", res.Errors, res.Changes, good)
	}
}
