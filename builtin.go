package skillsync

import (
	"embed"
	"io/fs"
)

//go:embed builtin
var builtinFS embed.FS

// Builtin returns the skills compiled into skillsync: embedded: builtin.
func Builtin() fs.FS {
	sub, err := fs.Sub(builtinFS, "builtin")
	if err != nil {
		panic(err) // the directory is part of the build
	}
	return sub
}
