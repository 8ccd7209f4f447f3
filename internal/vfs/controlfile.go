package vfs

import (
	"os"

	"github.com/skillfs/skillfs/internal/control/wire"
)

// ControlFileName is the generated file under .skillfs/ that says where
// the mount's control endpoint is, so that `skillfs status --mount DIR`
// finds it whatever the caller's environment.
const ControlFileName = wire.ControlFileName

// SetControl records the control socket the Consent is served on, for
// .skillfs/control.json ("" when it has none).
func (c *Consent) SetControl(socket string) {
	c.gen.control.Store(&socket)
}

func (m *generated) controlEndpoint() ControlEndpoint {
	ep := ControlEndpoint{Mountpoint: m.f.opts.MountPoint, PID: os.Getpid()}
	if s := m.control.Load(); s != nil {
		ep.Socket = *s
	}
	return ep
}
