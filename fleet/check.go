package fleet

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/hostid"
)

// Limits on what a host may report, checked when written and when read.
const (
	// MaxCount is the largest counter a row may hold.
	MaxCount = 1_000_000_000_000
	// MaxAhead is how far in the future a reported time may be.
	MaxAhead = 24 * time.Hour
	// MaxSkew bounds how far a pushing host's clock may run from the
	// store server's: a push from further is refused (ErrClockSkew).
	MaxSkew = 24 * time.Hour
	// MinSkew is the least skew a push corrects the host's times by:
	// less is within a push's own latency.
	MinSkew = time.Minute
	// maxHostID bounds a host id, an environment, a version, a source
	// name, a revision and a status.
	maxText = hostid.MaxLen
	// maxError bounds an error message; longer ones are cut on push.
	maxError = 2000
	// maxRecords bounds the records of one push; more go in several.
	maxRecords = 50_000
	// maxSources bounds the sources of one heartbeat.
	maxSources = 1000
	// maxHosts bounds a count of hosts read from a rollup row.
	maxHosts = 100_000_000
)

// ValidHostID reports whether id can name a host: 1 to 200 bytes of
// valid UTF-8, no control or invisible formatting character, no space at
// its ends.
func ValidHostID(id string) bool { return hostid.Valid(id) }

// printable reports whether s is valid UTF-8 without control or format
// characters.
func printable(s string) bool { return hostid.Printable(s) }

// checkText checks a short field: at most max bytes, printable.
func checkText(what, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%s is %d bytes, more than %d", what, len(s), max)
	}
	if !printable(s) {
		return fmt.Errorf("%s %q holds a control character or invalid UTF-8", what, s)
	}
	return nil
}

// checkCount checks a counter.
func checkCount(what string, n int64) error {
	if n < 0 || n > MaxCount {
		return fmt.Errorf("%s %d is outside 0..%d", what, n, int64(MaxCount))
	}
	return nil
}

// checkTime checks a reported time against now: not more than MaxAhead
// ahead. The zero time means none.
func checkTime(what string, t, now time.Time) error {
	if !t.IsZero() && t.After(now.Add(MaxAhead)) {
		return fmt.Errorf("%s %s is more than %s ahead of %s", what, t.UTC().Format(time.RFC3339), MaxAhead, now.UTC().Format(time.RFC3339))
	}
	return nil
}

// cleanError makes an error message fit a row: control characters become
// spaces and it is cut at maxError bytes on a character boundary.
func cleanError(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	if len(s) <= maxError {
		return s
	}
	cut := maxError
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// checkRecord checks one usage record.
func checkRecord(r Record, now time.Time) error {
	if err := r.Copy.Validate(); err != nil {
		return err
	}
	for _, c := range []struct {
		what string
		n    int64
	}{{"uses", r.Uses}, {"views", r.Views}} {
		if err := checkCount(c.what, c.n); err != nil {
			return fmt.Errorf("copy %s: %w", r.Copy, err)
		}
	}
	for _, c := range []struct {
		what string
		t    time.Time
	}{{"last use", r.LastUsedAt}, {"last view", r.LastViewedAt}} {
		if err := checkTime(c.what, c.t, now); err != nil {
			return fmt.Errorf("copy %s: %w", r.Copy, err)
		}
	}
	if err := checkText("state", r.State, 32); err != nil {
		return fmt.Errorf("copy %s: %w", r.Copy, err)
	}
	return nil
}

// copyOf rebuilds and checks a copy read from a row.
func copyOf(layer, owner, name string) (curator.Copy, error) {
	return curator.ParseCopy(keyOf(layer, owner, name))
}

func keyOf(layer, owner, name string) string {
	if owner == "" {
		return layer + "/" + name
	}
	return layer + ":" + owner + "/" + name
}

var errOutOfRange = fmt.Errorf("a count is outside 0..%d", int64(MaxCount))
