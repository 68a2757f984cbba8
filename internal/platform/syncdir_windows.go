package platform

import "os"

// SyncDir opens dir, as it does elsewhere, and flushes nothing: Windows
// has no fsync of a directory. (*os.File).Sync is FlushFileBuffers, whose
// handle "must have the GENERIC_WRITE access right"
// (learn.microsoft.com/windows/win32/api/fileapi/nf-fileapi-flushfilebuffers),
// and os.Open opens a directory for reading only: the flush would fail
// with ERROR_ACCESS_DENIED every time, and with it every atomic write,
// after its rename. NTFS logs renames in its journal, in order, so a
// rename is never durable before one made earlier.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return d.Close()
}
