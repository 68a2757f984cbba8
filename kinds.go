package skillsync

import (
	"github.com/skillsync/skillsync/repository"
	"github.com/skillsync/skillsync/repository/all"
)

// Kinds returns the kinds of source skillsync reads (repository/all), for
// the config to decode sources with and the Engine to open them. A config's
// embedded: may name builtin or one of embedded, the names a program lends
// WithEmbedded; any other is refused as the config loads.
func Kinds(embedded ...string) *repository.Registry {
	return all.Kinds(append([]string{"builtin"}, embedded...)...)
}
