package skillsync

import (
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/all"
)

// Kinds returns the kinds of source skillsync reads (repository/all), for
// the config to decode sources with and the Engine to open them.
func Kinds() *repository.Registry { return all.Kinds() }
