package curator

import (
	"fmt"
	"strings"

	"github.com/skillsync/skillsync/layering"
	"github.com/skillsync/skillsync/skill"
)

// Copy names one copy of a skill: the layer it comes from, whose it is
// there (the source of a marketplace copy, the user of a user-layer copy,
// nobody's for the workspace and global layers) and its name. Usage and
// curation state are kept per copy, so archiving Alice's pdf leaves the
// workspace's pdf alone.
//
// Its text form, the key in .usage.json, is <layer>[:<owner>]/<name>:
// marketplace:team/pdf, workspace/pdf, user:alice/pdf, global/pdf.
type Copy struct {
	Layer layering.Layer
	Owner string
	Name  string
}

var layersByName = map[string]layering.Layer{
	"global": layering.Global, "marketplace": layering.Marketplace,
	"workspace": layering.Workspace, "user": layering.User,
}

// NewCopy returns the copy of name in layer, owned by owner, after
// checking every part: the layer is one of the four, owner is set exactly
// for the marketplace and user layers, and owner and name are each one
// safe path component (skill.ValidName).
func NewCopy(layer layering.Layer, owner, name string) (Copy, error) {
	c := Copy{Layer: layer, Owner: owner, Name: name}
	return c, c.Validate()
}

// Validate checks a copy as NewCopy does.
func (c Copy) Validate() error {
	switch c.Layer {
	case layering.Marketplace, layering.User:
		if !skill.ValidName(c.Owner) {
			return fmt.Errorf("copy %q: %s owner %q is not one safe path component", c, c.Layer, c.Owner)
		}
	case layering.Workspace, layering.Global:
		if c.Owner != "" {
			return fmt.Errorf("copy %q: the %s layer has no owner, got %q", c, c.Layer, c.Owner)
		}
	default:
		return fmt.Errorf("copy %q: unknown layer %s", c, c.Layer)
	}
	if !skill.ValidName(c.Name) {
		return fmt.Errorf("copy %q: name %q is not one safe path component", c, c.Name)
	}
	return nil
}

// String returns the copy's key: <layer>[:<owner>]/<name>.
func (c Copy) String() string {
	if c.Owner == "" {
		return c.Layer.String() + "/" + c.Name
	}
	return c.Layer.String() + ":" + c.Owner + "/" + c.Name
}

// ParseCopy reads a key as String writes it and validates every part, so
// a name read from .usage.json can never leave its directory.
func ParseCopy(key string) (Copy, error) {
	prefix, name, ok := strings.Cut(key, "/")
	if !ok {
		return Copy{}, fmt.Errorf("copy %q: want <layer>[:<source or user>]/<name>", key)
	}
	layerName, owner, _ := strings.Cut(prefix, ":")
	layer, ok := layersByName[layerName]
	if !ok {
		return Copy{}, fmt.Errorf("copy %q: unknown layer %q", key, layerName)
	}
	return NewCopy(layer, owner, name)
}

// MarshalText writes the copy's key, so a Copy is a JSON map key.
func (c Copy) MarshalText() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads a key with ParseCopy.
func (c *Copy) UnmarshalText(b []byte) error {
	p, err := ParseCopy(string(b))
	if err != nil {
		return err
	}
	*c = p
	return nil
}
