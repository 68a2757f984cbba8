// Package cronspec is the one reading of a schedule expression, shared by
// the config (which checks schedule: when it loads) and the daemon (which
// runs by it).
package cronspec

import "github.com/robfig/cron/v3"

// Parser reads standard five-field expressions and descriptors such as
// @every 15m and @daily; CRON_TZ= picks a time zone.
func Parser() cron.Parser {
	return cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
}

// Check reports whether spec parses.
func Check(spec string) error {
	_, err := Parser().Parse(spec)
	return err
}
