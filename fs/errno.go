package fs

import (
	"context"
	"errors"
	"log/slog"
	"syscall"

	"github.com/skillfs/skillfs/internal/vfs"
)

// toErrno maps a vfs error to the errno a user sees. It is the only place
// that decides; anything it does not know is logged and answered with EIO.
func toErrno(log *slog.Logger, op, path string, err error) syscall.Errno {
	var re *vfs.ReadError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, vfs.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, vfs.ErrNotDir):
		return syscall.ENOTDIR
	case errors.Is(err, vfs.ErrIsDir):
		return syscall.EISDIR
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &re):
		return syscall.EINTR
	case errors.As(err, &re):
		// Already logged, with its reason, by vfs.
		return syscall.EIO
	}
	log.Error("unexpected error", "op", op, "path", path, "err", err)
	return syscall.EIO
}
