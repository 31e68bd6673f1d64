// Package docs holds the project's design notes and the test that keeps
// their package map honest.
package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// mapRow is a row of design.md's package table: | `path` | what it owns |
var mapRow = regexp.MustCompile("^\\| `([a-z0-9_/]+)` \\|")

// TestPackageMapMatchesTheModule: design.md's package table names every
// package of the module (a directory with Go files) and nothing else, so a
// new package cannot land without its row and a moved one leaves no stale
// row behind.
func TestPackageMapMatchesTheModule(t *testing.T) {
	documented := map[string]bool{}
	f, err := os.Open("design.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := mapRow.FindStringSubmatch(sc.Text()); m != nil {
			documented[m[1]] = true
		}
	}
	actual, err := modulePackages("..")
	if err != nil {
		t.Fatal(err)
	}
	var missing, stale []string
	for p := range actual {
		if !documented[p] {
			missing = append(missing, p)
		}
	}
	for p := range documented {
		if !actual[p] {
			stale = append(stale, p)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("packages missing from design.md's package table: %v", missing)
	}
	if len(stale) > 0 {
		t.Errorf("design.md's package table names packages that do not exist: %v", stale)
	}
}

// modulePackages lists the module's packages below root by their paths
// relative to it: the directories holding Go files, this one (docs, whose
// only Go file is this test) and testdata excepted.
func modulePackages(root string) (map[string]bool, error) {
	pkgs := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "docs" || name == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		if rel != "." {
			pkgs[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	return pkgs, err
}
