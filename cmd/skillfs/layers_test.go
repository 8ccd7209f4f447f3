package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// layers is the house as README's Layout draws it, top to bottom: a
// package imports only packages of lower layers. Every package of the
// module is in it or in testOnly.
var layers = [][]string{
	{"cmd/skillfs"},
	{"internal/mountd"},
	{"fs", "internal/demo", "internal/mcpserve", "internal/integrate", "internal/retain"},
	{"internal/vfs", "internal/skillserver", "internal/report"},
	{"resolver", "internal/store", "internal/render", "internal/control"},
	{"internal/config", "verify", "internal/control/wire", "resolver/transport", "internal/textdiff", "internal/statefile", "internal/manpage", "internal/exitcode", "internal/term"},
	{"internal/skill"},
}

// testOnly are the packages that exist for the tests and the benchmark:
// they may import any layer, and no layer may import them.
var testOnly = []string{"bench", "bench/loopback", "integration", "integration/hostile",
	"integration/conformhost", "integration/conformhost/report", "internal/testkit"}

// TestNoImportRunsBackUp: every import between skillfs's own packages,
// internal ones included, runs down the layers, so the picture in README
// stays true; every package has a place in it; nothing the product builds
// imports a test package.
func TestNoImportRunsBackUp(t *testing.T) {
	const mod = "github.com/skillfs/skillfs/"
	layer := map[string]int{}
	for i, ps := range layers {
		for _, p := range ps {
			layer[p] = i
		}
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goBin, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], mod)
		if slices.Contains(testOnly, pkg) {
			continue
		}
		from, ok := layer[pkg]
		if !ok {
			t.Errorf("%s has no layer in the picture (nor is it a test package): give it one here and in README's Layout", pkg)
			continue
		}
		seen++
		for _, imp := range f[1:] {
			p, own := strings.CutPrefix(imp, mod)
			if !own {
				continue
			}
			if slices.Contains(testOnly, p) {
				t.Errorf("%s imports the test package %s", pkg, p)
				continue
			}
			to, ok := layer[p]
			if !ok {
				t.Errorf("%s imports %s, which has no layer in the picture", pkg, p)
				continue
			}
			if to <= from {
				t.Errorf("%s (layer %d) imports %s (layer %d): an arrow running back up", pkg, from, p, to)
			}
		}
	}
	if seen != len(layer) {
		t.Errorf("go list found %d of the picture's %d packages: a package was renamed or removed; redraw the picture", seen, len(layer))
	}
}

// MaxFuncLines bounds a function of the product (the packages of layers),
// from its func line to its closing brace: a longer one does more than one
// thing and should be split along its steps.
const MaxFuncLines = 80

// TestNoLongFunctions: no function or method of a product package, tests
// aside, is longer than MaxFuncLines.
func TestNoLongFunctions(t *testing.T) {
	eachProductFile(t, func(p, file string, fset *token.FileSet, f *ast.File) {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > MaxFuncLines {
				t.Errorf("%s/%s: %s is %d lines, more than %d: split it along its steps", p, filepath.Base(file), fd.Name.Name, n, MaxFuncLines)
			}
		}
	})
}

// MaxMethods bounds the methods declared on one type of the product (the
// packages of layers), tests aside: a type with more does more than one
// thing and should give a concern to a type of its own.
const MaxMethods = 15

// TestNoBigTypes: no type of a product package declares more than
// MaxMethods methods, pointer and value receivers counted together.
func TestNoBigTypes(t *testing.T) {
	methods := map[string]int{} // "package.Type"
	eachProductFile(t, func(p, _ string, _ *token.FileSet, f *ast.File) {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil {
				methods[p+"."+receiverType(fd.Recv.List[0].Type)]++
			}
		}
	})
	for _, typ := range slices.Sorted(maps.Keys(methods)) {
		if n := methods[typ]; n > MaxMethods {
			t.Errorf("%s has %d methods, more than %d: give one of its concerns a type of its own", typ, n, MaxMethods)
		}
	}
}

// receiverType names a receiver's type: T for T, *T, T[P] and *T[P].
func receiverType(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}

// eachProductFile parses every non-test Go file of the packages of layers
// and hands it to fn with its package's path.
func eachProductFile(t *testing.T, fn func(p, file string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	for _, ps := range layers {
		for _, p := range ps {
			files, err := filepath.Glob(filepath.Join(root, p, "*.go"))
			if err != nil || len(files) == 0 {
				t.Fatalf("%s: no Go files (%v)", p, err)
			}
			for _, file := range files {
				if strings.HasSuffix(file, "_test.go") {
					continue
				}
				f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
				if err != nil {
					t.Fatal(err)
				}
				fn(p, file, fset, f)
			}
		}
	}
}
