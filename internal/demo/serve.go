package demo

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skillserver"
)

// Label is the directory the demo origin appears under.
const Label = "demo"

// A Server is the demo skills served in-process: a config with one origin,
// Label, and the dialer that reaches it over an in-memory pipe.
type Server struct {
	Config *config.Config
	Dial   map[string]func(context.Context) (io.ReadWriteCloser, error)
	stop   func()
}

// Close stops the server and removes its files.
func (s *Server) Close() { s.stop() }

// Serve writes the demo skills to a temporary folder and serves them with
// skillserver until Close. Its session chatter is logged at Debug; its
// warnings reach log as they are.
func Serve(ctx context.Context, log *slog.Logger) (*Server, error) {
	dir, err := os.MkdirTemp("", "skillfs-demo-")
	if err != nil {
		return nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	if err := Materialize(dir); err != nil {
		cleanup()
		return nil, err
	}
	srvLog := slog.New(minLevel{log.Handler(), slog.LevelWarn}).With("origin", Label, "op", "demo-server")
	srv, err := skillserver.New(dir, skillserver.Options{Logger: srvLog, PollInterval: -1, Name: "skillfs-demo"})
	if err != nil {
		cleanup()
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	dial := func(context.Context) (io.ReadWriteCloser, error) {
		client, server := net.Pipe()
		go func() {
			if err := srv.ServeConn(sctx, server); err != nil && sctx.Err() == nil {
				log.Debug("demo session ended", "origin", Label, "err", err)
			}
			server.Close()
		}()
		return client, nil
	}
	cfg := &config.Config{Origins: []config.Origin{{
		Label:   Label,
		Kind:    config.Stdio,
		Command: "skillfs-embedded-demo",
		Limits:  config.DefaultLimits(),
	}}}
	return &Server{
		Config: cfg,
		Dial:   map[string]func(context.Context) (io.ReadWriteCloser, error){Label: dial},
		stop:   func() { cancel(); cleanup() },
	}, nil
}

// minLevel drops records below a level before they reach h.
type minLevel struct {
	h     slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.h.Enabled(ctx, l)
}
func (m minLevel) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }
func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.h.WithAttrs(as), m.level}
}
func (m minLevel) WithGroup(name string) slog.Handler { return minLevel{m.h.WithGroup(name), m.level} }
