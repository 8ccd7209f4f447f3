package vfs

import "os"

// ControlFileName is the generated file under .skillfs/ that says where
// the mount's control endpoint is, so that `skillfs status --mount DIR`
// finds it whatever the caller's environment.
const ControlFileName = "control.json"

// ControlEndpoint is the content of .skillfs/control.json.
type ControlEndpoint struct {
	// Mountpoint is the mount's path as the daemon knows it.
	Mountpoint string `json:"mountpoint"`
	// PID is the process serving the mount, which also answers on Socket.
	PID int `json:"pid"`
	// Socket is the control socket's path; empty while the mount has
	// none (not yet started, or it could not be; the log says why).
	Socket string `json:"socket,omitempty"`
}

// SetControl records the control socket the mount answers on, for
// .skillfs/control.json ("" when it has none).
func (f *Core) SetControl(socket string) {
	f.generated.control.Store(&socket)
}

func (m *generated) controlEndpoint() ControlEndpoint {
	ep := ControlEndpoint{Mountpoint: m.f.opts.MountPoint, PID: os.Getpid()}
	if s := m.control.Load(); s != nil {
		ep.Socket = *s
	}
	return ep
}
