package materialize

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillsync/skillsync/internal/atomicfile"
	"github.com/skillsync/skillsync/internal/platform"
)

// exchange puts staged in place of live in one step where the system can
// (platform.Exchange: Linux renameat2(RENAME_EXCHANGE), macOS
// renamex_np(RENAME_SWAP)), so a reader opening live sees the old
// directory or the new, never neither; elsewhere (Windows, a file system
// without the call) by two renames, journalled for the next run. It
// returns the path now holding the old version, or "" when live did not
// exist.
func (d dest) exchangeIn(staged, live string) (string, error) {
	return d.exchangeWith(d.exchange, staged, live)
}

// exchangeWith is exchange with the one-step call given: tests pass one
// that always answers platform.ErrNoExchange, forcing the two renames
// Windows makes.
func (d dest) exchangeWith(swap func(a, b string) error, staged, live string) (string, error) {
	err := swap(staged, live)
	switch {
	case err == nil:
		return staged, nil
	case errors.Is(err, platform.ErrNoExchange):
		return d.exchangeByRenames(staged, live)
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(live); errors.Is(lerr, fs.ErrNotExist) {
			return "", d.rename(staged, live)
		}
	}
	return "", err
}

// The two-rename exchange and its recovery rule.
//
// Without a one-step exchange, live is moved aside to staged+".old" and
// staged moved into its place. Between the two renames live is missing; a
// crash there would leave the skill gone until a later sync rebuilt it,
// and a source that failed on that sync could not. So before the first
// rename a journal, staged+".exchange", records live (relative to the
// destination, the folder holding staging), made durable. Every exchange
// is made under the destination's marker of a run under way, and a run
// whose exchange failed and left its journal leaves the marker
// (writer.commit), so a journal outlives its run only where the marker
// is; a cache whose manifest an older build wrote is recovered all the
// same (Manifest.unmarked). The rule the next run applies
// (recoverExchanges, when it opens the destination, under its lock): for
// each journal in staging, when live is missing and staged+".old" is
// there, the old version is renamed back to live; in every case the
// journal is then removed. The staged new version is left for the
// writer's ordinary cleanup. A journal is a file anyone may have planted:
// its path must be one or two safe names below the destination, through
// real directories, or it is ignored.

const (
	oldSuffix     = ".old"
	journalSuffix = ".exchange"
	// maxJournal bounds what is read of a journal.
	maxJournal = 4 << 10
)

// exchangeJournal is what a journal holds.
type exchangeJournal struct {
	// Live is the entry being replaced, slash-separated, relative to the
	// destination.
	Live string `json:"live"`
}

// exchangeByRenames moves live aside and staged into its place, under a
// journal (see above).
func (d dest) exchangeByRenames(staged, live string) (string, error) {
	old, journal, err := d.beginExchange(staged, live)
	if err != nil || old == "" {
		return old, err
	}
	return old, d.finishExchange(staged, live, old, journal)
}

// beginExchange writes the journal and moves live aside. old is "" when
// live did not exist: staged has then been renamed to live and nothing
// remains to do.
func (d dest) beginExchange(staged, live string) (old, journal string, err error) {
	if _, err := os.Lstat(live); errors.Is(err, fs.ErrNotExist) {
		return "", "", d.rename(staged, live)
	}
	root := filepath.Dir(filepath.Dir(staged))
	rel, err := filepath.Rel(root, live)
	if err != nil || !filepath.IsLocal(rel) {
		return "", "", fmt.Errorf("exchange %s: not inside %s", live, root)
	}
	journal = staged + journalSuffix
	data, err := json.Marshal(exchangeJournal{Live: filepath.ToSlash(rel)})
	if err != nil {
		return "", "", err
	}
	// Staging holds thousands of entries, and what it holds besides its
	// folders and patches is removed when it is next read: a journal's
	// write lists none of them.
	if err := d.writeFile(journal, data, 0o644); err != nil {
		return "", "", fmt.Errorf("exchange %s: journal: %w", live, err)
	}
	old = staged + oldSuffix
	if err := d.rename(live, old); err != nil {
		_ = d.remove(journal)
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", d.rename(staged, live)
		}
		return "", "", err
	}
	return old, journal, nil
}

