package master

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// maxFuncLines is the longest a function in this package may be:
// longer ones hid ACCEPT's two halves and REGISTER's task adoption.
const maxFuncLines = 80

func TestNoFunctionOverMaxLines(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fs := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fs, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fs.Position(fd.End()).Line - fs.Position(fd.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: split it", path, fd.Name.Name, n, maxFuncLines)
			}
		}
	}
}
