package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skillfs/skillfs/internal/control/wire"
)

// Options configure Serve.
type Options struct {
	// Dir is the directory the socket goes in (the first of Dirs).
	Dir   string
	Mount MountInfo
	API   API
	// Logger defaults to a discard handler.
	Logger *slog.Logger
	// Reload serves `skillfs reload`; nil refuses it (reload.go).
	Reload ReloadFunc
	// Starting reports whether the mount is still starting: while it
	// does, only status, skills and pending are served (cmd/skillfs, starting.go).
	// Nil: the mount is live.
	Starting func() bool
}

// A Server answers one mount's control requests until Close.
type Server struct {
	socket, reg string
	http        *http.Server
	ln          net.Listener
	log         *slog.Logger
	closeOnce   sync.Once
	done        chan struct{}
	refused     *refusals
}

// registration is the file a Server writes beside its socket.
type registration struct {
	Mountpoint string    `json:"mountpoint"`
	PID        int       `json:"pid"`
	Socket     string    `json:"socket"`
	Started    time.Time `json:"started"`
}

// maxRequest bounds a request body: a list of refs, never file contents.
// An approval of every skill of a listing at max_list_entries (100,000 by
// default) with their bindings takes about 15 MiB.
const maxRequest = 32 << 20

// Serve starts answering for opts.Mount on a socket in opts.Dir and
// registers it there. It stops when ctx ends or on Close.
func Serve(ctx context.Context, opts Options) (*Server, error) {
	return serve(ctx, opts, os.Getuid())
}

// serve is Serve admitting peers of uid only (tests pass another).
func serve(ctx context.Context, opts Options, uid int) (*Server, error) {
	if opts.API == nil || opts.Mount.Path == "" {
		return nil, errors.New("control: Serve needs an API and a mount path")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Mount.PID == 0 {
		opts.Mount.PID = os.Getpid()
	}
	if opts.Mount.Started.IsZero() {
		opts.Mount.Started = time.Now()
	}
	if err := prepareDir(opts.Dir); err != nil {
		return nil, err
	}
	name := baseName(opts.Mount.Path)
	s := &Server{
		socket: filepath.Join(opts.Dir, name+".sock"),
		reg:    filepath.Join(opts.Dir, name+".json"),
		log:    opts.Logger,
		done:   make(chan struct{}),
	}
	s.refused = &refusals{log: opts.Logger, every: RefusalSummaryEvery}
	if err := clearSocket(s.socket, opts.Mount.Path); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", s.socket)
	if errors.Is(err, fs.ErrNotExist) {
		// Another mount's Close removed the directory, empty, meanwhile.
		if err = prepareDir(opts.Dir); err == nil {
			ln, err = net.Listen("unix", s.socket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	// The directory is 0700, so no one else could reach the socket between
	// bind and chmod.
	if err := os.Chmod(s.socket, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	reg := registration{Mountpoint: opts.Mount.Path, PID: opts.Mount.PID, Socket: s.socket, Started: opts.Mount.Started}
	if err := writeAtomic(s.reg, reg); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control registration: %w", err)
	}
	s.ln = ln
	h := &handler{api: opts.API, mount: opts.Mount, log: opts.Logger, reload: opts.Reload, starting: opts.Starting}
	s.http = &http.Server{Handler: h.gated(h.mux()), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(opts.Logger.Handler(), slog.LevelDebug)}
	go func() {
		s.http.Serve(&peerListener{Listener: ln, uid: uid, refused: s.refused})
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.done:
		}
	}()
	opts.Logger.Debug("control endpoint listening", "path", s.socket)
	return s, nil
}

// Socket is the socket's path.
func (s *Server) Socket() string { return s.socket }

// Close stops answering and removes the socket and the registration, and
// the directory when they were the last in it.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.http.Close()
		s.ln.Close() // in case Serve has not started yet
		os.Remove(s.reg)
		os.Remove(s.socket)
		os.Remove(filepath.Dir(s.socket)) // only if no other mount is there
		s.refused.close()
	})
	return nil
}

