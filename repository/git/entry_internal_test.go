package git

import (
	"fmt"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// A tree big enough to be indexed finds each name's entry as a scan
// does: the first of two a hostile tree names alike, nothing for a name
// it lacks. Small trees and trees past the cache's bound are scanned.
func TestTreeEntryIndexFindsWhatAScanFinds(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, indexFrom - 1, indexFrom, 3 * indexFrom} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			tree := &object.Tree{Hash: plumbing.Hash{1}}
			for i := range n {
				tree.Entries = append(tree.Entries, object.TreeEntry{Name: fmt.Sprintf("skill-%04d", i), Mode: filemode.Dir, Hash: plumbing.Hash{byte(i)}})
			}
			// A hostile tree: the same name again, as a file, after the folder.
			tree.Entries = append(tree.Entries, object.TreeEntry{Name: "skill-0000", Mode: filemode.Regular})
			c := newTreeCache()
			for i := range n {
				name := fmt.Sprintf("skill-%04d", i)
				got, ok := c.entry(tree, name)
				want, _ := findEntry(tree, name)
				if !ok || got != want {
					t.Fatalf("entry %s = %v %v, a scan finds %v", name, got, ok, want)
				}
			}
			if got, _ := c.entry(tree, "skill-0000"); got.Mode != filemode.Dir {
				t.Errorf("skill-0000 is the later entry of its name (%v), not the first", got.Mode)
			}
			if got, ok := c.entry(tree, "missing"); ok {
				t.Errorf("a name the tree lacks gave %v", got)
			}
			indexed := len(tree.Entries) >= indexFrom
			if _, ok := c.indexes[tree.Hash]; ok != indexed {
				t.Errorf("tree of %d entries indexed: %v, want %v", len(tree.Entries), ok, indexed)
			}
		})
	}
}

func TestTreeEntryIndexIsBounded(t *testing.T) {
	t.Parallel()
	c := newTreeCache()
	c.indexed = maxCachedEntries - indexFrom + 1
	tree := &object.Tree{Hash: plumbing.Hash{2}}
	for i := range indexFrom {
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: fmt.Sprint(i), Mode: filemode.Regular})
	}
	if e, ok := c.entry(tree, "7"); !ok || e != &tree.Entries[7] {
		t.Fatalf("entry 7 past the bound = %v %v", e, ok)
	}
	if len(c.indexes) != 0 {
		t.Errorf("a tree past the bound was indexed")
	}
}

// A store whose object does not hold what its hash says gives two trees
// of one hash with other entries: the index of the first never answers
// for the second past its entries; the scan does.
func TestTreeEntryIndexOfAnotherTreeOfTheSameHash(t *testing.T) {
	t.Parallel()
	c := newTreeCache()
	big, small := &object.Tree{Hash: plumbing.Hash{3}}, &object.Tree{Hash: plumbing.Hash{3}}
	for i := range 2 * indexFrom {
		big.Entries = append(big.Entries, object.TreeEntry{Name: fmt.Sprint(i), Mode: filemode.Regular})
	}
	for i := range indexFrom {
		small.Entries = append(small.Entries, object.TreeEntry{Name: fmt.Sprint(indexFrom + i), Mode: filemode.Regular})
	}
	if e, ok := c.entry(big, "100"); !ok || e != &big.Entries[100] {
		t.Fatalf("entry 100 of the first tree = %v %v", e, ok)
	}
	if e, ok := c.entry(small, "100"); !ok || e != &small.Entries[100-indexFrom] {
		t.Errorf("entry 100 of the second tree = %v %v, want its own entry", e, ok)
	}
}
