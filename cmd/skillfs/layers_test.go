package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// layers is the house as README's Layout draws it, top to bottom: a
// package imports only packages of lower layers. Packages not named here
// (tests, bench, hostile servers) are not checked.
var layers = [][]string{
	{"cmd/skillfs"},
	{"fs", "internal/demo", "internal/mcpserve"},
	{"internal/vfs", "internal/skillserver"},
	{"resolver", "internal/store", "internal/render", "internal/control"},
	{"internal/config", "verify", "internal/control/wire", "resolver/transport"},
	{"internal/skill"},
}

// TestNoImportRunsBackUp: every import between skillfs's own library
// packages runs down the layers, so the picture in README stays true.
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
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		from, ok := layer[strings.TrimPrefix(f[0], mod)]
		if !ok {
			continue
		}
		for _, imp := range f[1:] {
			p, own := strings.CutPrefix(imp, mod)
			if !own || strings.HasPrefix(p, "internal/") {
				continue
			}
			to, ok := layer[p]
			if !ok {
				t.Errorf("%s imports %s, which has no layer in the picture", f[0], p)
				continue
			}
			if to <= from {
				t.Errorf("%s (layer %d) imports %s (layer %d): an arrow running back up", f[0], from, p, to)
			}
		}
	}
}