// clearSocket removes a socket left at path by a daemon that died, and
// refuses if one still answers there.
func clearSocket(path, mountpoint string) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("another skillfs already answers for %s at %s", mountpoint, path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale control socket: %w", err)
	}
	return nil
}

func writeAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".reg-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// peerListener admits only connections from processes of uid; refusals
// are logged without flooding (refusals.go).
type peerListener struct {
	net.Listener
	uid     int
	refused *refusals
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, _, err := peerCred(c)
		if err == nil && uid == l.uid {
			return c, nil
		}
		l.refused.refused(uid, err)
		c.Close()
	}
}

type handler struct {
	api      API
	mount    MountInfo
	log      *slog.Logger
	reload   ReloadFunc
	starting func() bool
}

// Requests of the endpoints that take arguments.
type (
	labelRequest struct {
		Origin string `json:"origin,omitempty"`
	}
	refsRequest struct {
		Refs []SkillRef `json:"refs"`
	}
	// approveRequest: refs each with the binding the user was shown; All
	// is the label of `approve --all` and the refs its pending skills as
	// listed.
	approveRequest struct {
		Refs []SkillRef `json:"refs"`
		All  string     `json:"all,omitempty"`
	}
	getRequest struct {
		Origin string `json:"origin"`
		URI    string `json:"uri"`
	}
	// ShowResponse carries SKILL.md's verified bytes.
	showResponse struct {
		Content []byte `json:"content"`
	}
)

func (h *handler) mux() *http.ServeMux {
	m := http.NewServeMux()
	m.Handle("POST /v1/status", endpoint(h, func(ctx context.Context, _ struct{}) (StatusReport, error) {
		return h.status(), nil
	}))
	m.Handle("POST /v1/skills", endpoint(h, func(ctx context.Context, r labelRequest) ([]wire.SkillInfo, error) {
		return h.skills(r.Origin)
	}))
	m.Handle("POST /v1/inspect", endpoint(h, func(ctx context.Context, r SkillRef) (Inspection, error) {
		if err := checkRef(r); err != nil {
			return Inspection{}, err
		}
		return h.api.Inspect(ctx, r)
	}))
	m.Handle("POST /v1/show", endpoint(h, func(ctx context.Context, r SkillRef) (showResponse, error) {
		if err := checkRef(r); err != nil {
			return showResponse{}, err
		}
		b, err := h.api.ShowSkillMD(ctx, r)
		return showResponse{Content: b}, err
	}))
	m.Handle("POST /v1/pending", endpoint(h, func(ctx context.Context, _ struct{}) ([]Pending, error) {
		return nonNil(h.api.Pending()), nil
	}))
	m.Handle("POST /v1/approve", endpoint(h, func(ctx context.Context, r approveRequest) ([]wire.SkillInfo, error) {
		if r.All != "" {
			if err := h.checkLabel(r.All); err != nil {
				return nil, err
			}
			for _, ref := range r.Refs {
				if err := checkRef(ref); err != nil {
					return nil, err
				}
			}
		} else if err := checkRefs(r.Refs); err != nil {
			return nil, err
		}
		return h.api.Approve(r.Refs, r.All)
	}))
	// The old approve --all approved whatever was pending when the request
	// arrived, which nobody had seen: refused, never mapped.
	m.Handle("POST /v1/approve-all", endpoint(h, func(ctx context.Context, _ labelRequest) ([]wire.SkillInfo, error) {
		return nil, fmt.Errorf("%w: approving every pending skill unseen is not served: approve --all sends the skills it listed with their bindings to /v1/approve (use the mount's own skillfs)", ErrInvalid)
	}))
	m.Handle("POST /v1/revoke", endpoint(h, func(ctx context.Context, r refsRequest) ([]wire.SkillInfo, error) {
		if err := checkRefs(r.Refs); err != nil {
			return nil, err
		}
		return h.api.Revoke(r.Refs)
	}))
	m.Handle("POST /v1/get", endpoint(h, func(ctx context.Context, r getRequest) (wire.SkillInfo, error) {
		if r.URI == "" {
			return wire.SkillInfo{}, fmt.Errorf("%w: get needs a URI", ErrInvalid)
		}
		if err := h.checkLabel(r.Origin); err != nil {
			return wire.SkillInfo{}, err
		}
		return h.api.Get(ctx, r.Origin, r.URI)
	}))
	h.reloadRoute(m)
	h.completeRoute(m)
	h.reviewRoute(m)
	return m
}

