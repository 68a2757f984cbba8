package materialize

import (
	"errors"
	"os"
)

// exchangeByRenames moves live aside and staged into its place. Between
// the two renames live is missing for a moment; systems with an exchange
// call avoid that.
func exchangeByRenames(staged, live string) (string, error) {
	old := staged + ".old"
	if err := os.Rename(live, old); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", os.Rename(staged, live)
		}
		return "", err
	}
	if err := os.Rename(staged, live); err != nil {
		_ = os.Rename(old, live)
		return "", err
	}
	return old, nil
}
