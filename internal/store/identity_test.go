package store

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestIdentityKey(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, _ := openStoreAt(t, root, Options{})
	key, err := s.IdentityKey()
	if err != nil || len(key) != IdentityKeySize {
		t.Fatalf("IdentityKey() = %x, %v", key, err)
	}
	if bytes.Equal(key, make([]byte, IdentityKeySize)) {
		t.Fatal("the key is all zeroes")
	}
	path := filepath.Join(root, identityKeyName)
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi.Mode(), err)
	}
	if again, _ := s.IdentityKey(); !bytes.Equal(again, key) {
		t.Error("a second call returned another key")
	}
	s2, _ := openStoreAt(t, root, Options{})
	if again, _ := s2.IdentityKey(); !bytes.Equal(again, key) {
		t.Error("reopening the store gave another key")
	}
	if ids, _ := s2.Origins(); len(ids) != 0 {
		t.Errorf("the key file shows as an origin: %v", ids)
	}
	other, _ := openStore(t, Options{})
	if k, _ := other.IdentityKey(); bytes.Equal(k, key) {
		t.Error("two stores share a key")
	}
}

func TestIdentityKeyUnusableIsReplaced(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, path string)
	}{
		{"short", func(t *testing.T, p string) { os.WriteFile(p, []byte("abc"), 0o600) }},
		{"readable by others", func(t *testing.T, p string) { os.WriteFile(p, bytes.Repeat([]byte{1}, IdentityKeySize), 0o644) }},
		{"symlink", func(t *testing.T, p string) {
			target := filepath.Join(t.TempDir(), "known")
			os.WriteFile(target, bytes.Repeat([]byte{1}, IdentityKeySize), 0o600)
			os.Symlink(target, p)
		}},
		{"directory", func(t *testing.T, p string) { os.MkdirAll(filepath.Join(p, "x"), 0o700) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "store")
			s, rec := openStoreAt(t, root, Options{})
			path := filepath.Join(root, identityKeyName)
			tc.plant(t, path)
			key, err := s.IdentityKey()
			if err != nil || len(key) != IdentityKeySize || bytes.Equal(key, bytes.Repeat([]byte{1}, IdentityKeySize)) {
				t.Fatalf("IdentityKey() = %x, %v; want a fresh key", key, err)
			}
			fi, err := os.Lstat(path)
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Errorf("key file after replacement: %v, %v", fi.Mode(), err)
			}
			warns := rec.TakeWarnings()
			if len(warns) != 1 || warns[0].Attrs["path"] != path || warns[0].Attrs["err"] == "" {
				t.Errorf("warnings = %v, want one naming %s and the reason", warns, path)
			}
		})
	}
}

func TestIdentityKeyConcurrentCreatorsAgree(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	var keys [8][]byte
	var wg sync.WaitGroup
	for i := range keys {
		s, _ := openStoreAt(t, root, Options{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := s.IdentityKey()
			if err != nil {
				t.Error(err)
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for i := range keys {
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("creator %d got another key", i)
		}
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("root holds %v, want only the key", names)
	}
}
