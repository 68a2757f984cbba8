// Command skillsync syncs Agent Skills from git repositories into the
// places agents read them.
package main

import (
	"os"

	// Its initialiser gives the heap huge pages before most packages'
	// initialisers fill it (internal/platform/startheap says why).
	_ "github.com/skillsync/skillsync/internal/platform/startheap"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
