package shape

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const (
	maxFuncLines = 80
	maxFileLines = 600
)

// TestModuleShape walks the module and fails on any function over
// maxFuncLines (tests included) and any non-test file over maxFileLines;
// generated protobuf code is exempt from both.
func TestModuleShape(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".pb.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		checkFile(t, fset, p, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func checkFile(t *testing.T, fset *token.FileSet, path string, f *ast.File) {
	t.Helper()
	if n := fset.Position(f.End()).Line; !strings.HasSuffix(path, "_test.go") && n > maxFileLines {
		t.Errorf("%s is %d lines, over %d: split it by concern", path, n, maxFileLines)
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
			t.Errorf("%s: %s is %d lines, over %d: split it", path, fd.Name.Name, n, maxFuncLines)
		}
	}
}
