package skillsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/layering"
)

// CurateOptions change a curation.
type CurateOptions struct {
	// Now is the moment curation judges idle time at; zero means now.
	Now time.Time
	// DryRun plans and changes nothing.
	DryRun bool
	// Force curates even while a skill was used within min_idle.
	Force bool
}

// Curate marks idle skills stale, archives long-idle ones, and makes
// stale skills that were used since active again. Archiving a local skill
// moves its directory to <layer dir>/.archive/<name>-<stamp>/; archiving a
// marketplace skill takes it out of the cache and the targets.
func (e *Engine) Curate(ctx context.Context, opts CurateOptions) (curator.Plan, error) {
	now := opts.Now
	if now.IsZero() {
		now = e.now()
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		return curator.Plan{}, err
	}
	if !opts.DryRun {
		if err := e.seen(ctx, cat, now); err != nil {
			return curator.Plan{}, err
		}
	}
	var candidates []curator.Candidate
	byName := map[string]*layering.Winner{}
	for _, w := range cat.Winners {
		candidates = append(candidates, curator.Candidate{Name: w.Skill.Name, Layer: w.Layer.String()})
		byName[w.Skill.Name] = w
	}
	var plan curator.Plan
	var events []curator.Event
	marketplace := false
	err = e.Usage().Update(ctx, func(u *curator.Usage) error {
		plan = e.cfg.Curator.Plan(u, candidates, now, opts.Force)
		if opts.DryRun {
			return errDryRun
		}
		var done []curator.Change
		for _, c := range plan.Changes {
			w := byName[c.Name]
			detail := c.Reason
			if c.To == curator.Archived && w.Layer != layering.Marketplace {
				dst, err := archiveDir(w.Dir, c.Name, now)
				if err != nil {
					e.warnf("archive %s: %v; it stays %s", c.Name, err, c.From)
					continue
				}
				detail += "; moved to " + dst
			}
			marketplace = marketplace || (c.To == curator.Archived && w.Layer == layering.Marketplace)
			u.SetState(c.Name, c.To, now)
			done = append(done, c)
			op := c.To
			if c.To == curator.Active {
				op = "reactivated"
			}
			events = append(events, curator.Event{TS: now, Actor: e.actor, Op: op, Target: c.Name, From: c.From, To: c.To, Detail: detail})
		}
		plan.Changes = append([]curator.Change{}, done...)
		u.Curator.LastRunAt = &now
		u.Curator.LastSummary = summary(plan)
		return nil
	})
	if errors.Is(err, errDryRun) {
		return plan, nil
	}
	if err != nil {
		return plan, err
	}
	if err := e.Audit().Append(events...); err != nil {
		return plan, err
	}
	if marketplace {
		if err := e.resync(ctx); err != nil {
			return plan, fmt.Errorf("take archived skills out of the cache: %w", err)
		}
	}
	return plan, nil
}

var errDryRun = errors.New("dry run")

func summary(p curator.Plan) string {
	if p.Skipped != "" {
		return "skipped: " + p.Skipped
	}
	counts := map[string]int{}
	for _, c := range p.Changes {
		counts[c.To]++
	}
	return fmt.Sprintf("checked %d: %d stale, %d archived, %d reactivated", p.Checked, counts[curator.Stale], counts[curator.Archived], counts[curator.Active])
}

// archiveStamp is the UTC time format of archive directory names.
const archiveStamp = "20060102T150405Z"

// archiveDir moves a local skill's directory into .archive beside it.
func archiveDir(dir, name string, now time.Time) (string, error) {
	if dir == "" {
		return "", errors.New("the skill has no directory to move")
	}
	archive := filepath.Join(filepath.Dir(dir), ".archive")
	if err := os.MkdirAll(archive, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(archive, name+"-"+now.UTC().Format(archiveStamp))
	if err := os.Rename(dir, dst); err != nil {
		return "", err
	}
	return dst, nil
}

// ArchivedCopy is a local skill in an .archive directory.
type ArchivedCopy struct {
	Name  string
	Dir   string
	Layer layering.Layer
	At    time.Time
}

// ArchivedCopies lists the archived local skills of the workspace and
// user layers, newest first.
func (e *Engine) ArchivedCopies() []ArchivedCopy {
	var out []ArchivedCopy
	for _, l := range e.localLayers() {
		if l.layer == layering.Global {
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(l.dir, ".archive"))
		for _, en := range entries {
			i := strings.LastIndex(en.Name(), "-")
			if i < 0 || !en.IsDir() {
				continue
			}
			at, err := time.Parse(archiveStamp, en.Name()[i+1:])
			if err != nil {
				continue
			}
			out = append(out, ArchivedCopy{Name: en.Name()[:i], Dir: filepath.Join(l.dir, ".archive", en.Name()), Layer: l.layer, At: at})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	return out
}

// Restore makes an archived skill active again: a local skill's newest
// archived copy moves back, and a marketplace skill is materialized again
// at once. It refuses, saying why, when a skill of that name now stands
// where the copy would go.
func (e *Engine) Restore(ctx context.Context, name string) (string, error) {
	u, err := e.Usage().Load()
	if err != nil {
		return "", err
	}
	key := layering.Key(name)
	for _, c := range e.ArchivedCopies() {
		if layering.Key(c.Name) != key {
			continue
		}
		layerDir := filepath.Dir(filepath.Dir(c.Dir))
		dst := filepath.Join(layerDir, c.Name)
		if _, err := os.Lstat(dst); err == nil {
			return "", fmt.Errorf("restore %s: %s already exists; move it away first, the archived copy stays in %s", c.Name, dst, c.Dir)
		}
		if w, _, err := e.Lookup(ctx, c.Name); err == nil && w.Layer >= c.Layer {
			return "", fmt.Errorf("restore %s: a skill of that name now comes from %s (%s layer); the archived copy stays in %s", c.Name, w.Source, w.Layer, c.Dir)
		}
		if err := os.Rename(c.Dir, dst); err != nil {
			return "", fmt.Errorf("restore %s: %w", c.Name, err)
		}
		return c.Name, e.markRestored(ctx, c.Name, "moved back from "+c.Dir)
	}
	for n, s := range u.Skills {
		if layering.Key(n) == key && s.State == curator.Archived {
			if err := e.markRestored(ctx, n, "materialized again"); err != nil {
				return n, err
			}
			return n, e.resync(ctx)
		}
	}
	return "", fmt.Errorf("restore %s: no archived skill of that name", name)
}

func (e *Engine) markRestored(ctx context.Context, name, detail string) error {
	now := e.now()
	var from string
	err := e.Usage().Update(ctx, func(u *curator.Usage) error {
		from = u.StateOf(name)
		u.SetState(name, curator.Active, now)
		u.Skill(name).FirstSeenAt = &now // idle time starts over
		return nil
	})
	if err != nil {
		return err
	}
	return e.Audit().Append(curator.Event{TS: now, Actor: e.actor, Op: "restored", Target: name, From: from, To: curator.Active, Detail: detail})
}

// resync materializes the cache again at the locked revisions without any
// network, after the curator changed what is archived. A source that
// cannot be read offline keeps its files, which is no failure of the
// curation.
func (e *Engine) resync(ctx context.Context) error {
	_, err := e.Sync(ctx, SyncOptions{Offline: true, Locked: true})
	if errors.Is(err, ErrPartial) || errors.Is(err, ErrFailed) {
		return nil
	}
	return err
}
