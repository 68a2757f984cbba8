package syncrun

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/lock"
)

// The steps of a sync that need not wait for each other run side by
// side: on two cores, a large 1% sync otherwise spent long stretches on
// one while the other had nothing to do (docs/performance.md, round
// twenty-five).

// ReadAhead has the file records of each source whose fetch brings a
// revision other than the recorded one read while the sync goes on
// (materialize.Cache.ReadAhead): the discovery that follows asks for
// them at its first skill. names[i] is the source pending[i] fetches.
// wait waits for the reading.
func (r *Run) ReadAhead(pending []*Pending, names []string) (wait func()) {
	var ahead sync.WaitGroup
	for i, p := range pending {
		recorded, read := r.Cache.ReadAhead(names[i])
		if read == nil {
			continue
		}
		ahead.Go(func() {
			if rep := p.Wait(); rep.Err == nil && rep.Revision != recorded {
				read()
			}
		})
	}
	return ahead.Wait
}

// WriteLock writes the lock file at name as the committed cache has it,
// for sources whose config lies in base, and returns a function that
// waits for that. hadLock says the sync read r.Lock from that file. A
// lock that says what it said is not written, nor encoded to find out:
// with thousands of skills that is most of a sync with nothing new. It
// is compared, and written, on another goroutine, beside the catalog (a
// lock of 10,000 skills takes some 20 ms to encode, one of 2,000 nearly
// a millisecond to compare); until the wait, nothing may change the
// cache's manifest or r.Lock. cfg's sources are locked.
func (r *Run) WriteLock(cfg *config.Config, base, name string, hadLock bool) (wait func() error) {
	sources := cfg.Sources
	for _, rn := range r.Lock.Renamed(sources, base) {
		// Said once: the lock written below no longer has the old name.
		// The entry's file and line come first, as the config's own
		// warnings do: the config may be far from here.
		where := ""
		if i := slices.IndexFunc(sources, func(s config.Source) bool { return s.Name == rn.To }); i >= 0 && cfg.File != "" {
			where = fmt.Sprintf("%s:%d: ", cfg.File, sources[i].Line)
		}
		r.Report.Warnings = append(r.Report.Warnings, fmt.Sprintf("%ssource %s reads what source %s read: the usage, pins and archive states of its skills stay recorded under %s; name it %s again in the config to keep them", where, rn.To, rn.From, rn.From, rn.From))
	}
	manifest, reached := r.Cache.Manifest(), r.Report.Reached()
	write := func() error {
		// A lock file a killed sync was writing: the lock may be written
		// only when it changes, which may be long after.
		atomicfile.Sweep(filepath.Dir(name), atomicfile.LeftoverAge, filepath.Base(name))
		next := lock.FromCache(sources, base, manifest, r.Lock, reached, r.archived)
		if hadLock && next.Same(r.Lock) {
			return nil
		}
		if err := next.Write(name); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- write() }()
	return func() error { return <-done }
}
