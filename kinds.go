package skillsync

import (
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/git"
	"github.com/skillsync/skillsync/repository/postgres"
)

// Kinds returns the kinds of source skillsync reads, in the order a
// config's error lists them. It is the one place that names them: a new
// kind is a package under repository/ and one line here.
func Kinds() *repository.Registry {
	return repository.MustRegistry(
		dir.EmbeddedDriver(),
		dir.LocalDriver(),
		git.Driver(),
		postgres.Driver(),
	)
}
