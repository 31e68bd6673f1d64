package lab

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/allot-sched/allot"

// TestBoundaries: the product never depends on the lab, directly or
// through another package, and nothing under internal/ depends on the
// framework runtime; so the product can change without carrying the
// papers, and the shared internals stay below everything that uses them.
// Only cmd/ (the verbs' wiring) and the lab itself may import lab/.
func TestBoundaries(t *testing.T) {
	deps := map[string][]string{} // package -> module packages it imports
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if n := d.Name(); p != ".." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(p, 0)
		if err != nil {
			return nil // no Go files here
		}
		rel, _ := filepath.Rel("..", p)
		path := module
		if rel != "." {
			path += "/" + filepath.ToSlash(rel)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module+"/") {
				deps[path] = append(deps[path], imp)
			}
		}
		if deps[path] == nil {
			deps[path] = []string{}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) < 20 {
		t.Fatalf("found %d packages; is the module root at ..?", len(deps))
	}
	for pkg := range deps {
		rel := strings.TrimPrefix(pkg, module+"/")
		if under(rel, "lab") || under(rel, "cmd") {
			continue
		}
		for _, forbidden := range []string{"lab", "framework"} {
			if forbidden == "framework" && !under(rel, "internal") {
				continue
			}
			if chain := reach(deps, pkg, module+"/"+forbidden); chain != nil {
				t.Errorf("%s depends on %s/: %s", rel, forbidden, strings.Join(chain, " -> "))
			}
		}
	}
}

func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// reach returns an import chain from pkg to a package under prefix, or nil.
func reach(deps map[string][]string, pkg, prefix string) []string {
	seen := map[string]bool{}
	var walk func(p string) []string
	walk = func(p string) []string {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return []string{p}
		}
		if seen[p] {
			return nil
		}
		seen[p] = true
		for _, d := range deps[p] {
			if c := walk(d); c != nil {
				return append([]string{p}, c...)
			}
		}
		return nil
	}
	return walk(pkg)
}
