package store

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestEarlierApprovals: the approvals.json of the label's other
// identities are read, those of other labels (one that merely starts with
// this label too) and a symlink are not, and nothing is changed.
func TestEarlierApprovals(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, _ := openStoreAt(t, root, Options{})
	for id, data := range map[string]string{"acme-aaaa": `{"old":1}`, "acme-bbbb": `{"cur":1}`, "acme-x-cccc": `{"other":1}`, "acmes-dddd": `{"other":2}`} {
		if err := save(mustOrigin(t, s, id), ApprovalsSidecar, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	planted := filepath.Join(root, "acme-eeee")
	os.Mkdir(planted, 0o700)
	if err := os.Symlink(filepath.Join(root, "acmes-dddd", "approvals.json"), filepath.Join(planted, "approvals.json")); err != nil {
		t.Fatal(err)
	}
	got, err := mustOrigin(t, s, "acme-bbbb").EarlierApprovals("acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got["acme-aaaa"]) != `{"old":1}` {
		t.Errorf("EarlierApprovals = %q, want only acme-aaaa's", got)
	}
	if _, err := os.Lstat(filepath.Join(planted, "approvals.json")); err != nil {
		t.Errorf("the planted symlink was touched: %v", err)
	}
}

// TestEarlierApprovalsAtItsCap: of more other identities than
// MaxEarlierIdentities, that many are read.
func TestEarlierApprovalsAtItsCap(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, _ := openStoreAt(t, root, Options{})
	for i := range MaxEarlierIdentities + 1 {
		if err := save(mustOrigin(t, s, fmt.Sprintf("acme-%04x", i)), ApprovalsSidecar, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := mustOrigin(t, s, "acme-ffff").EarlierApprovals("acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxEarlierIdentities {
		t.Errorf("%d identities read, want %d", len(got), MaxEarlierIdentities)
	}
}
