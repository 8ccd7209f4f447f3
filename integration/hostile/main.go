package hostile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// Environment variables Main reads.
const (
	// EnvServe is not read by Main: it is the variable Command sets so that
	// the test binary's TestMain knows to call Main (see doc.go).
	EnvServe = "SKILLFS_HOSTILE_SERVE"
	// EnvFixtures is a comma-separated list of fixtures. Unset means all;
	// set and empty means none (only the honest skills).
	EnvFixtures  = "SKILLFS_HOSTILE_FIXTURES"
	EnvMode      = "SKILLFS_HOSTILE_MODE"
	EnvVariant   = "SKILLFS_HOSTILE_VARIANT"
	EnvState     = "SKILLFS_HOSTILE_STATE"
	EnvAccessLog = "SKILLFS_HOSTILE_ACCESS_LOG"
	EnvPageSize  = "SKILLFS_HOSTILE_PAGE_SIZE"
	// EnvHeavy is Options.Heavy as "ENTRIES,RESOURCES,URI_LENGTH,DESCRIPTION_LENGTH"
	// (0 for a default).
	EnvHeavy = "SKILLFS_HOSTILE_HEAVY"
	// EnvHugePage is Options.HugePage, a size in bytes.
	EnvHugePage = "SKILLFS_HOSTILE_HUGE_PAGE"
	// EnvCrowd is Options.Crowd, a count.
	EnvCrowd      = "SKILLFS_HOSTILE_CROWD"
	EnvCacheScope = "SKILLFS_HOSTILE_CACHE_SCOPE"
	// EnvGetCacheScope and EnvCapsLog carry Options.GetCacheScope and
	// Options.CapsLog.
	EnvGetCacheScope = "SKILLFS_HOSTILE_GET_CACHE_SCOPE"
	EnvCapsLog       = "SKILLFS_HOSTILE_CAPS_LOG"
	// EnvHTTP, when set, is the address to serve streamable HTTP on
	// (127.0.0.1:0 for any free port) instead of stdio.
	EnvHTTP = "SKILLFS_HOSTILE_HTTP"
	// EnvRedirectTo and EnvHeaderLog are Options.RedirectTo and HeaderLog.
	EnvRedirectTo = "SKILLFS_HOSTILE_REDIRECT_TO"
	EnvHeaderLog  = "SKILLFS_HOSTILE_HEADER_LOG"
	// EnvEnvironFile, when set, names a file Main writes its process's
	// whole environment to (one VAR=value a line) before serving: what the
	// client that started it passed.
	EnvEnvironFile = "SKILLFS_HOSTILE_ENVIRON_FILE"
	// EnvInstructionsFile is Options.InstructionsFile.
	EnvInstructionsFile = "SKILLFS_HOSTILE_INSTRUCTIONS_FILE"
)

// Exit statuses of Main, besides ExitDied.
const (
	exitOK    = 0
	exitError = 1 // serving failed
	exitUsage = 2 // the environment does not describe a server
)

