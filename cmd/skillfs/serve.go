package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/skillfs/skillfs/internal/skillserver"
	"github.com/spf13/cobra"
)

// serveOptions is everything `skillfs serve` takes from its command line.
type serveOptions struct {
	dir          string
	httpAddr     string // empty: serve on stdio
	allowRemote  bool
	allowOrigins []string
	pageSize     int
	poll         time.Duration
	watch        bool
	accessLog    string
	instructions string // a file
	stderr       io.Writer
}

func newServeCommand() *cobra.Command {
	var opts serveOptions
	cmd := &cobra.Command{
		Use:   "serve DIR",
		Short: "Serve a folder of skills as a SEP-2640 MCP server",
		Long: `serve publishes every folder below DIR that holds a SKILL.md as a SEP-2640
skill: DIR/acme/billing/refunds/SKILL.md is skill://acme/billing/refunds/SKILL.md.
It speaks MCP on stdin/stdout, or streamable HTTP with --http. Skills it cannot
publish honestly (bad frontmatter, a name that differs from its folder, files
it cannot read, symlinks leaving DIR, skills over the SEP's limits) are listed
on stderr at start and left out. Changes in DIR are noticed through the
system's file notifications (inotify, kqueue), with a rescan once a minute for
what they miss; where DIR cannot be watched (no inotify, the watch limit
reached) serve says why once and polls every --poll instead.

Over HTTP, a request carrying an Origin header (one a browser sends) gets
403 unless the origin is the server's own loopback origin (http://127.0.0.1:PORT,
http://localhost:PORT, http://[::1]:PORT, on a connection to a loopback
address) or is given with --allow-origin; this is MCP's defence against DNS
rebinding. Under --allow-remote a browser reaching serve over the network is
served only from the --allow-origin list.
Requests without Origin (non-browser clients) are served.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(1)(cmd, args); err != nil {
				return usageError(fmt.Errorf("%w (see `%s --help`)", err, cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.dir = args[0]
			opts.stderr = cmd.ErrOrStderr()
			return runServe(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.httpAddr, "http", "", "serve streamable HTTP on `ADDR` (host:port, loopback only unless --allow-remote; port 0 picks one)")
	f.BoolVar(&opts.allowRemote, "allow-remote", false, "allow --http on a non-loopback address")
	f.StringArrayVar(&opts.allowOrigins, "allow-origin", nil, "serve HTTP requests whose Origin header is `ORIGIN` (scheme://host[:port]; repeatable); others with an Origin get 403")
	f.IntVar(&opts.pageSize, "page-size", 100, "items per page of skills/list, resources/list and directory reads")
	f.DurationVar(&opts.poll, "poll", 2*time.Second, "how often to look for changes in DIR when it cannot be watched, or with --watch=false (negative: never look, not even by watching)")
	f.BoolVar(&opts.watch, "watch", true, "watch DIR with file notifications; false polls every --poll instead")
	f.StringVar(&opts.accessLog, "access-log", "", "append one line per request (method and URI) to `FILE`")
	f.StringVar(&opts.instructions, "instructions", "", "send the text of `FILE` as the server's instructions (initialize), for the model; it may point to skills by URI, e.g. skill://acme/billing/refunds/SKILL.md")
	return cmd
}

// checkLoopback refuses an address that would listen beyond this machine.
// A host name other than localhost is refused too: it could resolve to
// anything.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %s: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--http %s is not a loopback address; serving skills to the network needs --allow-remote", addr)
}

// checkFlags refuses, as a usage error, flag values serve cannot use.
func (opts serveOptions) checkFlags() error {
	if opts.pageSize <= 0 {
		return usageError(fmt.Errorf("--page-size must be positive, not %d", opts.pageSize))
	}
	if opts.poll == 0 {
		return usageError(errors.New("--poll must not be 0 (use a negative duration to disable watching)"))
	}
	if opts.httpAddr != "" && !opts.allowRemote {
		if err := checkLoopback(opts.httpAddr); err != nil {
			return usageError(err)
		}
	}
	for _, o := range opts.allowOrigins {
		if err := skillserver.CheckOrigin(o); err != nil {
			return usageError(fmt.Errorf("--allow-origin: %w", err))
		}
	}
	return nil
}

// runServe publishes the skills below opts.dir on stdio, or over HTTP with
// --http, until ctx ends.
func runServe(ctx context.Context, opts serveOptions) error {
	if err := opts.checkFlags(); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(opts.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var access io.Writer
	if opts.accessLog != "" {
		f, err := os.OpenFile(opts.accessLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return usageError(fmt.Errorf("--access-log: %w", err))
		}
		defer f.Close()
		access = f
	}
	var instructions []byte
	if opts.instructions != "" {
		b, err := os.ReadFile(opts.instructions)
		if err != nil {
			return usageError(fmt.Errorf("--instructions: %w", err))
		}
		instructions = b
	}
	s, err := skillserver.New(opts.dir, skillserver.Options{
		Instructions: string(instructions),
		AllowOrigins: opts.allowOrigins,
		AccessLog:    access,
		PageSize:     opts.pageSize,
		PollInterval: opts.poll,
		NoWatch:      !opts.watch,
		Logger:       logger,
		Name:         "skillfs",
		Version:      versionString(),
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	for _, p := range s.Problems() {
		fmt.Fprintf(opts.stderr, "skillfs serve: warning: skipped %s: %s\n", p.Path, p.Reason)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Watch(ctx)

	if opts.httpAddr == "" {
		return s.ServeStdio(ctx)
	}
	return serveHTTP(ctx, s, opts)
}

// serveHTTP serves s as streamable HTTP on opts.httpAddr until ctx ends,
// then gives requests in flight a moment to finish.
func serveHTTP(ctx context.Context, s *skillserver.Server, opts serveOptions) error {
	ln, err := net.Listen("tcp", opts.httpAddr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		// Requests end with ctx, so that open event streams (GET streams,
		// subscriptions/listen) let Shutdown finish at once on a signal.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	fmt.Fprintf(opts.stderr, "serving %s on http://%s/\n", opts.dir, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Give requests in flight a moment, then cut what is left.
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return nil
}
