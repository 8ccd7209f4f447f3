package resolver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/resolver/transport"
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
	relist  chan struct{}

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every state change
	// cancelSession ends the context the live session was connected with.
	cancelSession context.CancelFunc
	sess          *mcp.ClientSession
	status        Status
	// budget counts bytes reserved or fetched against Limits.Budget over
	// the sliding Limits.BudgetWindow.
	budget *budget
	// keepBudget counts what FetchToKeep fetched, against KeepBudget of
	// Limits.Budget over the same window: kept files never take what
	// reads need.
	keepBudget *budget
	// now and sleep are time.Now and a context-aware sleep; tests replace
	// them.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration)
	// held maps the canonical SKILL.md URI of every skill in the last
	// catalog, for skills/get lookups that must not duplicate listing work.
	held map[string]bool
	// named are the skill URIs the live session's instructions name, at
	// most MaxNamedSkills; namedCut: they name more (instructions.go).
	named    []string
	namedCut bool
	// declared: the live session's server declared the skills extension.
	// The Final text has clients call skills/list and skills/get only
	// after seeing that declaration.
	declared bool
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
		relist:     make(chan struct{}, 1),
		changed:    make(chan struct{}),
		budget:     newBudget(cfg.Limits.Budget, cfg.Limits.BudgetWindow),
		keepBudget: newBudget(KeepBudget(cfg.Limits.Budget), cfg.Limits.BudgetWindow),
		now:        time.Now,
		sleep:      sleepCtx,
	}
	o.status = Status{State: StateConnecting, Budget: cfg.Limits.Budget, BudgetWindow: cfg.Limits.BudgetWindow,
		KeepBudget: KeepBudget(cfg.Limits.Budget)}
	return o
}

// Status returns a snapshot of the origin's state.
func (o *Session) Status() Status {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.status
	s.BytesFetched = o.budget.used(o.now())
	s.KeepFetched = o.keepBudget.used(o.now())
	s.LastError = config.MaskURLs(s.LastError)
	s.Stderr.LastWarnings = slices.Clone(s.Stderr.LastWarnings)
	return s
}

// DirectoryRead reports whether the live session's server declared
// directoryRead. It is asked on every directory listing, so it copies
// nothing.
func (o *Session) DirectoryRead() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.status.DirectoryRead
}

// Refresh asks the supervisor to enumerate again soon. It never blocks.
func (o *Session) Refresh() {
	select {
	case o.relist <- struct{}{}:
	default:
	}
}

func (o *Session) setError(op string, err error) {
	o.mu.Lock()
	o.status.LastError = fmt.Sprintf("%s: %v", op, err)
	o.status.LastErrorAt = time.Now()
	o.mu.Unlock()
}

// setStateError sets the state and, when err is not nil, the last error
// together.
func (o *Session) setStateError(s State, op string, err error) {
	o.mu.Lock()
	if err != nil {
		o.status.LastError = fmt.Sprintf("%s: %v", op, err)
		o.status.LastErrorAt = time.Now()
	}
	o.status.State = s
	o.signal()
	o.mu.Unlock()
}

func (o *Session) setState(s State) {
	o.mu.Lock()
	o.status.State = s
	o.signal()
	o.mu.Unlock()
}

