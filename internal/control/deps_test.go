package control

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestClientImportsNoMount: the commands that talk to a mount (this
// package, and its wire types) build without the mount's core and without
// MCP. A client that pulled them in would carry go-sdk into every
// `skillfs status`, and an import running back up the house.
func TestClientImportsNoMount(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, pkg := range []string{"github.com/skillfs/skillfs/internal/control", "github.com/skillfs/skillfs/internal/control/wire"} {
		out, err := exec.Command(goBin, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, banned := range []string{"github.com/modelcontextprotocol/go-sdk", "github.com/skillfs/skillfs/internal/vfs", "github.com/skillfs/skillfs/resolver", "github.com/hanwen/go-fuse"} {
				if dep == banned || strings.HasPrefix(dep, banned+"/") {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
