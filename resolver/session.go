package resolver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/verify"
)

// Options configure a Session.
type Options struct {
	Origin config.Origin
	// Dial, when set, replaces the transport the config names: the origin
	// speaks newline-delimited JSON-RPC over the stream it returns. The
	// embedded demo server uses it.
	Dial func(ctx context.Context) (io.ReadWriteCloser, error)
	// OnCatalog receives every enumeration result. It is called from the
	// origin's supervisor goroutine, one call at a time.
	OnCatalog func(*Catalog)
	// Logger receives the origin's log lines; nil discards them.
	Logger *slog.Logger
	// Version is sent as the client version.
	Version string
	// RelistGap is the least time between the starts of two enumerations
	// that a Refresh or a list_changed notification asked for; 0 means
	// DefaultRelistGap. Tests that change a server's tree lower it.
	RelistGap time.Duration
}

// State is where an origin's session stands.
type State string

const (
	StateConnecting State = "connecting"
	StateConnected  State = "connected"
	// StateNoSkills: connected, but the server does not declare the
	// skills extension. Not an error.
	StateNoSkills State = "no-skills"
	StateOffline  State = "offline"
	// StateFailed: the last attempt could not start a session at all (the
	// command did not run, the URL did not answer, the handshake failed);
	// retried with backoff like an offline server.
	StateFailed State = "failed-to-start"
	// StateGaveUp: the session failed to start Limits.StartAttempts times
	// in a row; it is not retried until Refresh (SIGHUP) or until the
	// mount is given a changed entry for the server.
	StateGaveUp  State = "gave-up"
	StateStopped State = "stopped"
)

// Status is a snapshot of an origin for .skillfs/status.json.
type Status struct {
	State         State
	Protocol      string
	ServerName    string // self-reported serverInfo.name: informational only
	DirectoryRead bool
	Skills        int
	Rejected      int
	Truncated     string
	ListedAt      time.Time
	BytesFetched  int64         // in the current budget window
	Budget        int64         // bytes allowed per BudgetWindow
	BudgetWindow  time.Duration // the budget's sliding window
	// KeepFetched is what FetchToKeep charged in the current window, of
	// KeepBudget (the same window): bytes the mount fetched to keep
	// approved files, not counted in BytesFetched.
	KeepFetched int64
	KeepBudget  int64
	Reads       int64 // resources/read requests sent
	LastError   string
	LastErrorAt time.Time
	// FailedStarts counts the attempts in a row that could not start a
	// session; a session that starts resets it. A server between two
	// attempts shows StateConnecting with FailedStarts > 0.
	FailedStarts int
	// Instructions are the first MaxInstructions bytes of the instructions
	// of the last session's initialize result: the server's words, for the
	// model, not the user's. InstructionsBytes is their whole length.
	Instructions      string
	InstructionsBytes int
	// Exit is how the stdio server last ended on its own, with the end of
	// its stderr; nil if it has not. Kept after the server comes back. For
	// skillfs status only, never for a generated file (exit.go).
	Exit *Exit
	// Stderr counts the lines the stdio server wrote to stderr and the
	// warnings among them (stderr.go); for skillfs status only.
	Stderr Stderr
}

// A Session is one configured server (config.Origin) and its supervised
// MCP session.
type Session struct {
	opts    Options
	cfg     config.Origin
	limits  config.Limits
	log     *slog.Logger
	entries verify.EntryOptions
	relist  relister
	dial    dialer
	board   board
	out     output
	// budget counts bytes reserved or fetched against Limits.Budget over
	// the sliding Limits.BudgetWindow.
	budget *budget
	// keepBudget counts what FetchToKeep fetched, against KeepBudget of
	// Limits.Budget over the same window: kept files never take what
	// reads need.
	keepBudget *budget
	reads      atomic.Int64 // resources/read requests sent (Status.Reads)
	// reading holds one read of a URI at a time (fetch.go).
	reading uriLocks
	// now and sleep are time.Now and a context-aware sleep; tests replace
	// them.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration)
}

// New returns a Session; Run starts it.
func New(opts Options) *Session {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := opts.Origin
	o := &Session{
		opts:   opts,
		cfg:    cfg,
		limits: cfg.Limits,
		log:    redactedLog(log).With("origin", cfg.Label),
		entries: verify.EntryOptions{
			Strict:      cfg.Strict,
			MaxFileSize: cfg.Limits.MaxFileSize,
		},
		relist: newRelister(cmp.Or(opts.RelistGap, DefaultRelistGap)),
		board: newBoard(Status{State: StateConnecting, Budget: cfg.Limits.Budget, BudgetWindow: cfg.Limits.BudgetWindow,
			KeepBudget: KeepBudget(cfg.Limits.Budget)}),
		budget:     newBudget(cfg.Limits.Budget, cfg.Limits.BudgetWindow),
		keepBudget: newBudget(KeepBudget(cfg.Limits.Budget), cfg.Limits.BudgetWindow),
		now:        time.Now,
		sleep:      sleepCtx,
	}
	o.dial = dialer{opts: opts, log: o.log, relist: &o.relist, out: &o.out}
	return o
}

// Status returns a snapshot of the origin's state.
func (o *Session) Status() Status {
	s := o.board.snapshot()
	o.out.copyTo(&s)
	s.Reads = o.reads.Load()
	s.BytesFetched = o.budget.used(o.now())
	s.KeepFetched = o.keepBudget.used(o.now())
	return s
}

// DirectoryRead reports whether the live session's server declared
// directoryRead. It is asked on every directory listing, so it copies
// nothing.
func (o *Session) DirectoryRead() bool { return o.board.directoryRead() }

