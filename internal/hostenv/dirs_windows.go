//go:build windows

package hostenv

// As os.UserHomeDir, os.UserCacheDir and os.UserConfigDir on Windows:
// %USERPROFILE%, %LocalAppData% and %AppData%, with no fallback below the
// home directory.
const (
	homeVar         = "USERPROFILE"
	cacheVar        = "LocalAppData"
	cacheBelowHome  = ""
	configVar       = "AppData"
	configBelowHome = ""
)
