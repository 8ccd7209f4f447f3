package fs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without FUSE, Available says what is missing and what fixes it; the
// device and the helper lookup are the test's.
func TestAvailableNamesTheProblemAndTheFix(t *testing.T) {
	notAFile := filepath.Join(t.TempDir(), "fuse")
	if err := os.WriteFile(notAFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	none := func(string) (string, error) { return "", errors.New("not found") }
	only := func(want string) func(string) (string, error) {
		return func(p string) (string, error) {
			if p == want {
				return p, nil
			}
			return "", errors.New("not found")
		}
	}
	for _, tc := range []struct {
		name   string
		dev    string
		root   bool
		look   func(string) (string, error)
		errHas []string // nil: FUSE is available
	}{
		{"no device", filepath.Join(t.TempDir(), "fuse"), true, none,
			[]string{"does not exist", "fuse3", "modprobe fuse", "--device /dev/fuse --cap-add SYS_ADMIN"}},
		{"not a device", notAFile, true, none,
			[]string{"not a character device", "--device /dev/fuse --cap-add SYS_ADMIN", "fuse3"}},
		{"root needs no helper", "/dev/null", true, none, nil},
		{"no helper", "/dev/null", false, none,
			[]string{"fusermount3 (or fusermount)", "apt-get install fuse3"}},
		{"helper on PATH", "/dev/null", false, only("fusermount3"), nil},
		{"older helper in /bin", "/dev/null", false, only("/bin/fusermount"), nil},
	} {
		err := available(tc.dev, tc.root, tc.look)
		if tc.errHas == nil {
			if err != nil {
				t.Errorf("%s: %v, want FUSE available", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrNoFUSE) {
			t.Errorf("%s: %v, want ErrNoFUSE", tc.name, err)
			continue
		}
		for _, s := range tc.errHas {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", tc.name, err, s)
			}
		}
	}
}