// Refresh asks the supervisor to enumerate again soon. It never blocks.
func (o *Session) Refresh() { o.relist.ask() }

// errStart marks a session that could not be started at all.
var errStart = errors.New("could not start a session")

// Reconnect backoff: the wait after a session ends doubles from
// minBackoff to maxBackoff while sessions keep failing, and starts again
// at minBackoff after a healthy one (connected and listed successfully,
// or connected to a server without the extension).
const (
	minBackoff = 500 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// Run supervises the origin until ctx ends: it connects, enumerates,
// re-enumerates when told to, and reconnects with backoff when the session
// ends. It returns nil when ctx is done.
func (o *Session) Run(ctx context.Context) error {
	backoff := minBackoff
	for ctx.Err() == nil {
		healthy, err := o.runSession(ctx)
		if ctx.Err() != nil {
			break
		}
		state := StateOffline
		failed := errors.Is(err, errStart)
		if failed {
			state = StateFailed
		}
		failedStarts := o.board.countStart(failed)
		if n := o.limits.StartAttempts; n > 0 && failedStarts >= n {
			o.board.set(StateGaveUp, "session", fmt.Errorf("%w (failed to start %d times in a row; not retrying until SIGHUP or a change to this server's entry)", err, failedStarts))
			o.log.Error("server failed to start; not retrying until SIGHUP or a change to its entry", "op", "connect", "attempts", failedStarts, "err", err)
			select {
			case <-ctx.Done():
			case <-o.relist.asked:
				o.log.Info("trying the server again", "op", "connect")
			}
			o.board.resetStarts()
			backoff = minBackoff
			continue
		}
		// One update, so that whoever sees the state also sees its reason.
		o.board.set(state, "session", err)
		if healthy {
			backoff = minBackoff
		}
		if err != nil {
			o.log.Warn("server session ended", "op", "connect", "err", err, "retry_in", backoff)
		}
		o.sleep(ctx, backoff)
		backoff = min(backoff*2, maxBackoff)
	}
	o.board.set(StateStopped, "", nil)
	return nil
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// runSession connects once and serves the session until it ends. It
// reports whether the session was healthy: connected, and listed
// successfully at least once (or the server has no skills to list).
func (o *Session) runSession(ctx context.Context) (healthy bool, err error) {
	o.board.set(StateConnecting, "", nil)
	cs, cancel, err := o.dial.connect(ctx)
	if err != nil {
		return false, fmt.Errorf("%w: %w", errStart, err)
	}
	defer func() {
		o.board.end()
		cs.Close()
		cancel()
	}()

	l := o.board.adopt(cs)
	o.log.Info("connected", "protocol", cs.InitializeResult().ProtocolVersion, "skills_extension", l.declared, "directory_read", l.directoryRead)
	if l.namedCut && l.declared {
		o.log.Warn("skills named in the instructions not all asked for", "op", "get", "err", namedCutNote)
	}

	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()

	if !l.declared {
		o.publish(&Catalog{At: time.Now()})
		select {
		case <-ctx.Done():
			return true, nil
		case err := <-ended:
			return true, sessionEnded(err)
		}
	}

	return o.relistUntilEnd(ctx, l, ended)
}

// relistUntilEnd lists the skills of a session that declares them, then
// again at each refresh (sooner when the catalog's ttlMs asks for it, a
// Refresh or a list_changed notification), until ctx ends or the session
// does. healthy says a listing succeeded.
func (o *Session) relistUntilEnd(ctx context.Context, l *link, ended <-chan error) (healthy bool, err error) {
	var ttl time.Duration
	for {
		listed := time.Now()
		cat, err := o.enumerate(ctx, l)
		switch {
		case ctx.Err() != nil:
			// Stopped while listing: what was listed is cut short by us,
			// not the server's answer, and must not replace the last
			// whole catalog (saved for a restart with the server down).
			return healthy, nil
		case err == nil:
			healthy = true
			ttl = cat.TTL
			o.publish(cat)
		default:
			o.board.setError("list", err)
			o.log.Warn("skills/list failed", "op", "list", "err", err)
			if errors.Is(err, ErrOffline) {
				return healthy, err
			}
		}
		wait := o.limits.RefreshInterval
		if ttl > 0 && (wait <= 0 || ttl < wait) {
			wait = max(ttl, o.relist.gap)
		}
		if err := o.relist.wait(ctx, ended, wait, listed); err != nil || ctx.Err() != nil {
			return healthy, err
		}
	}
}

func sessionEnded(err error) error {
	if err == nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		return errors.New("the server closed the session")
	}
	return fmt.Errorf("session ended: %w", err)
}

// publish puts c's counts in the status and hands c to Options.OnCatalog.
func (o *Session) publish(c *Catalog) {
	o.board.listed(c)
	if o.opts.OnCatalog != nil {
		o.opts.OnCatalog(c)
	}
}

// maxFrame is the hard cap on any message from the server: room for a file
// of the per-file cap base64-encoded (4/3) or as typical JSON text, plus the
// envelope. A text file whose JSON escaping more than doubles it near the
// cap is refused; that is documented.
func maxFrame(maxFile int64) int64 {
	return maxFile*3/2 + 1<<20
}

// readLimit is the largest raw response accepted for a file of n declared
// bytes: JSON escaping can make text up to six times longer (\u0000), base64
// four thirds; plus room for the envelope. It never exceeds the frame cap.
func readLimit(n, frame int64) int64 {
	const envelope = 64 << 10
	return min(6*n+envelope, frame)
}
