package resolver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
)

// A board is where an origin stands, as Status shows it, and the live
// session it stands on. One mutex keeps the two in step: a session is
// adopted or lost together with the state that says so, and a call that
// finds no session finds why in the same look (session). What the stdio
// server wrote (output), the budgets and the read count keep their own
// locks.
type board struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every state change
	status  Status
	live    *link // nil between sessions
}

// A link is a live session and what its server's initialize answer
// declared.
type link struct {
	cs *mcp.ClientSession
	// declared: the server declared the skills extension. The Final text
	// has clients call skills/list and skills/get only after seeing that
	// declaration.
	declared bool
	// directoryRead: the declaration says directoryRead; for the log,
	// DirectoryRead reads the status.
	directoryRead bool
	// named are the skill URIs the instructions name, at most
	// MaxNamedSkills; namedCut: they name more (instructions.go).
	named    []string
	namedCut bool
}

func newBoard(status Status) board {
	return board{changed: make(chan struct{}), status: status}
}

// snapshot returns a copy of the status, its last error's URLs masked.
func (b *board) snapshot() Status {
	b.mu.Lock()
	s := b.status
	b.mu.Unlock()
	s.LastError = config.MaskURLs(s.LastError)
	return s
}

// directoryRead is Status().DirectoryRead, copying nothing.
func (b *board) directoryRead() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status.DirectoryRead
}

// setError keeps err as the last error; the state stays.
func (b *board) setError(op string, err error) {
	b.mu.Lock()
	b.status.LastError = fmt.Sprintf("%s: %v", op, err)
	b.status.LastErrorAt = time.Now()
	b.mu.Unlock()
}

// set sets the state and, when err is not nil, the last error together.
func (b *board) set(s State, op string, err error) {
	b.mu.Lock()
	if err != nil {
		b.status.LastError = fmt.Sprintf("%s: %v", op, err)
		b.status.LastErrorAt = time.Now()
	}
	b.status.State = s
	b.signal()
	b.mu.Unlock()
}

// signal wakes callers waiting in session; b.mu is held.
func (b *board) signal() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// session returns the live session. While a connection attempt is under
// way it waits for it (a read right after start should not fail because the
// server has not answered yet); otherwise no session is ErrOffline at once.
func (b *board) session(ctx context.Context) (*link, error) {
	for {
		b.mu.Lock()
		l, state, changed := b.live, b.status.State, b.changed
		b.mu.Unlock()
		if l != nil {
			return l, nil
		}
		if state != StateConnecting {
			return nil, ErrOffline
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: still connecting", ErrOffline)
		}
	}
}

// lost ends a session a call found unreachable, so that reads fail fast
// from now on and the supervisor reconnects with backoff. It returns err.
func (b *board) lost(l *link, err error) error {
	if !errors.Is(err, ErrOffline) {
		return err
	}
	b.mu.Lock()
	if b.live == l {
		b.live = nil
		b.status.State = StateOffline
		b.status.LastError = err.Error()
		b.status.LastErrorAt = time.Now()
		b.signal()
	}
	b.mu.Unlock()
	go l.cs.Close()
	return err
}

// adopt makes cs the origin's live session: its initialize answer goes
// into the status (protocol, server name, instructions, whether directory
// reads are declared) and into the link it returns (whether the skills
// extension is declared, the skills the instructions name).
func (b *board) adopt(cs *mcp.ClientSession) *link {
	ir := cs.InitializeResult()
	l := &link{cs: cs}
	l.directoryRead, l.declared = skillsExtension(ir)
	l.named, l.namedCut = NamedSkills(ir.Instructions, MaxNamedSkills)
	b.mu.Lock()
	b.live = l
	b.status.FailedStarts = 0
	b.status.Protocol = ir.ProtocolVersion
	if ir.ServerInfo != nil {
		b.status.ServerName = ir.ServerInfo.Name
	}
	b.status.DirectoryRead = l.directoryRead
	b.status.Instructions = keepInstructions(ir.Instructions)
	b.status.InstructionsBytes = len(ir.Instructions)
	if l.declared {
		b.status.State = StateConnected
	} else {
		b.status.State = StateNoSkills
	}
	b.signal()
	b.mu.Unlock()
	return l
}

// end forgets the live session, which has ended; the state is the
// supervisor's to set.
func (b *board) end() {
	b.mu.Lock()
	b.live = nil
	b.mu.Unlock()
}

// listed takes the counts of a published catalog.
func (b *board) listed(c *Catalog) {
	b.mu.Lock()
	b.status.Skills = len(c.Skills)
	b.status.Rejected = len(c.Rejected)
	b.status.Truncated = c.Truncated
	b.status.ListedAt = c.At
	b.mu.Unlock()
}

// countStart counts a session that failed to start, when failed, and
// returns how many failed in a row.
func (b *board) countStart(failed bool) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if failed {
		b.status.FailedStarts++
	}
	return b.status.FailedStarts
}

// resetStarts forgets the failed starts, for a server tried again after
// the supervisor gave up on it.
func (b *board) resetStarts() {
	b.mu.Lock()
	b.status.FailedStarts = 0
	b.mu.Unlock()
}

// skillsExtension reads the extension declaration from the server's
// capabilities: whether it is declared, and whether directoryRead is true.
func skillsExtension(ir *mcp.InitializeResult) (directoryRead, declared bool) {
	if ir == nil || ir.Capabilities == nil || ir.Capabilities.Extensions == nil {
		return false, false
	}
	v, ok := ir.Capabilities.Extensions[skill.ExtensionID]
	if !ok {
		return false, false
	}
	return skill.SettingsOf(v).DirectoryRead, true
}
