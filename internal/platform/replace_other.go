//go:build !unix

package platform

import "os"

// ReplaceFile renames the file from to to, replacing a file at to:
// os.Rename, which on Windows is MoveFileEx with
// MOVEFILE_REPLACE_EXISTING and looks at to no more than that.
func ReplaceFile(from, to string) error { return os.Rename(from, to) }
