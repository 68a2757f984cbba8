// Command skillsync syncs Agent Skills from git repositories into the
// places agents read them.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
