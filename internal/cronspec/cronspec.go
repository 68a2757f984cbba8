// Package cronspec is the one reading of a schedule expression, shared by
// the config (which checks schedule: when it loads) and the daemon (which
// runs by it).
package cronspec

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Parser reads standard five-field expressions and descriptors such as
// @every 15m and @daily; CRON_TZ= picks a time zone.
func Parser() cron.Parser {
	return cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
}

// Check reports whether spec parses and runs at all. The parser takes
// @every below a second (a negative one too) for every second, so a slip
// of the sign would sync every second: it is refused, and so is a date
// no calendar has (0 3 31 2 *), which would never run.
func Check(spec string) error {
	s, err := Parser().Parse(spec)
	if err != nil {
		return err
	}
	if every, ok := strings.CutPrefix(strings.TrimSpace(spec), "@every "); ok {
		if d, err := time.ParseDuration(strings.TrimSpace(every)); err == nil && d < time.Second {
			return fmt.Errorf("@every %s: the interval must be a second or more", strings.TrimSpace(every))
		}
	}
	if s.Next(time.Now()).IsZero() {
		return fmt.Errorf("%q never runs: no date matches it", spec)
	}
	return nil
}