// endpoint adapts fn to an HTTP handler: the body decoded into Req, the
// result or the error encoded as JSON.
func endpoint[Req, Resp any](h *handler, fn func(context.Context, Req) (Resp, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req Req
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
		switch {
		case err != nil:
			h.fail(w, r, err)
			return
		case len(body) > maxRequest:
			h.fail(w, r, fmt.Errorf("%w: request over %d bytes", ErrInvalid, maxRequest))
			return
		case len(strings.TrimSpace(string(body))) > 0:
			if err := json.Unmarshal(body, &req); err != nil {
				h.fail(w, r, fmt.Errorf("%w: %v", ErrInvalid, err))
				return
			}
		}
		resp, err := fn(r.Context(), req)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

// errorBody is the body of every failed request.
type errorBody struct {
	Error string `json:"error"`
}

func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, fs.ErrNotExist):
		code = http.StatusNotFound
	case errors.Is(err, ErrInvalid):
		code = http.StatusBadRequest
	case errors.Is(err, ErrChanged):
		code = http.StatusConflict
	}
	h.log.Debug("control request failed", "op", r.URL.Path, "err", err)
	writeJSON(w, code, errorBody{Error: err.Error()})
}

// MaxAnswerBytes bounds a control answer that is a list (skills,
// pending, approvals): the items that would pass it are left out, the
// answer stays a valid JSON array, and the TruncatedHeader says how many
// were left out. Other answers (status, one skill) are bounded by what
// they describe. The client reads at most twice this.
const MaxAnswerBytes = 32 << 20

// TruncatedHeader carries "OMITTED of TOTAL" when a list answer was cut
// at MaxAnswerBytes.
const TruncatedHeader = "Skillfs-Truncated"

func writeJSON(w http.ResponseWriter, code int, v any) {
	a, err := encodeAnswer(v, MaxAnswerBytes)
	if err != nil {
		code = http.StatusInternalServerError
		b, _ := json.Marshal(errorBody{Error: err.Error()})
		a = encoded{chunks: [][]byte{b}, n: len(b)}
	}
	w.Header().Set("Content-Type", "application/json")
	// The client sizes its read buffer by it (readAnswer).
	w.Header().Set("Content-Length", strconv.Itoa(a.n+1))
	if a.omitted > 0 {
		w.Header().Set(TruncatedHeader, fmt.Sprintf("%d of %d", a.omitted, a.total))
	}
	w.WriteHeader(code)
	for _, c := range a.chunks {
		if _, err := w.Write(c); err != nil {
			return
		}
	}
	w.Write([]byte{'\n'})
}

// maxChunk is the largest piece an encoded answer is kept in.
const maxChunk = 1 << 20

// encoded is an encoded answer, kept in chunks of at most maxChunk bytes
// (or one item, if larger). A list answer runs to MaxAnswerBytes: built in
// one buffer that doubles as it grows, it would be copied whole at every
// doubling, and the buffers thrown away would come to as much again.
type encoded struct {
	chunks [][]byte
	n      int // bytes in all chunks
	// omitted of total items of a list were left out to stay under the cap.
	omitted, total int
}

// write appends b, starting a chunk when the last one is full. Chunks
// start small and double up to maxChunk, so a small answer stays small.
func (e *encoded) write(b []byte) {
	k := len(e.chunks)
	if k == 0 || cap(e.chunks[k-1])-len(e.chunks[k-1]) < len(b) {
		size := 512
		if k > 0 {
			size = min(2*cap(e.chunks[k-1]), maxChunk)
		}
		e.chunks = append(e.chunks, make([]byte, 0, max(size, len(b))))
		k++
	}
	e.chunks[k-1] = append(e.chunks[k-1], b...)
	e.n += len(b)
}

