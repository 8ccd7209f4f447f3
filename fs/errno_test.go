package fs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"syscall"
	"testing"

	"github.com/skillfs/skillfs/internal/testkit"
	"github.com/skillfs/skillfs/internal/vfs"
)

// TestToErrnoMapsEveryVFSError pins the one table of what a user sees for
// each error the core returns, wrapped or not, and that only errors it
// does not know are logged.
func TestToErrnoMapsEveryVFSError(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("lookup local/x: %w", err) }
	for _, tc := range []struct {
		name   string
		err    error
		want   syscall.Errno
		logged bool
	}{
		{"nil", nil, 0, false},
		{"not exist", vfs.ErrNotExist, syscall.ENOENT, false},
		{"not exist, wrapped", wrap(vfs.ErrNotExist), syscall.ENOENT, false},
		{"not a directory", vfs.ErrNotDir, syscall.ENOTDIR, false},
		{"not a directory, wrapped", wrap(vfs.ErrNotDir), syscall.ENOTDIR, false},
		{"is a directory", vfs.ErrIsDir, syscall.EISDIR, false},
		{"is a directory, wrapped", wrap(vfs.ErrIsDir), syscall.EISDIR, false},
		{"canceled", context.Canceled, syscall.EINTR, false},
		{"canceled, wrapped", wrap(context.Canceled), syscall.EINTR, false},
		// A read the kernel gave up on; the reader was interrupted.
		{"deadline", context.DeadlineExceeded, syscall.EINTR, false},
		// A canceled read stays EINTR even inside a ReadError.
		{"canceled read", &vfs.ReadError{Path: "local/x", Reason: vfs.ReasonOffline, Err: context.Canceled}, syscall.EINTR, false},
		// A server's call timing out is a failed read, not an interruption.
		{"timed-out read", &vfs.ReadError{Path: "local/x", Reason: "timeout", Err: context.DeadlineExceeded}, syscall.EIO, false},
		{"read error", &vfs.ReadError{Path: "local/x", Reason: "digest-mismatch", Err: errors.New("sha256 differs")}, syscall.EIO, false},
		{"read error, wrapped", wrap(&vfs.ReadError{Path: "local/x", Reason: vfs.ReasonOffline, Err: errors.New("no session")}), syscall.EIO, false},
		{"unknown", errors.New("something new"), syscall.EIO, true},
		{"unknown errno", syscall.EPERM, syscall.EIO, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := testkit.NewLog(nil)
			if got := toErrno(logs.Logger(), "read", "local/x", tc.err); got != tc.want {
				t.Errorf("toErrno(%v) = %v, want %v", tc.err, got, tc.want)
			}
			got := logs.TakeWarnings()
			if !tc.logged {
				if len(got) != 0 {
					t.Errorf("logged %v for a known error", got)
				}
				return
			}
			if len(got) != 1 || got[0].Level != slog.LevelError {
				t.Fatalf("logged %v, want one error line", got)
			}
			want := map[string]string{"op": "read", "path": "local/x", "err": tc.err.Error()}
			for k, v := range want {
				if got[0].Attrs[k] != v {
					t.Errorf("log key %s = %q, want %q (line %v)", k, got[0].Attrs[k], v, got[0])
				}
			}
		})
	}
}
