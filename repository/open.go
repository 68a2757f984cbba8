package repository

import (
	"fmt"
	"io"
	"io/fs"
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
	// FS are the file systems compiled into the program, by name
	// ("builtin"), which embedded sources read.
	FS map[string]fs.FS
	// Logf receives what a source has to say while it runs on its own
	// (a listener's lost connection); nil discards it.
	Logf func(format string, args ...any)
}

// Driver is one kind of source, as an rclone backend is: its name, the
// config key that selects it and how a source of it opens.
// A kind lives in its own package, which exports a function returning its
// Driver; the program lists the drivers it wants in a Registry.
type Driver struct {
	Kind Kind
	// Keys are the config keys that hold a source's location (git: URL,
	// dir: PATH; postgres: ENV or dsn_file: PATH): a repositories: entry
	// is of the kind whose location key it sets.
	Keys []string
	// Usage shows the location key in a message: "git: URL".
	Usage string
	// Settings returns empty settings of the kind, which a config entry
	// decodes into; Open is given them back in Spec.Settings.
	Settings func() Settings
	// Open returns a source of the kind; nothing is read until it is used.
	Open func(s Spec) (Repository, error)
}

// Settings are one kind's own settings of a source, decoded from its
// config entry. The config decodes the keys Keys names; Resolve then checks
// them. A kind's settings may have abilities the program asks for
// (Locator, ...).
type Settings interface {
	// Keys lists the config keys the kind reads, its location keys
	// first, each with where its value goes.
	Keys() []Key
	// Resolve checks the decoded settings, makes their paths absolute
	// from base (the config's folder) and returns the name a source of
	// them takes when its entry names none.
	Resolve(base string) (name string, err error)
}

// Key is one config key a kind reads: Value is a pointer that YAML
// decodes into, or a []Key for a nested mapping.
type Key struct {
	Name  string
	Value any
}

// Locator is settings that can say where a source is, as a lock records
// it: a remote with its credentials redacted, a path relative to base, the
// place of a secret but never the secret. Ref is the ref tracked, if any.
type Locator interface {
	Location(base string) (url, ref string)
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
		if d.Kind == "" || d.Open == nil || d.Settings == nil || len(d.Keys) == 0 {
			return nil, fmt.Errorf("register source kind %q: a kind needs a name, location keys, Settings and Open", d.Kind)
		}
		for _, o := range r.drivers {
			if o.Kind == d.Kind {
				return nil, fmt.Errorf("register source kind %q: registered twice", d.Kind)
			}
			for _, k := range d.Keys {
				if slices.Contains(o.Keys, k) {
					return nil, fmt.Errorf("register source kind %q: location key %q is %q's", d.Kind, k, o.Kind)
				}
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

// Lookup returns the driver of kind k; a nil Registry has none.
func (r *Registry) Lookup(k Kind) (Driver, bool) {
	if r == nil {
		return Driver{}, false
	}
	i := slices.IndexFunc(r.drivers, func(d Driver) bool { return d.Kind == k })
	if i < 0 {
		return Driver{}, false
	}
	return r.drivers[i], true
}

// KindOfKey returns the kind whose location key is key, "" when none.
func (r *Registry) KindOfKey(key string) Kind {
	for _, d := range r.drivers {
		if slices.Contains(d.Keys, key) {
			return d.Kind
		}
	}
	return ""
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
