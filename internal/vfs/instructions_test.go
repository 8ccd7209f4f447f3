package vfs

import (
	"testing"

	"github.com/skillfs/skillfs/internal/render"
	"github.com/skillfs/skillfs/resolver"
)

// What a session keeps of a server's instructions is what servers/LABEL.md
// may quote: render does not import the resolver, so the two caps are
// checked to agree here.
func TestInstructionsCapsAgree(t *testing.T) {
	if render.MaxInstructions != resolver.MaxInstructions {
		t.Errorf("render.MaxInstructions = %d, resolver.MaxInstructions = %d", render.MaxInstructions, resolver.MaxInstructions)
	}
}
