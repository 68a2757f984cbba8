//go:build !windows

package platform

import (
	"fmt"
	"os"
)

// SyncDir makes the entries of the directory dir durable (the files
// renamed into it or out of it): an fsync of the directory.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
