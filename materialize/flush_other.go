//go:build !linux

package materialize

// syncFSCoversDirs: elsewhere each changed folder is flushed alone.
const syncFSCoversDirs = false
