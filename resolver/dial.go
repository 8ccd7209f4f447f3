package resolver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/resolver/transport"
)

// A dialer starts sessions with one origin: over the transport its entry
// names (or Options.Dial), as the client skillfs presents, with what the
// server sends outside the session's answers (list_changed, a stdio
// server's stderr and exit) handed on.
type dialer struct {
	opts   Options // Origin, Dial and Version
	log    *slog.Logger
	relist *relister // list_changed asks for a re-list
	out    *output   // a stdio server's stderr and exit
}

// connect starts a session. cancel ends the context it was connected
// with, which the session keeps (the legacy SSE transport its event
// stream): it is called once the session has ended.
func (d *dialer) connect(ctx context.Context) (_ *mcp.ClientSession, cancel context.CancelFunc, _ error) {
	t, err := d.transport()
	if err != nil {
		return nil, nil, err
	}
	// skillfs declares the extension it speaks, as the Final SEP-2640
	// text has clients do: extensions["io.modelcontextprotocol/skills"] = {}.
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(skill.ExtensionID, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "skillfs", Version: d.opts.Version}, &mcp.ClientOptions{
		Capabilities: caps,
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			d.log.Debug("resources/list_changed received", "op", "notify")
			d.relist.ask()
		},
	})
	if err := registerMethods(client); err != nil {
		return nil, nil, err
	}
	client.AddSendingMiddleware(dropEvictions)
	// The context given to Connect must outlive the handshake: the legacy
	// SSE transport keeps its event stream on it. So the connect timeout
	// cancels it only while the handshake is still under way.
	timeout := d.opts.Origin.Limits.ConnectTimeout
	sctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(timeout, cancel)
	cs, err := client.Connect(sctx, t, nil)
	if !timer.Stop() || err != nil {
		cancel()
		if err == nil {
			cs.Close()
			err = context.DeadlineExceeded
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, fmt.Errorf("connect: no answer within %v", timeout)
		}
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	return cs, cancel, nil
}

func (d *dialer) transportOptions() transport.Options {
	cfg := d.opts.Origin
	return transport.Options{
		MaxFrame: maxFrame(cfg.Limits.MaxFileSize),
		Headers:  cfg.Headers,
		URL:      cfg.URL,
		Logger:   d.log,
		// A list_changed dropped in a notification storm still leads to
		// a re-list, at the pace relister.wait allows.
		OnListChanged: d.relist.ask,
		OnExit:        d.out.recordExit,
		OnStderr:      d.out.recordStderr,
	}
}

func (d *dialer) transport() (mcp.Transport, error) {
	topts := d.transportOptions()
	if d.opts.Dial != nil {
		rwc, err := d.opts.Dial(context.Background())
		if err != nil {
			return nil, fmt.Errorf("dial: %w", err)
		}
		return transport.Stream(rwc, topts), nil
	}
	cfg := d.opts.Origin
	switch cfg.Kind {
	case config.Stdio:
		cmd := exec.Command(cfg.Command, cfg.Args...)
		cmd.Dir = cfg.Cwd
		// Not skillfs's whole environment: other servers' tokens live
		// there.
		cmd.Env = cfg.Environ(os.Environ())
		return transport.Command(cmd, topts), nil
	case config.HTTP:
		// The SDK's own event cap would end the session; ours (in the
		// HTTP client) refuses one response and keeps it, so it must be
		// the smaller of the two.
		return &mcp.StreamableClientTransport{
			Endpoint:     cfg.URL,
			HTTPClient:   transport.HTTPClient(topts),
			MaxEventSize: int(topts.MaxFrame) + 1<<20,
		}, nil
	case config.SSE:
		return &mcp.SSEClientTransport{
			Endpoint:     cfg.URL,
			HTTPClient:   transport.HTTPClient(topts),
			MaxEventSize: int(topts.MaxFrame) + 1<<20,
		}, nil
	}
	return nil, fmt.Errorf("unknown transport kind %q", cfg.Kind)
}
