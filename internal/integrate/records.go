package integrate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// recordVersion is the version of the records this code writes. A record
// without one was written before skillfs knew whether the bytes it kept
// still are the file without skillfs: it is never restored from.
const recordVersion = 2

// A record is what skillfs keeps of one host file it wrote.
type record struct {
	Version int    `json:"version"`
	Target  string `json:"target"`
	Existed bool   `json:"existed"`
	Before  []byte `json:"before,omitempty"` // the bytes before skillfs first wrote the file
	Mode    uint32 `json:"mode,omitempty"`
	After   string `json:"after"` // sha256, hex, of what skillfs last wrote
	// Restorable: nobody but skillfs wrote the file between skillfs's
	// writes, so Before is the file without skillfs's part.
	Restorable bool `json:"restorable"`
	// Added: the entries of JSON lists (by key path, "a.b") that skillfs
	// put there, and may take out again.
	Added map[string][]string `json:"added,omitempty"`
}

// maxRecord bounds a record's size: it holds a copy of one host file.
const maxRecord = 16 << 20

// Records is the directory of the records, the user's alone: it and its
// parent are created 0700 and must be directories (not links) owned by
// the user with no write access for group or others; a record is a
// regular file of the user's with one link, opened without following a
// link. Whatever another user could have put there is refused, never
// read as skillfs's.
type Records struct {
	dir string
}

// OpenRecords checks (creating when absent) the records directory dir.
func OpenRecords(dir string) (*Records, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("integrate: the records directory: %w", err)
	}
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := checkPrivateDir(d); err != nil {
			return nil, err
		}
	}
	return &Records{dir: dir}, nil
}

func checkPrivateDir(dir string) error {
	const fix = "set XDG_STATE_HOME to a directory of your own"
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("integrate: the records directory %s: %w", dir, err)
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fmt.Errorf("integrate: the records directory %s is a symbolic link; skillfs keeps its records only in a real directory of yours: remove the link, or %s", dir, fix)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("integrate: %s is not a directory: remove it, or %s", dir, fix)
	case int(st.Uid) != os.Getuid():
		return fmt.Errorf("integrate: the records directory %s is owned by uid %d, not by you (uid %d): remove it, or %s", dir, st.Uid, os.Getuid(), fix)
	case st.Mode&0o022 != 0:
		return fmt.Errorf("integrate: the records directory %s is writable by group or others (mode %04o): chmod 700 it, or %s", dir, st.Mode&0o7777, fix)
	}
	return nil
}

// name is the file name of target's record.
func (r *Records) name(target string) string {
	sum := sha256.Sum256([]byte(target))
	return hex.EncodeToString(sum[:8]) + ".json"
}

// Path is where target's record is kept.
func (r *Records) Path(target string) string { return filepath.Join(r.dir, r.name(target)) }

func (r *Records) openDir() (int, error) {
	fd, err := unix.Open(r.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("integrate: the records directory %s: %w", r.dir, err)
	}
	return fd, nil
}

// load reads target's record, nil when there is none.
func (r *Records) load(target string) (*record, error) {
	dfd, err := r.openDir()
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	p := r.Path(target)
	fd, err := unix.Openat(dfd, r.name(target), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("integrate: the record %s is a symbolic link, not skillfs's: remove it to go on", p)
	case err != nil:
		return nil, fmt.Errorf("integrate: the record %s: %w", p, err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("integrate: the record %s: %w", p, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, fmt.Errorf("integrate: the record %s is not a regular file, not skillfs's: remove it to go on", p)
	case int(st.Uid) != os.Getuid():
		return nil, fmt.Errorf("integrate: the record %s is owned by uid %d, not by you: not skillfs's; remove it to go on", p, st.Uid)
	case st.Nlink > 1:
		return nil, fmt.Errorf("integrate: the record %s has %d hard links, not skillfs's: remove it to go on", p, st.Nlink)
	case st.Mode&0o077 != 0:
		return nil, fmt.Errorf("integrate: the record %s can be read or written by others (mode %04o), not skillfs's: remove it to go on", p, st.Mode&0o7777)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return nil, fmt.Errorf("integrate: the record %s: %w", p, err)
	}
	var rec record
	if len(b) > maxRecord {
		return nil, fmt.Errorf("integrate: the record %s is over %d bytes, not skillfs's: remove it to go on", p, maxRecord)
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.Target != target {
		return nil, fmt.Errorf("integrate: the record %s is damaged (%v): remove it to go on", p, err)
	}
	if rec.Version < recordVersion {
		rec.Restorable = false
	}
	if rec.Added == nil {
		rec.Added = map[string][]string{}
	}
	return &rec, nil
}

// save writes rec durably: a new file, synced, renamed into place, and
// the directory synced.
func (r *Records) save(rec *record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	dfd, err := r.openDir()
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	name := r.name(rec.Target)
	tmp := fmt.Sprintf(".%s.%d.tmp", name, os.Getpid())
	unix.Unlinkat(dfd, tmp, 0)
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("integrate: keep the record to undo with: %w", err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, name)
	}
	if err == nil {
		err = unix.Fsync(dfd)
	}
	if err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("integrate: keep the record to undo with, in %s: %w", r.dir, err)
	}
	return nil
}

// drop removes target's record.
func (r *Records) drop(target string) error {
	dfd, err := r.openDir()
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Unlinkat(dfd, r.name(target), 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("integrate: remove the record %s: %w", r.Path(target), err)
	}
	return unix.Fsync(dfd)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