// Environ returns the environment variables that make Main serve opts
// (EnvServe included; Exit and Logger do not travel). Add EnvHTTP for HTTP.
func (o Options) Environ() []string {
	env := []string{EnvServe + "=1"}
	if o.Fixtures != nil {
		env = append(env, EnvFixtures+"="+strings.Join(o.Fixtures, ","))
	}
	for _, kv := range [][2]string{{EnvMode, o.Mode}, {EnvVariant, o.Variant}, {EnvState, o.StateFile}, {EnvAccessLog, o.AccessLog}, {EnvCacheScope, o.CacheScope}, {EnvRedirectTo, o.RedirectTo}, {EnvHeaderLog, o.HeaderLog}, {EnvGetCacheScope, o.GetCacheScope}, {EnvCapsLog, o.CapsLog}, {EnvInstructionsFile, o.InstructionsFile}} {
		if kv[1] != "" {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	if o.PageSize > 0 {
		env = append(env, EnvPageSize+"="+strconv.Itoa(o.PageSize))
	}
	if h := o.Heavy; h != (Heavy{}) {
		env = append(env, fmt.Sprintf("%s=%d,%d,%d,%d", EnvHeavy, h.Entries, h.Resources, h.URILength, h.DescriptionLength))
	}
	if o.Crowd > 0 {
		env = append(env, EnvCrowd+"="+strconv.Itoa(o.Crowd))
	}
	if o.HugePage > 0 {
		env = append(env, EnvHugePage+"="+strconv.Itoa(o.HugePage))
	}
	return env
}

// Command returns a command that re-executes the running test binary as a
// server for opts, over stdio (or HTTP, when httpAddr is not empty). The
// binary's TestMain must call Main when EnvServe is set; -test.run=^$
// keeps a binary that does not from running its tests again.
func Command(opts Options, httpAddr string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("hostile command: %w", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), opts.Environ()...)
	if httpAddr != "" {
		cmd.Env = append(cmd.Env, EnvHTTP+"="+httpAddr)
	}
	return cmd, nil
}

// optionsFromEnv reads what Main serves.
func optionsFromEnv(getenv func(string) (string, bool)) (Options, string, error) {
	var o Options
	if v, ok := getenv(EnvFixtures); ok {
		o.Fixtures = []string{}
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				o.Fixtures = append(o.Fixtures, f)
			}
		}
	}
	o.Mode, _ = getenv(EnvMode)
	o.Variant, _ = getenv(EnvVariant)
	o.StateFile, _ = getenv(EnvState)
	o.AccessLog, _ = getenv(EnvAccessLog)
	o.RedirectTo, _ = getenv(EnvRedirectTo)
	o.HeaderLog, _ = getenv(EnvHeaderLog)
	o.GetCacheScope, _ = getenv(EnvGetCacheScope)
	o.CapsLog, _ = getenv(EnvCapsLog)
	o.InstructionsFile, _ = getenv(EnvInstructionsFile)
	if v, ok := getenv(EnvPageSize); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return o, "", fmt.Errorf("%s=%q: want a positive number", EnvPageSize, v)
		}
		o.PageSize = n
	}
	o.CacheScope, _ = getenv(EnvCacheScope)
	if v, ok := getenv(EnvHeavy); ok && v != "" {
		var h Heavy
		if n, err := fmt.Sscanf(v, "%d,%d,%d,%d", &h.Entries, &h.Resources, &h.URILength, &h.DescriptionLength); err != nil || n != 4 {
			return o, "", fmt.Errorf("%s=%q: want ENTRIES,RESOURCES,URI_LENGTH,DESCRIPTION_LENGTH", EnvHeavy, v)
		}
		o.Heavy = h
	}
	if v, ok := getenv(EnvCrowd); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return o, "", fmt.Errorf("%s=%q: want a count", EnvCrowd, v)
		}
		o.Crowd = n
	}
	if v, ok := getenv(EnvHugePage); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return o, "", fmt.Errorf("%s=%q: want a positive size in bytes", EnvHugePage, v)
		}
		o.HugePage = n
	}
	addr, _ := getenv(EnvHTTP)
	return o, addr, nil
}

// Main serves the server the environment describes: over stdio until the
// client hangs up, or over HTTP (EnvHTTP) until SIGTERM or SIGINT, after
// printing "hostile: listening on http://ADDR/" to stderr. It logs to
// stderr and returns the process's exit status.
func Main() int {
	opts, addr, err := optionsFromEnv(os.LookupEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		return exitUsage
	}
	if crashMode(opts.Mode) {
		crash(opts, os.Stderr)
	}
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	if name := os.Getenv(EnvEnvironFile); name != "" {
		if err := os.WriteFile(name, []byte(strings.Join(os.Environ(), "\n")+"\n"), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "hostile:", err)
			return exitError
		}
	}
	s, err := New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if addr == "" {
		if err := s.ServeStdio(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "hostile:", err)
			return exitError
		}
		return exitOK
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		return exitError
	}
	srv := &http.Server{Handler: s.Handler()}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Fprintf(os.Stderr, "hostile: listening on http://%s/\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		return exitError
	}
	return exitOK
}
