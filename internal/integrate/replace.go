package integrate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// errChangedOnce: the file changed between Apply's read and its replace.
var errChangedOnce = errors.New("changed since it was read")

// beforeReplace, when set (by tests), runs after the new content is
// ready and before the file is checked and replaced.
var beforeReplace func(path string)

// replace puts next in place of the file at path (through a symlink, the
// file it names), or removes it when del, but only while it still holds
// was (or, when !existed, still does not exist). The new file is synced
// before the rename and the directory after, so that a crash leaves the
// old bytes or the new, never a file cut short. A change in the moment
// between the check and the rename is not seen: nothing short of a lock
// every writer takes could see it, and hosts take none.
func replace(path string, was []byte, existed bool, next []byte, del bool, mode fs.FileMode) error {
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	dir := filepath.Dir(real)
	var tmp string
	if !del {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("integrate: %w", err)
		}
		f, err := os.CreateTemp(dir, "."+filepath.Base(real)+".skillfs-*")
		if err != nil {
			return fmt.Errorf("integrate: %w", err)
		}
		tmp = f.Name()
		defer os.Remove(tmp)
		_, err = f.Write(next)
		if err == nil {
			err = f.Chmod(mode)
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("integrate: write %s: %w", real, err)
		}
	}
	if beforeReplace != nil {
		beforeReplace(path)
	}
	now, err := os.ReadFile(real)
	switch {
	case existed && err != nil, !existed && err == nil, existed && !bytes.Equal(now, was):
		return errChangedOnce
	case !existed && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("integrate: %w", err)
	}
	if del {
		err = os.Remove(real)
	} else {
		err = os.Rename(tmp, real)
	}
	if err != nil {
		return fmt.Errorf("integrate: %w", err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("integrate: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("integrate: sync %s: %w", dir, err)
	}
	return nil
}
