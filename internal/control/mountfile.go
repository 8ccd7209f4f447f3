package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/skillfs/skillfs/internal/control/wire"
)

// MountFileTimeout bounds the read of <mount>/.skillfs/control.json: a hung
// mount must not hang the command.
const MountFileTimeout = 10 * time.Second

// errNoControlFile is a --mount DIR without a readable control.json: not a
// skillfs mount (or one from before control.json).
var errNoControlFile = errors.New("no control file")

// fromMount asks the mount at mountDir (want is its canonical path) where
// its endpoint is, and checks that endpoint as a registration is checked:
// a socket of the user's in a directory of the user's alone, answered by a
// process of the user's that is the pid the mount named, and that says it
// serves want. The file is read from another goroutine, given up after
// MountFileTimeout (the goroutine stays blocked until the process exits).
func fromMount(mountDir, want string) (registration, error) {
	path := filepath.Join(mountDir, wire.MetaDir, wire.ControlFileName)
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxRegistration+1))
		ch <- result{b, err}
	}()
	var res result
	select {
	case res = <-ch:
	case <-time.After(MountFileTimeout):
		return registration{}, fmt.Errorf("the mount at %s did not answer within %s (reading %s); if it is hung, `skillfs unmount --lazy %s` detaches it", mountDir, MountFileTimeout, path, mountDir)
	}
	if res.err != nil {
		return registration{}, errNoControlFile
	}
	var ep Endpoint
	if len(res.b) > maxRegistration || json.Unmarshal(res.b, &ep) != nil || ep.Mountpoint == "" {
		return registration{}, fmt.Errorf("%s is not a skillfs control file", path)
	}
	if ep.Socket == "" {
		return registration{}, fmt.Errorf("the mount at %s has no control endpoint (its log says why)", mountDir)
	}
	if !filepath.IsAbs(ep.Socket) {
		return registration{}, fmt.Errorf("%s names the socket %q, not an absolute path", path, ep.Socket)
	}
	if canonical(ep.Mountpoint) != want {
		return registration{}, fmt.Errorf("%s says it is the mount at %s, not %s", path, ep.Mountpoint, mountDir)
	}
	r := registration{Mountpoint: ep.Mountpoint, PID: ep.PID, Socket: ep.Socket}
	dir, name := filepath.Split(ep.Socket)
	d, err := openOurDir(filepath.Clean(dir))
	switch {
	case err != nil:
		return r, fmt.Errorf("the mount at %s has its control socket in %s, which skillfs does not trust: %v", mountDir, filepath.Clean(dir), err)
	case d == nil:
		return r, fmt.Errorf("the mount at %s names the control socket %s, which does not exist", mountDir, ep.Socket)
	}
	err = checkSocket(d, name)
	d.Close()
	if err != nil {
		return r, fmt.Errorf("the mount at %s names the control socket %s, which skillfs does not trust: %v", mountDir, ep.Socket, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), MountFileTimeout)
	defer cancel()
	st, err := newClient(r, nil).Status(ctx)
	if err != nil {
		return r, fmt.Errorf("the control socket of the mount at %s: %w", mountDir, err)
	}
	if canonical(st.Mount.Path) != want {
		return r, fmt.Errorf("the control socket %s named by the mount at %s answers for %s", ep.Socket, mountDir, st.Mount.Path)
	}
	r.Started = st.Mount.Started
	return r, nil
}
