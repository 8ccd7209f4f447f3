// Package mountd runs a mount: from the config to a live mount and back.
// It opens the logs and the cache, starts each origin's session (the
// resolver) and the core (vfs), answers the control socket, waits for the
// first listings, mounts (fs), announces the mount (the ready line, systemd)
// and serves it until a signal or an unmount, re-reading the config on
// SIGHUP and `skillfs reload`. `skillfs mcp` uses its first steps to run
// the same core without a mount. cmd/skillfs parses the flags into Options.
package mountd

import (
	"io"
	"os"
	"time"
)

// Options are the mount's flags (skillfs mount --help says what each does).
type Options struct {
	ConfigPath     string
	Demo           bool
	CacheDir       string
	Debug          bool
	LogLevel       string
	AllowOther     bool
	StartupTimeout time.Duration
	MemoryCache    string
	CPUProfile     string
	MemProfile     string
	StaleRetry     time.Duration
	RequireAll     bool
	LogFile        string
	PidFile        string
	NoNotify       bool
	Xattrs         string
	// Ready, when set, receives the mount's ready line instead of stdout.
	Ready io.Writer
	// ReadyPipe, in a --daemon child, is Ready's pipe, closed after the line.
	ReadyPipe *os.File
	// LogOut is where logs go; stderr by default.
	LogOut io.Writer
	// Version is skillfs's version, which the sessions give the servers
	// (clientInfo).
	Version string
}
