//go:build darwin || ios

package hostenv

// As os.UserCacheDir and os.UserConfigDir on macOS: below $HOME/Library,
// never an XDG variable (so variable names none that is set).
const (
	homeVar         = "HOME"
	cacheVar        = ""
	cacheBelowHome  = "Library/Caches"
	configVar       = ""
	configBelowHome = "Library/Application Support"
)