// finishExchange moves staged into live's place and drops the journal. A
// failed rename puts the old version back.
func (d dest) finishExchange(staged, live, old, journal string) error {
	if err := d.rename(staged, live); err != nil {
		if rerr := d.rename(old, live); rerr == nil {
			_ = d.remove(journal)
		}
		return err
	}
	if err := d.remove(journal); err != nil {
		return fmt.Errorf("exchange %s: remove journal: %w", live, err)
	}
	return nil
}

// recoverExchanges applies the recovery rule to what staging holds: each
// old version whose live entry a two-rename exchange left missing is put
// back. It returns what it put back, for tests. A journal that does not
// parse or names a path it may not is removed and ignored; one whose old
// version cannot be put back is kept, with its old version, and reported,
// the others recovered all the same. A staging folder that is not a real
// directory holds nothing to recover.
func recoverExchanges(d dest, staging string) (restored []string, err error) {
	if info, lerr := os.Lstat(staging); lerr != nil || !info.IsDir() {
		return nil, nil
	}
	entries, err := os.ReadDir(staging)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", staging, err)
	}
	root := filepath.Dir(staging)
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, journalSuffix) {
			continue
		}
		journal := filepath.Join(staging, name)
		live, jerr := readJournal(root, journal)
		if jerr == nil {
			old := filepath.Join(staging, strings.TrimSuffix(name, journalSuffix)+oldSuffix)
			put, perr := d.putBack(old, live)
			if perr != nil {
				// The journal stays, and with it the old version: the
				// next run tries again.
				errs = append(errs, fmt.Errorf("recover %s from %s: %w", live, old, perr))
				continue
			}
			if put {
				restored = append(restored, live)
			}
		}
		// Done, or not a journal of ours: either way it goes.
		if rerr := d.remove(journal); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			errs = append(errs, rerr)
		}
	}
	return restored, errors.Join(errs...)
}

// readJournal returns the live path a journal names, checked: one or two
// safe names below root, each parent a real directory.
func readJournal(root, journal string) (string, error) {
	data, err := atomicfile.ReadBounded(journal, maxJournal)
	if err != nil {
		return "", err
	}
	var j exchangeJournal
	if err := json.Unmarshal(data, &j); err != nil {
		return "", fmt.Errorf("not a journal: %w", err)
	}
	parts := strings.Split(j.Live, "/")
	if len(parts) == 0 || len(parts) > 2 {
		return "", fmt.Errorf("live entry %q is not one or two names", j.Live)
	}
	for _, p := range parts {
		if err := checkName("entry", p); err != nil {
			return "", err
		}
	}
	dir := root
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		info, err := os.Lstat(dir)
		if err != nil {
			return "", err
		}
		if !info.IsDir() {
			return "", fmt.Errorf("%s is not a directory", dir)
		}
	}
	return filepath.Join(dir, parts[len(parts)-1]), nil
}

// putBack renames old to live when live is missing and old is a real
// directory or a symbolic link (a target's entry in symlink mode); put
// says whether it did.
func (d dest) putBack(old, live string) (put bool, err error) {
	if _, err := os.Lstat(live); !errors.Is(err, fs.ErrNotExist) {
		return false, err // live is there (the exchange finished or never began), or cannot be told
	}
	info, err := os.Lstat(old)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// A target in symlink mode exchanges links: the link itself goes
	// back, never followed.
	if !info.IsDir() && info.Mode()&fs.ModeSymlink == 0 {
		return false, fmt.Errorf("%s is neither a directory nor a link", old)
	}
	if err := d.renameNoReplace(old, live); err != nil {
		return false, err
	}
	return true, nil
}

// changedAt is when info last changed: its ctime where the system tells,
// which a rename sets too, else its mtime.
func changedAt(info fs.FileInfo) time.Time { return platform.ChangeTime(info) }
