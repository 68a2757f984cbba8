package config

import (
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/dir"
	"github.com/skillsync/skillsync/repository/git"
	"github.com/skillsync/skillsync/repository/postgres"
)

// testKinds are the kinds skillsync reads, in the order its wiring lists
// them (the root's Kinds, which config may not import).
func testKinds() *repository.Registry {
	return repository.MustRegistry(dir.EmbeddedDriver(), dir.LocalDriver(), git.Driver(), postgres.Driver())
}