// signal wakes callers waiting in session; o.mu is held.
func (o *Session) signal() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// session returns the live session. While a connection attempt is under
// way it waits for it (a read right after start should not fail because the
// server has not answered yet); otherwise no session is ErrOffline at once.
func (o *Session) session(ctx context.Context) (*mcp.ClientSession, error) {
	for {
		o.mu.Lock()
		sess, state, changed := o.sess, o.status.State, o.changed
		o.mu.Unlock()
		if sess != nil {
			return sess, nil
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
func (o *Session) lost(cs *mcp.ClientSession, err error) error {
	if !errors.Is(err, ErrOffline) {
		return err
	}
	o.mu.Lock()
	if o.sess == cs {
		o.sess = nil
		o.status.State = StateOffline
		o.status.LastError = err.Error()
		o.status.LastErrorAt = time.Now()
		o.signal()
	}
	o.mu.Unlock()
	go cs.Close()
	return err
}

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
		o.mu.Lock()
		if errors.Is(err, errStart) {
			state = StateFailed
			o.status.FailedStarts++
		}
		failedStarts := o.status.FailedStarts
		o.mu.Unlock()
		if n := o.limits.StartAttempts; n > 0 && failedStarts >= n {
			o.setStateError(StateGaveUp, "session", fmt.Errorf("%w (failed to start %d times in a row; not retrying until SIGHUP or a change to this server's entry)", err, failedStarts))
			o.log.Error("server failed to start; not retrying until SIGHUP or a change to its entry", "op", "connect", "attempts", failedStarts, "err", err)
			select {
			case <-ctx.Done():
			case <-o.relist:
				o.log.Info("trying the server again", "op", "connect")
			}
			o.mu.Lock()
			o.status.FailedStarts = 0
			o.mu.Unlock()
			backoff = minBackoff
			continue
		}
		// One update, so that whoever sees the state also sees its reason.
		o.setStateError(state, "session", err)
		if healthy {
			backoff = minBackoff
		}
		if err != nil {
			o.log.Warn("server session ended", "op", "connect", "err", err, "retry_in", backoff)
		}
		o.sleep(ctx, backoff)
		backoff = min(backoff*2, maxBackoff)
	}
	o.setState(StateStopped)
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
	o.setState(StateConnecting)
	cs, err := o.connect(ctx)
	if err != nil {
		return false, fmt.Errorf("%w: %w", errStart, err)
	}
	defer func() {
		o.mu.Lock()
		o.sess = nil
		cancel := o.cancelSession
		o.cancelSession = nil
		o.mu.Unlock()
		cs.Close()
		if cancel != nil {
			cancel()
		}
	}()

	declared := o.adopt(cs)

	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()

	if !declared {
		o.publish(&Catalog{At: time.Now()})
		select {
		case <-ctx.Done():
			return true, nil
		case err := <-ended:
			return true, sessionEnded(err)
		}
	}

	return o.relistUntilEnd(ctx, cs, ended)
}

// adopt makes cs the origin's session: its initialize answer goes into
// the status (protocol, server name, instructions and the skills they
// name, whether the skills extension and directory reads are declared).
// It says whether the server declares the skills extension.
func (o *Session) adopt(cs *mcp.ClientSession) (declared bool) {
	ir := cs.InitializeResult()
	directoryRead, declared := skillsExtension(ir)
	o.mu.Lock()
	o.sess = cs
	o.status.FailedStarts = 0
	o.status.Protocol = ir.ProtocolVersion
	if ir.ServerInfo != nil {
		o.status.ServerName = ir.ServerInfo.Name
	}
	o.status.DirectoryRead = directoryRead
	o.status.Instructions = keepInstructions(ir.Instructions)
	o.status.InstructionsBytes = len(ir.Instructions)
	o.named, o.namedCut = NamedSkills(ir.Instructions, MaxNamedSkills)
	o.declared = declared
	if declared {
		o.status.State = StateConnected
	} else {
		o.status.State = StateNoSkills
	}
	o.signal()
	o.mu.Unlock()
	o.log.Info("connected", "protocol", ir.ProtocolVersion, "skills_extension", declared, "directory_read", directoryRead)
	if o.namedCut && declared {
		o.log.Warn("skills named in the instructions not all asked for", "op", "get", "err", namedCutNote)
	}
	return declared
}

// relistUntilEnd lists the skills of a session that declares them, then
// again at each refresh (sooner when the catalog's ttlMs asks for it, a
// Refresh or a list_changed notification), until ctx ends or the session
// does. healthy says a listing succeeded.
func (o *Session) relistUntilEnd(ctx context.Context, cs *mcp.ClientSession, ended <-chan error) (healthy bool, err error) {
	var ttl time.Duration
	for {
		listed := time.Now()
		cat, err := o.enumerate(ctx, cs)
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
			o.setError("list", err)
			o.log.Warn("skills/list failed", "op", "list", "err", err)
			if errors.Is(err, ErrOffline) {
				return healthy, err
			}
		}
		wait := o.limits.RefreshInterval
		if ttl > 0 && (wait <= 0 || ttl < wait) {
			wait = max(ttl, o.relistGap())
		}
		if err := o.waitForRelist(ctx, ended, wait, listed); err != nil || ctx.Err() != nil {
			return healthy, err
		}
	}
}

// Re-lists asked for (notifications/resources/list_changed, Refresh) are
// coalesced over relistCoalesce, and start at least DefaultRelistGap
// (Options.RelistGap) after the previous enumeration started: a server
// that sends list_changed without pause gets one skills/list enumeration
// per gap, not one per notification.
const (
	relistCoalesce   = 200 * time.Millisecond
	DefaultRelistGap = 2 * time.Second
)

func (o *Session) relistGap() time.Duration { return cmp.Or(o.opts.RelistGap, DefaultRelistGap) }

