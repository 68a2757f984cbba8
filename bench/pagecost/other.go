//go:build !linux

// Command pagecost measures what a first touch of memory costs; it uses
// Linux's huge-page advice and runs on Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "pagecost: Linux only")
	os.Exit(2)
}
