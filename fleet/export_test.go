package fleet

import "time"

// Migrations are the schema's versions, for the test that upgrades a
// schema made by an older skillsync.
var Migrations = migrations

// SetWallClock makes f this machine's clock until the returned func runs.
func SetWallClock(f func() time.Time) (restore func()) {
	old := wallClock
	wallClock = f
	return func() { wallClock = old }
}
