package skillserver_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestLegacyEraNoCacheFields: in 2025-11-25, which has no CacheableResult,
// no answer carries ttlMs or cacheScope: not the SEP-2640 methods and not
// resources/read or resources/list. Read from the wire, since go-sdk's
// client types cannot tell an absent ttlMs from 0.
func TestLegacyEraNoCacheFields(t *testing.T) {
	fx := newFixture(t, 1)
	cmd := exec.Command(skillfsBin, "serve", fx.dir)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	reqs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"skill://solo-00/SKILL.md"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"skills/list","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"skills/get","params":{"uri":"skill://solo-00/SKILL.md"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"resources/directory/read","params":{"uri":"skill://solo-00"}}`,
	}
	if _, err := io.WriteString(in, strings.Join(reqs, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	seen := map[int]bool{}
	for len(seen) < 6 && sc.Scan() {
		var msg struct {
			ID     int                        `json:"id"`
			Result map[string]json.RawMessage `json:"result"`
			Error  json.RawMessage            `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.ID == 0 {
			continue
		}
		seen[msg.ID] = true
		if msg.Error != nil {
			t.Errorf("request %d: error %s", msg.ID, msg.Error)
			continue
		}
		for _, k := range []string{"ttlMs", "cacheScope"} {
			if _, ok := msg.Result[k]; ok {
				t.Errorf("2025-11-25 answer to %s carries %s", reqs[msg.ID], k)
			}
		}
	}
	if len(seen) < 6 {
		t.Fatalf("got %d answers of 6: %v", len(seen), sc.Err())
	}
}