// encodeAnswer encodes v without HTML escaping (nothing here is HTML, and
// '<' as "\u003c" is six bytes for one). A slice is encoded item by item
// within max bytes, and those that would pass it are left out.
func encodeAnswer(v any, max int) (encoded, error) {
	var (
		out  encoded
		item bytes.Buffer
	)
	enc := json.NewEncoder(&item)
	enc.SetEscapeHTML(false)
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		if err := enc.Encode(v); err != nil {
			return encoded{}, err
		}
		out.write(bytes.TrimSuffix(item.Bytes(), []byte("\n")))
		return out, nil
	}
	out.write([]byte{'['})
	out.total = rv.Len()
	kept := 0
	for i := range out.total {
		item.Reset()
		if err := enc.Encode(rv.Index(i).Interface()); err != nil {
			return encoded{}, err
		}
		e := bytes.TrimSuffix(item.Bytes(), []byte("\n"))
		if out.n+len(e)+2 > max {
			break
		}
		if kept > 0 {
			out.write([]byte{','})
		}
		out.write(e)
		kept++
	}
	out.write([]byte{']'})
	out.omitted = out.total - kept
	return out, nil
}

func checkRef(r SkillRef) error {
	if r.Path == "" && (r.Origin == "" || r.URI == "") {
		return fmt.Errorf("%w: name a skill by its path (acme/billing/refunds) or by --origin LABEL and its URI", ErrInvalid)
	}
	return nil
}

func checkRefs(refs []SkillRef) error {
	if len(refs) == 0 {
		return fmt.Errorf("%w: no skill named", ErrInvalid)
	}
	for _, r := range refs {
		if err := checkRef(r); err != nil {
			return err
		}
	}
	return nil
}

func (h *handler) labels() []string {
	var out []string
	for _, o := range h.api.Status().Origins {
		out = append(out, o.Label)
	}
	return out
}

// checkLabel reports a label the mount does not serve.
func (h *handler) checkLabel(label string) error {
	if label == "" {
		return fmt.Errorf("%w: no server named", ErrInvalid)
	}
	labels := h.labels()
	if !slices.Contains(labels, label) {
		return NotFound("no server %q on this mount (servers: %s)", label, strings.Join(labels, ", "))
	}
	return nil
}

func (h *handler) skills(label string) ([]wire.SkillInfo, error) {
	if label != "" {
		if err := h.checkLabel(label); err != nil {
			return nil, err
		}
	}
	out := []wire.SkillInfo{}
	for _, s := range h.api.Skills() {
		if label == "" || s.Origin == label {
			out = append(out, s)
		}
	}
	return out, nil
}

func (h *handler) status() StatusReport {
	st := h.api.Status()
	pending := map[string]int{}
	why := map[string]map[string]int{}
	for _, p := range h.api.Pending() {
		pending[p.Skill.Origin]++
		if p.Why != "" {
			if why[p.Skill.Origin] == nil {
				why[p.Skill.Origin] = map[string]int{}
			}
			why[p.Skill.Origin][p.Why]++
		}
	}
	avail, failed := map[string]int{}, map[string]int{}
	for _, s := range h.api.Skills() {
		switch s.State {
		case wire.SkillAvailable, wire.SkillDynamic:
			avail[s.Origin]++
		case wire.SkillFailed:
			failed[s.Origin]++
		}
	}
	rep := StatusReport{
		Mount:      h.mount,
		Uptime:     time.Since(h.mount.Started).Round(time.Second).String(),
		CacheBytes: cacheSize(h.mount.CacheDir),
		Version:    st.Version,
		Servers:    []ServerStatus{},
		Cache:      st.Cache,
		Reload:     st.Reload,
		State:      h.state(),
	}
	for _, o := range st.Origins {
		rep.Servers = append(rep.Servers, ServerStatus{OriginStatus: o, Available: avail[o.Label], Pending: pending[o.Label], Failed: failed[o.Label], PendingWhy: why[o.Label]})
	}
	addExits(h.api, rep.Servers)
	return rep
}

// cacheSize is the bytes of files under the cache directory, its sockets
// aside.
func cacheSize(dir string) int64 {
	if dir == "" {
		return 0
	}
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && p == filepath.Join(dir, RunDirName):
			return filepath.SkipDir
		case d.Type().IsRegular():
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
