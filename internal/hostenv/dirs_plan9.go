//go:build plan9

package hostenv

// As os.UserHomeDir, os.UserCacheDir and os.UserConfigDir on Plan 9.
const (
	homeVar         = "home"
	cacheVar        = ""
	cacheBelowHome  = "lib/cache"
	configVar       = ""
	configBelowHome = "lib"
)
