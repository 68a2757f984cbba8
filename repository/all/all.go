// Package all lists the kinds of source skillsync reads. It is the one
// place that names them: a new kind is a package under repository/ and
// one line here (and a repositorytest.Run call in its tests).
package all

import (
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/git"
	"github.com/skillsync/skillsync/repository/postgres"
)

// Kinds returns a registry of every kind, in the order a config's
// messages list them. embedded names the file systems the program lends
// embedded: sources (Host.FS): a config naming another is refused as it
// loads; with none, any name loads and fails when its source opens. Each
// call builds a new one: there is no package-level registry to change.
func Kinds(embedded ...string) *repository.Registry {
	return repository.MustRegistry(
		dir.EmbeddedDriver(embedded...),
		dir.LocalDriver(),
		git.Driver(),
		postgres.Driver(),
	)
}