// waitForRelist returns when it is time to enumerate again (nil), or when
// the session or ctx ended. listed is when the last enumeration started.
func (o *Session) waitForRelist(ctx context.Context, ended <-chan error, wait time.Duration, listed time.Time) error {
	var timer <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-ended:
		return sessionEnded(err)
	case <-o.relist:
		// Coalesce a burst of notifications into one re-list.
		pause := max(relistCoalesce, o.relistGap()-time.Since(listed))
		t := time.NewTimer(pause)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		case err := <-ended:
			return sessionEnded(err)
		}
		select {
		case <-o.relist:
		default:
		}
	case <-timer:
	}
	return nil
}

func sessionEnded(err error) error {
	if err == nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		return errors.New("the server closed the session")
	}
	return fmt.Errorf("session ended: %w", err)
}

func (o *Session) publish(c *Catalog) {
	held := make(map[string]bool, len(c.Skills))
	for _, s := range c.Skills {
		held[s.URI.String()] = true
	}
	o.mu.Lock()
	o.held = held
	o.status.Skills = len(c.Skills)
	o.status.Rejected = len(c.Rejected)
	o.status.Truncated = c.Truncated
	o.status.ListedAt = c.At
	o.mu.Unlock()
	if o.opts.OnCatalog != nil {
		o.opts.OnCatalog(c)
	}
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

func (o *Session) connect(ctx context.Context) (*mcp.ClientSession, error) {
	t, err := o.transport()
	if err != nil {
		return nil, err
	}
	// skillfs declares the extension it speaks, as the Final SEP-2640
	// text has clients do: extensions["io.modelcontextprotocol/skills"] = {}.
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(skill.ExtensionID, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "skillfs", Version: o.opts.Version}, &mcp.ClientOptions{
		Capabilities: caps,
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			o.log.Debug("resources/list_changed received", "op", "notify")
			o.Refresh()
		},
	})
	if err := registerMethods(client); err != nil {
		return nil, err
	}
	client.AddSendingMiddleware(dropEvictions)
	// The context given to Connect must outlive the handshake: the legacy
	// SSE transport keeps its event stream on it. So the connect timeout
	// cancels it only while the handshake is still under way.
	sctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(o.limits.ConnectTimeout, cancel)
	cs, err := client.Connect(sctx, t, nil)
	if !timer.Stop() || err != nil {
		cancel()
		if err == nil {
			cs.Close()
			err = context.DeadlineExceeded
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("connect: no answer within %v", o.limits.ConnectTimeout)
		}
		return nil, fmt.Errorf("connect: %w", err)
	}
	o.mu.Lock()
	o.cancelSession = cancel
	o.mu.Unlock()
	return cs, nil
}

func (o *Session) transportOptions() transport.Options {
	return transport.Options{
		MaxFrame: maxFrame(o.limits.MaxFileSize),
		Headers:  o.cfg.Headers,
		URL:      o.cfg.URL,
		Logger:   o.log,
		// A list_changed dropped in a notification storm still leads to
		// a re-list, at the pace waitForRelist allows.
		OnListChanged: o.Refresh,
		OnExit:        o.recordExit,
		OnStderr:      o.recordStderr,
	}
}

func (o *Session) transport() (mcp.Transport, error) {
	topts := o.transportOptions()
	if o.opts.Dial != nil {
		rwc, err := o.opts.Dial(context.Background())
		if err != nil {
			return nil, fmt.Errorf("dial: %w", err)
		}
		return transport.Stream(rwc, topts), nil
	}
	switch o.cfg.Kind {
	case config.Stdio:
		cmd := exec.Command(o.cfg.Command, o.cfg.Args...)
		cmd.Dir = o.cfg.Cwd
		// Not skillfs's whole environment: other servers' tokens live
		// there.
		cmd.Env = o.cfg.Environ(os.Environ())
		return transport.Command(cmd, topts), nil
	case config.HTTP:
		// The SDK's own event cap would end the session; ours (in the
		// HTTP client) refuses one response and keeps it, so it must be
		// the smaller of the two.
		return &mcp.StreamableClientTransport{
			Endpoint:     o.cfg.URL,
			HTTPClient:   transport.HTTPClient(topts),
			MaxEventSize: int(topts.MaxFrame) + 1<<20,
		}, nil
	case config.SSE:
		return &mcp.SSEClientTransport{
			Endpoint:     o.cfg.URL,
			HTTPClient:   transport.HTTPClient(topts),
			MaxEventSize: int(topts.MaxFrame) + 1<<20,
		}, nil
	}
	return nil, fmt.Errorf("unknown transport kind %q", o.cfg.Kind)
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
