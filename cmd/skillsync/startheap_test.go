package main

import (
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestMainLinksStartHeap: the program's heap gets its huge pages from
// startheap's initialiser, which runs only in a program that links the
// package (its own test checks what the initialiser does).
func TestMainLinksStartHeap(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == "github.com/skillsync/skillsync/internal/platform/startheap" {
			return
		}
	}
	t.Error("main.go does not import internal/platform/startheap: every process would fault its first heap in 4 KiB pages")
}
