package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// A Tree is what the server reads: the mount's tree by mount-relative
// path ("" is the root). Errors are fs.ErrNotExist for a path the tree
// does not have, ErrNotDir and ErrIsDir for the wrong kind, anything else
// for a read that failed (its message is shown to the model, bounded).
type Tree interface {
	Stat(ctx context.Context, path string) (Info, error)
	ReadDir(ctx context.Context, path string) ([]Info, error)
	ReadFile(ctx context.Context, path string) ([]byte, error)
}

// Info describes one node of a Tree.
type Info struct {
	Name string
	Dir  bool
	// Size is a file's length when known (-1 when not: a file whose
	// server declared no size and that was not read yet).
	Size int64
}

// The kinds of failure a Tree reports besides fs.ErrNotExist.
var (
	ErrNotDir = errors.New("not a directory")
	ErrIsDir  = errors.New("is a directory")
)

// DirTree is a Tree of plain file reads under a running mount's directory
// (attach mode): the mount's daemon verifies, this process only reads. The
// files are opened through an os.Root, so no path leaves the mount.
type DirTree struct {
	root *os.Root
	// Path is the mount's directory.
	Path string
}

// OpenDirTree opens the mount at dir as a Tree.
func OpenDirTree(dir string) (*DirTree, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open the mount at %s: %w", dir, err)
	}
	return &DirTree{root: r, Path: dir}, nil
}

// Close lets go of the mount's directory.
func (d *DirTree) Close() error { return d.root.Close() }

func rootName(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// Stat describes the node at p.
func (d *DirTree) Stat(_ context.Context, p string) (Info, error) {
	fi, err := d.root.Stat(rootName(p))
	if err != nil {
		return Info{}, dirErr(err)
	}
	return Info{Name: fi.Name(), Dir: fi.IsDir(), Size: fi.Size()}, nil
}

// ReadDir lists the directory at p.
func (d *DirTree) ReadDir(_ context.Context, p string) ([]Info, error) {
	f, err := d.root.Open(rootName(p))
	if err != nil {
		return nil, dirErr(err)
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, dirErr(err)
	}
	out := make([]Info, 0, len(ents))
	for _, e := range ents {
		in := Info{Name: e.Name(), Dir: e.IsDir(), Size: -1}
		if !e.IsDir() {
			if fi, err := e.Info(); err == nil {
				in.Size = fi.Size()
			}
		}
		out = append(out, in)
	}
	return out, nil
}

// ReadFile reads the whole file at p, at most limit+1 bytes (the mount's
// files are at most the per-file cap; more is not a skill's file).
func (d *DirTree) ReadFile(_ context.Context, p string) ([]byte, error) {
	f, err := d.root.Open(rootName(p))
	if err != nil {
		return nil, dirErr(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, dirErr(err)
	}
	if fi.IsDir() {
		return nil, ErrIsDir
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, dirErr(err)
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("over %d bytes", maxFileBytes)
	}
	return b, nil
}

// maxFileBytes bounds a file read from a mount: the SEP's 16 MiB per skill.
const maxFileBytes = 16 << 20

// dirErr maps what the kernel said about a mount's file to a Tree's
// errors. EIO is the mount refusing bytes it could not verify.
func dirErr(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fs.ErrNotExist
	case errors.Is(err, syscall.ENOTDIR):
		return ErrNotDir
	case errors.Is(err, syscall.EISDIR):
		return ErrIsDir
	case errors.Is(err, syscall.EIO):
		return errors.New("the mount refused it (input/output error: it failed verification or could not be fetched; `skillfs status` and the mount's log say why)")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
