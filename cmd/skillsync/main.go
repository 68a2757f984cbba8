// Command skillsync syncs Agent Skills from git repositories into the
// places agents read them.
package main

import (
	"os"

	// Maps the binary's text ahead while the initialisers run, on the
	// core they leave idle (its package says why).
	_ "github.com/skillsync/skillsync/internal/platform/starttext"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
