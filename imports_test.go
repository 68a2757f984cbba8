package skillsync

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/skillsync/skillsync"

// moduleImports maps each package folder of the module (relative, "." for
// the root) to the module's packages its non-test files import.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case p == module:
				p = "."
			case strings.HasPrefix(p, module+"/"):
				p = strings.TrimPrefix(p, module+"/")
			default:
				continue
			}
			if !slices.Contains(out[dir], p) {
				out[dir] = append(out[dir], p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// deps is every module package pkg reaches through its imports.
func deps(imports map[string][]string, pkg string) map[string]bool {
	seen := map[string]bool{}
	next := []string{pkg}
	for len(next) > 0 {
		p := next[len(next)-1]
		next = next[:len(next)-1]
		for _, q := range imports[p] {
			if !seen[q] {
				seen[q] = true
				next = append(next, q)
			}
		}
	}
	return seen
}

// TestImportRules checks the rules ARCHITECTURE.md states: config
// configures and depends on no part of the domain it configures, and no
// library package imports the root: only the commands, the benchmarks and
// the test-only program that runs a sync to be killed do.
func TestImportRules(t *testing.T) {
	t.Parallel()
	imports := moduleImports(t)
	if len(imports) < 20 {
		t.Fatalf("read the imports of %d packages, want the whole tree", len(imports))
	}
	cfg := deps(imports, "config")
	for _, domain := range []string{"curator", "materialize", "daemon", "fleet", "drafts", "catalog", "syncrun", "targets"} {
		if cfg[domain] {
			t.Errorf("config reaches %s through its imports; it must not depend on the domain it configures", domain)
		}
	}
	for pkg, imps := range imports {
		wiring := pkg == "." || strings.HasPrefix(pkg, "cmd/") || strings.HasPrefix(pkg, "bench/") || pkg == "internal/buildtest/syncchild"
		if !wiring && slices.Contains(imps, ".") {
			t.Errorf("%s imports the root package", pkg)
		}
	}
}
