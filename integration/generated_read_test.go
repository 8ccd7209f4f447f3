package integration

import (
	"bytes"
	"os"
)

// readGenerated reads a generated file (.skillfs/status.json, index.json)
// as a careful reader of a changing file does: until two reads in a row
// agree. skillfs does not see opens (the kernel keeps a file's pages from
// one open to the next), so a read that spans a change can return the
// start of one version and the end of the next (SEMANTICS.md, "Generated
// files"). The signature is os.ReadFile's.
func readGenerated(name string) ([]byte, error) {
	prev, err := os.ReadFile(name)
	for range 50 {
		if err != nil {
			return nil, err
		}
		var b []byte
		b, err = os.ReadFile(name)
		if err == nil && bytes.Equal(b, prev) {
			return b, nil
		}
		prev = b
	}
	return prev, err
}
