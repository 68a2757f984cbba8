//go:build !windows && !darwin && !ios && !plan9

package hostenv

// As os.UserCacheDir and os.UserConfigDir on Linux and the BSDs: the XDG
// variables, else below $HOME.
const (
	homeVar         = "HOME"
	cacheVar        = "XDG_CACHE_HOME"
	cacheBelowHome  = ".cache"
	configVar       = "XDG_CONFIG_HOME"
	configBelowHome = ".config"
)
