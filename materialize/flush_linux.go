package materialize

// syncFSCoversDirs is set where syncFS makes every change of the file
// system durable, renames included (Linux's syncfs): commit then
// flushes the folders its swaps changed with one call rather than one
// fsync each.
const syncFSCoversDirs = true
