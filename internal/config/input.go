package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Config inputs (the config file and every envFile) are read only from
// regular files, at most a cap's worth of bytes, and within ReadTimeout for
// the whole Load: a FIFO with no writer, a device such as /dev/zero or a
// file on a filesystem that stopped answering must never hold the daemon
// (a SIGHUP reload reads them while the mount is live). Symlinks are
// followed, as dotfile managers use them; what they end at must be a
// regular file.
const (
	// MaxConfigSize is the largest config file read; real ones are a few
	// KiB.
	MaxConfigSize = maxFileSize
	// MaxEnvFileSize is the largest envFile read: its values become a
	// server's environment, which the kernel caps at a few MiB anyway.
	MaxEnvFileSize = 1 << 20
	// ReadTimeout bounds the reading of a config and its envFiles together.
	ReadTimeout = 10 * time.Second
)

// An inputError is why a config input could not be read.
type inputError struct {
	problem string
	fix     string // "" when the caller's fix fits
	err     error
}

func (e *inputError) Error() string { return e.problem }
func (e *inputError) Unwrap() error { return e.err }

// readInput returns the bytes of the regular file name, at most limit of
// them, giving up at deadline. A read still blocked at the deadline is
// abandoned: its goroutine closes the file when the kernel lets it go.
func readInput(name string, limit int64, deadline time.Time) ([]byte, *inputError) {
	type result struct {
		b   []byte
		err *inputError
	}
	ch := make(chan result, 1)
	read := readFile
	go func() {
		b, err := read(name, limit)
		ch <- result{b, err}
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case r := <-ch:
		return r.b, r.err
	case <-t.C:
		return nil, &inputError{
			problem: fmt.Sprintf("reading it did not finish within %v (a file on a filesystem that stopped answering?)", ReadTimeout),
			fix:     "keep it on a local disk",
		}
	}
}

// readFile is readRegular; a test makes it block.
var readFile = readRegular

func readRegular(name string, limit int64) ([]byte, *inputError) {
	// Stat first, so that a device is never opened (opening some has
	// effects of its own); the open's own fstat below closes the race.
	if fi, err := os.Stat(name); err != nil {
		return nil, openError(err)
	} else if e := notRegular(fi, limit); e != nil {
		return nil, e
	}
	// O_NONBLOCK: a FIFO swapped in since the stat does not hold the open
	// until a writer comes.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, openError(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &inputError{problem: fmt.Sprintf("cannot read it: %v", unwrapPath(err)), fix: "check the file and its disk", err: err}
	}
	if e := notRegular(fi, limit); e != nil {
		return nil, e
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &inputError{problem: fmt.Sprintf("cannot read it: %v", unwrapPath(err)), fix: "check the file and its disk", err: err}
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(limit)
	}
	return b, nil
}

func openError(err error) *inputError {
	if errors.Is(err, fs.ErrNotExist) {
		return &inputError{problem: "no such file", err: err}
	}
	return &inputError{problem: fmt.Sprintf("cannot open it: %v", unwrapPath(err)), fix: "make it readable by the user skillfs runs as", err: err}
}

func notRegular(fi fs.FileInfo, limit int64) *inputError {
	m := fi.Mode()
	if m.IsRegular() {
		if fi.Size() > limit {
			return tooLarge(limit)
		}
		return nil
	}
	what := "not a regular file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO), not a regular file"
	case m&fs.ModeCharDevice != 0:
		what = "a character device, not a regular file"
	case m&fs.ModeDevice != 0:
		what = "a device, not a regular file"
	case m&fs.ModeSocket != 0:
		what = "a socket, not a regular file"
	case m.IsDir():
		what = "a directory, not a regular file"
	}
	return &inputError{problem: "is " + what + " (skillfs reads its config inputs only from regular files)"}
}

func tooLarge(limit int64) *inputError {
	return &inputError{problem: fmt.Sprintf("is larger than %s, the most skillfs reads", sizeName(limit))}
}

// sizeName writes a cap in MiB when it is whole MiB.
func sizeName(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
