package platform

import "errors"

// ErrLinkOnPath is wrapped by MkdirBelow's error for a link met on the
// way from its root.
var ErrLinkOnPath = errors.New("is a symbolic link")
