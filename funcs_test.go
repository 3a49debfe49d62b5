package tunecon_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function outside the tests may run, from
// its func line to its closing brace (CONTRIBUTING.md).
const maxFuncLines = 80

// TestNoLongFunctions: no function of the module, tests and the reference
// apps (modules of their own) aside, is longer than maxFuncLines, unless its
// body is a table: a single statement holding a composite literal.
func TestNoLongFunctions(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "webapp" ||
				name == "solutions" || name == "testdata" || name == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || isTable(fn.Body) {
				continue
			}
			lines := fset.Position(fn.Body.Rbrace).Line - fset.Position(fn.Pos()).Line + 1
			if lines > maxFuncLines {
				t.Errorf("%s:%d: %s runs %d lines (at most %d): split it where its pieces have names of their own",
					path, fset.Position(fn.Pos()).Line, fn.Name.Name, lines, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isTable reports whether a body is one statement around a composite
// literal: a table, however long.
func isTable(body *ast.BlockStmt) bool {
	if len(body.List) != 1 {
		return false
	}
	table := false
	ast.Inspect(body.List[0], func(n ast.Node) bool {
		if _, ok := n.(*ast.CompositeLit); ok {
			table = true
			return false
		}
		return !table
	})
	return table
}
