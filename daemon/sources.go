package daemon

import (
	"fmt"

	"github.com/skillsync/skillsync/repository"
)

// Sources gives an Engine its PushSources and OpenListener from a way to
// open the config's sources.
type Sources struct {
	// Names are the config's sources, in its order.
	Names []string
	// Open opens the source name; logf, when not nil, receives what the
	// source reports as it runs (a listening connection that dropped).
	// Opening a source reads nothing.
	Open func(name string, logf func(format string, args ...any)) (repository.Repository, error)
}

// PushSources names the sources that announce their changes as they
// happen (a repository.Listener: a database that NOTIFYs). A source that
// does not open is kept, so that listening reports why.
func (s Sources) PushSources() []string {
	var names []string
	for _, name := range s.Names {
		r, err := s.Open(name, nil)
		if _, ok := r.(repository.Listener); ok || err != nil {
			names = append(names, name)
		}
		repository.Close(r)
	}
	return names
}

// OpenListener opens the source name to listen to; lost receives a line
// each time its connection drops. nil, nil: the source cannot listen.
func (s Sources) OpenListener(name string, lost func(msg string)) (repository.Listener, error) {
	r, err := s.Open(name, func(format string, args ...any) { lost(fmt.Sprintf(format, args...)) })
	if err != nil {
		return nil, err
	}
	l, ok := r.(repository.Listener)
	if !ok {
		repository.Close(r)
		return nil, nil
	}
	return l, nil
}
