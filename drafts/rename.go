package drafts

import "github.com/skillsync/skillsync/internal/platform"

// renameNoReplace renames from to to, failing with fs.ErrExist when to
// exists, even as an empty directory, which plain rename(2) would replace.
func renameNoReplace(from, to string) error { return platform.RenameNoReplace(from, to) }
