//go:build unix && !linux && !darwin

package platform

import "os"

// Exchange: this system has no call skillsync knows for a one-step
// exchange.
func (t *Tree) Exchange(a, b string) error {
	return &os.LinkError{Op: "exchange", Old: t.full(a), New: t.full(b), Err: ErrNoExchange}
}
