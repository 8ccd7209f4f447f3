package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
)

func TestIDKeyed(t *testing.T) {
	o := Origin{Label: "acme", Kind: HTTP, URL: "https://mcp.acme.example/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}}
	k1 := bytes.Repeat([]byte{1}, 32)
	k2 := bytes.Repeat([]byte{2}, 32)
	a, b := o, o
	a.idKey, b.idKey = k1, k2
	if a.ID() == b.ID() {
		t.Errorf("two keys give one ID %s", a.ID())
	}
	if a.ID() != a.ID() {
		t.Error("a keyed ID is not deterministic")
	}
	// An unkeyed origin gets the process key: stable within the process,
	// equal to neither store's.
	if o.ID() != o.ID() || o.ID() == a.ID() || o.ID() == b.ID() {
		t.Errorf("unkeyed ID %s (keyed %s, %s)", o.ID(), a.ID(), b.ID())
	}
	// Nothing of the inputs shows, not even an unkeyed hash of the secret.
	for _, oo := range []Origin{o, a, b} {
		id := oo.ID()
		if strings.Contains(id, "s3cret") || strings.Contains(id, "Bearer") {
			t.Errorf("ID %q holds the header", id)
		}
		for _, s := range []string{"s3cret", "Bearer s3cret", string(oo.identityInput())} {
			sum := sha256.Sum256([]byte(s))
			if strings.Contains(id, hex.EncodeToString(sum[:])[:16]) {
				t.Errorf("ID %q is an unkeyed sha256 of %q", id, s)
			}
		}
	}
}

func TestSetIdentityKey(t *testing.T) {
	cfg := &Config{Origins: []Origin{
		{Label: "a", Kind: Stdio, Command: "x", Env: map[string]string{"T": "1"}},
		{Label: "b", Kind: Stdio, Command: "x", Env: map[string]string{"T": "1"}},
		{Label: "c", Kind: SSE, URL: "http://h/sse"},
	}}
	key := bytes.Repeat([]byte{7}, 32)
	cfg.SetIdentityKey(key)
	key[0] = 0 // SetIdentityKey keeps its own copy
	for _, o := range cfg.Origins {
		want := o
		want.idKey = bytes.Repeat([]byte{7}, 32)
		if o.ID() != want.ID() || !strings.HasPrefix(o.ID(), o.Label+"-") {
			t.Errorf("%s: ID %s, want %s", o.Label, o.ID(), want.ID())
		}
	}
	if cfg.Origins[0].ID()[2:] != cfg.Origins[1].ID()[2:] {
		t.Errorf("same server under two labels: fingerprints %s and %s differ", cfg.Origins[0].ID(), cfg.Origins[1].ID())
	}
	// The label is always in clear, for `skillfs cache rm LABEL`.
	if got, _ := cfg.Origin("c"); !strings.HasPrefix(got.ID(), "c-") {
		t.Errorf("ID %s", got.ID())
	}
}

func BenchmarkIDUncached(b *testing.B) {
	o := Origin{Label: "acme", Kind: Stdio, Command: "npx", Env: map[string]string{"T": "x"}}
	for i := 0; i < b.N; i++ {
		o.Cwd = "/w/" + strconv.Itoa(i)
		o.ID()
	}
}
