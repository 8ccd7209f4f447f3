package hostile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is the content of Options.StateFile.
type State struct {
	// Phase drives the stale fixture:
	//   "a" (or ""): skills/list and skills/get advertise content A, reads serve A;
	//   "b": reads serve B, skills/list and skills/get still advertise A;
	//   "c": reads serve B, skills/get advertises B, skills/list still A.
	// and the restart fixture:
	//   "dying": as "a", but reading inflight.txt kills the server mid-answer,
	//     after it moved the file to phase "new";
	//   "new": data.txt is content B in the listing, skills/get and reads;
	// and the crash modes (crash.go):
	//   "up": the server no longer crashes at start; it serves as in "a".
	Phase string `json:"phase"`
}

// WriteState replaces the state file at path atomically (a temporary file
// renamed over it), so that a server re-reading it never sees half of it.
func WriteState(path string, st State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("write state %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".state-*")
	if err != nil {
		return fmt.Errorf("write state %s: %w", path, err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write state %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write state %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write state %s: %w", path, err)
	}
	return nil
}

func (s *Server) currentPhase() string { return *s.phase.Load() }

// loadState re-reads the state file. A missing file is phase "a"; an
// unreadable or invalid one keeps the phase last read, with a warning, so
// that a test rewriting the file in place cannot flip a phase by accident.
func (s *Server) loadState() {
	if s.opts.StateFile == "" {
		return
	}
	b, err := os.ReadFile(s.opts.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		a := "a"
		s.phase.Store(&a)
		return
	}
	var st State
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err == nil && !slices.Contains([]string{"", "a", "b", "c", "dying", "new", "up"}, st.Phase) {
		err = fmt.Errorf("unknown phase %q", st.Phase)
	}
	if err != nil {
		s.log.Warn("state file ignored", "op", "state", "path", s.opts.StateFile, "err", err)
		return
	}
	if st.Phase == "" {
		st.Phase = "a"
	}
	s.phase.Store(&st.Phase)
}

// accessMu keeps the lines of concurrent requests of one process whole;
// O_APPEND keeps those of several processes sharing one log whole.
var accessMu sync.Mutex

// logCaps appends "<method> <client extensions JSON>" to Options.CapsLog.
func (s *Server) logCaps(method string, req mcp.Request) {
	if s.opts.CapsLog == "" {
		return
	}
	var ext map[string]any
	// Through JSON: params may be a typed nil.
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var caps struct {
		Extensions map[string]any `json:"extensions"`
	}
	if b, err := json.Marshal(req.GetParams()); err == nil && json.Unmarshal(b, &p) == nil {
		if json.Unmarshal(p.Meta[mcp.MetaKeyClientCapabilities], &caps) == nil {
			ext = caps.Extensions
		}
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ext == nil {
		if ip := ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
			ext = ip.Capabilities.Extensions
		}
	}
	if ip, ok := req.GetParams().(*mcp.InitializeParams); ok && ip != nil && ip.Capabilities != nil {
		ext = ip.Capabilities.Extensions
	}
	b, _ := json.Marshal(ext)
	accessMu.Lock()
	defer accessMu.Unlock()
	f, err := os.OpenFile(s.opts.CapsLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		s.log.Warn("caps log", "op", "log", "path", s.opts.CapsLog, "err", err)
		return
	}
	defer f.Close()
	f.WriteString(method + " " + string(b) + "\n")
}

// logAccess appends "<method> <uri-or-cursor>" to the access log. The file
// is opened per line, so every line is on disk (in the page cache) when
// the request is handled, whatever happens to the process after.
func (s *Server) logAccess(method string, params mcp.Params) {
	if s.opts.AccessLog == "" {
		return
	}
	arg := ""
	switch p := params.(type) {
	case *mcp.ReadResourceParams:
		if p != nil {
			arg = p.URI
		}
	case *getParams:
		if p != nil {
			arg = p.URI
		}
	case *readDirParams:
		if p != nil {
			arg = p.URI
		}
	case *listParams:
		if p != nil {
			arg = p.Cursor
		}
	}
	switch {
	case arg == "":
		arg = "-"
	case strings.ContainsAny(arg, " \t\r\n"):
		arg = strconv.Quote(arg)
	}
	accessMu.Lock()
	defer accessMu.Unlock()
	f, err := os.OpenFile(s.opts.AccessLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		s.log.Warn("access log", "op", "log", "path", s.opts.AccessLog, "err", err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(method + " " + arg + "\n"); err != nil {
		s.log.Warn("access log", "op", "log", "path", s.opts.AccessLog, "err", err)
	}
}
