package repository

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Kind is what a source is: the name of a registered Driver ("git",
// "dir", ...), which the config's kind: key names.
type Kind string

// Spec describes one source to open: its name, its kind, the settings of
// that kind and what the program lends every source.
type Spec struct {
	Source string
	Kind   Kind
	// Settings are the kind's own settings, as its Driver's Decode made
	// them (or a value of the same type built in Go).
	Settings any
	Options  Options
	// Pin, when set, is a revision to read instead of the tracked one (a
	// locked commit); kinds that cannot pin ignore it.
	Pin Revision
	// Host is what the program lends the source.
	Host Host
}

// Host is what the program lends every source it opens: where local
// copies go, where progress is shown, the limits set outside the source's
// entry.
type Host struct {
	// StoreRoot holds local copies of remotes; "" is each kind's default.
	StoreRoot string
	// Progress receives a fetch's progress messages; nil discards them.
	Progress io.Writer
	// MaxFetchSize caps the bytes one fetch may download; 0 is the kind's
	// default.
	MaxFetchSize int64
}

// Driver is one kind of source, as an rclone backend is: its name, the
// config key that selects it and how a source of it opens.
// A kind lives in its own package, which exports a function returning its
// Driver; the program lists the drivers it wants in a Registry.
type Driver struct {
	Kind Kind
	// Key is the config key that holds the source's location (git: URL,
	// dir: PATH); an entry without kind: is of the kind whose Key it sets.
	Key string
	// Open returns a source of the kind; nothing is read until it is used.
	Open func(s Spec) (Repository, error)
}

// Registry is the set of kinds a program reads. It is built once, by the
// program's wiring, and not changed after.
type Registry struct {
	drivers []Driver
}

// NewRegistry returns a registry of the drivers; a kind or a key given
// twice is an error.
func NewRegistry(drivers ...Driver) (*Registry, error) {
	r := &Registry{}
	for _, d := range drivers {
		if d.Kind == "" || d.Open == nil {
			return nil, fmt.Errorf("register a source kind: no name or no Open (%q)", d.Kind)
		}
		for _, o := range r.drivers {
			if o.Kind == d.Kind || (d.Key != "" && o.Key == d.Key) {
				return nil, fmt.Errorf("register source kind %q: kind or key %q is registered twice", d.Kind, d.Key)
			}
		}
		r.drivers = append(r.drivers, d)
	}
	return r, nil
}

// MustRegistry is NewRegistry for a program's fixed list of kinds: a
// mistake in it is a bug, and panics.
func MustRegistry(drivers ...Driver) *Registry {
	r, err := NewRegistry(drivers...)
	if err != nil {
		panic(err)
	}
	return r
}

// Lookup returns the driver of kind k.
func (r *Registry) Lookup(k Kind) (Driver, bool) {
	i := slices.IndexFunc(r.drivers, func(d Driver) bool { return d.Kind == k })
	if i < 0 {
		return Driver{}, false
	}
	return r.drivers[i], true
}

// Kinds returns the registered kinds in the order they were given.
func (r *Registry) Kinds() []Kind {
	out := make([]Kind, len(r.drivers))
	for i, d := range r.drivers {
		out[i] = d.Kind
	}
	return out
}

// Open returns the Repository a Spec describes, opened by its kind's
// driver; nothing is read until the repository is used.
func (r *Registry) Open(s Spec) (Repository, error) {
	d, ok := r.Lookup(s.Kind)
	if !ok {
		names := make([]string, 0, len(r.drivers))
		for _, k := range r.Kinds() {
			names = append(names, string(k))
		}
		return nil, fmt.Errorf("source %s: unknown kind %q (this program reads: %s)", s.Source, s.Kind, strings.Join(names, ", "))
	}
	return d.Open(s)
}
