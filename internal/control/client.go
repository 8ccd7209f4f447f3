package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A Client talks to one running mount.
type Client struct {
	// Mountpoint is the mount's path, PID its daemon's.
	Mountpoint string
	PID        int
	Socket     string
	Started    time.Time
	// Skipped is what Find did not trust on the way (trust.go).
	Skipped []Skip
	http    *http.Client
}

// A RemoteError is a request the mount answered with an error.
type RemoteError struct {
	Status  int // HTTP status: 404 not found, 400 bad input, 409 changed since shown, 500 otherwise
	Message string
}

func (e *RemoteError) Error() string { return e.Message }

// Is makes a 404 match ErrNotFound, a 400 ErrInvalid and a 409
// ErrChanged.
func (e *RemoteError) Is(target error) bool {
	switch e.Status {
	case http.StatusNotFound:
		return target == ErrNotFound
	case http.StatusBadRequest:
		return target == ErrInvalid
	case http.StatusConflict:
		return target == ErrChanged
	}
	return false
}

// Find returns a client for the mount at mountDir, or for the only mount
// running when mountDir is empty, looking in dirs (Dirs) and trusting only
// what is the user's own (trust.go). Registrations of daemons that are
// gone are removed on the way. Given mountDir, when no registration names
// it, Find asks the mount itself where its endpoint is
// (<mountDir>/.skillfs/control.json, read with a timeout) and checks that
// endpoint the same way. What Find skipped is in the error, or in the
// client's Skipped.
func Find(dirs []string, mountDir string) (*Client, error) {
	live, skips := running(dirs)
	var want string
	if mountDir != "" {
		abs, err := filepath.Abs(mountDir)
		if err != nil {
			return nil, err
		}
		want = canonical(abs)
	}
	var paths []string
	for _, r := range live {
		paths = append(paths, r.Mountpoint)
		if want != "" && canonical(r.Mountpoint) == want {
			return newClient(r, skips), nil
		}
	}
	slices.Sort(paths)
	if want != "" {
		r, err := fromMount(mountDir, want)
		switch {
		case err == nil:
			return newClient(r, skips), nil
		case !errors.Is(err, errNoControlFile):
			return nil, withSkips(err, skips)
		}
	}
	switch {
	case want != "" && len(live) == 0:
		return nil, withSkips(fmt.Errorf("no skillfs mount is running at %s (start one with `skillfs mount %s`): %w", mountDir, mountDir, ErrNoMount), skips)
	case want != "":
		return nil, withSkips(fmt.Errorf("no skillfs mount is running at %s (running: %s)", mountDir, strings.Join(paths, ", ")), skips)
	case len(live) == 0:
		return nil, withSkips(ErrNoMount, skips)
	case len(live) > 1:
		return nil, withSkips(fmt.Errorf("%d skillfs mounts are running (%s): choose one with --mount DIR", len(live), strings.Join(paths, ", ")), skips)
	}
	return newClient(live[0], skips), nil
}

// withSkips adds to err what Find did not trust, one line each.
func withSkips(err error, skips []Skip) error {
	if len(skips) == 0 {
		return err
	}
	var b strings.Builder
	for _, s := range skips {
		b.WriteString("\n  skipped " + s.String())
	}
	return fmt.Errorf("%w%s", err, b.String())
}

func running(dirs []string) ([]registration, []Skip) {
	var out []registration
	var skips []Skip
	seen := map[string]bool{}
	for _, dir := range dirs {
		dir = filepath.Clean(dir)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		rs, ss := scanDir(dir)
		out = append(out, rs...)
		skips = append(skips, ss...)
	}
	return out, skips
}

// canonical is p with the symbolic links of its parent resolved (the
// mountpoint itself is not touched: a hung mount must not hang a client).
func canonical(p string) string {
	p = filepath.Clean(p)
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(dir, filepath.Base(p))
	}
	return p
}

func newClient(r registration, skips []Skip) *Client {
	sock, pid := r.Socket, r.PID
	tr := &http.Transport{
		// Every connection is checked again: the socket's path is only a
		// name, the process answering on it is what counts.
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialOurs(ctx, sock, pid)
		},
		DisableKeepAlives: true,
	}
	return &Client{Mountpoint: r.Mountpoint, PID: r.PID, Socket: sock, Started: r.Started, Skipped: skips, http: &http.Client{Transport: tr}}
}

// ErrNoAnswer is what a call returns when the mount did not answer within
// its deadline: a daemon that is stopped or wedged.
var ErrNoAnswer = errors.New("the mount does not answer")

// callTimeout bounds a call whose context has no deadline of its own, so
// that no command waits for ever on a wedged daemon: the calls that may
// wait on a server (a skills/get, a review's fetches, an approval's kernel
// notices, a reload) get minutes, the others seconds.
func callTimeout(endpoint string) time.Duration {
	switch endpoint {
	case "approve", "revoke", "get", "review", "reload":
		return 5 * time.Minute
	}
	return 15 * time.Second
}

// call posts req to the endpoint and decodes the answer into resp, within
// ctx's deadline or callTimeout.
func (c *Client) call(ctx context.Context, endpoint string, req, resp any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout(endpoint))
		defer cancel()
	}
	err := c.post(ctx, endpoint, req, resp)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &noAnswer{fmt.Sprintf("the mount at %s does not answer (pid %d gave no answer to %s in time); if it stays so, unmount it with `skillfs unmount --lazy %s` and mount again",
			c.Mountpoint, c.PID, endpoint, c.Mountpoint)}
	}
	return err
}

type noAnswer struct{ msg string }

func (e *noAnswer) Error() string { return e.msg }
func (e *noAnswer) Is(target error) bool {
	return target == ErrNoAnswer || target == context.DeadlineExceeded
}

func (c *Client) post(ctx context.Context, endpoint string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://skillfs/v1/"+endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(hr)
	if err != nil {
		return fmt.Errorf("ask the mount at %s: %w", c.Mountpoint, err)
	}
	defer res.Body.Close()
	b, err := readAnswer(res)
	if err != nil {
		return fmt.Errorf("ask the mount at %s: %w", c.Mountpoint, err)
	}
	if res.StatusCode != http.StatusOK {
		var eb errorBody
		if json.Unmarshal(b, &eb) != nil || eb.Error == "" {
			eb.Error = fmt.Sprintf("the mount at %s answered %s", c.Mountpoint, res.Status)
		}
		return &RemoteError{Status: res.StatusCode, Message: eb.Error}
	}
	if err := json.Unmarshal(b, resp); err != nil {
		if len(b) == maxAnswerRead {
			return fmt.Errorf("the mount at %s answered more than %d bytes, which is more than this client reads", c.Mountpoint, maxAnswerRead)
		}
		return fmt.Errorf("the mount at %s answered: %w", c.Mountpoint, err)
	}
	if h := res.Header.Get(TruncatedHeader); h != "" {
		return &TruncatedError{Mountpoint: c.Mountpoint, Omitted: h}
	}
	return nil
}

// maxAnswerRead is the most of an answer the client reads: twice what a
// mount sends (MaxAnswerBytes).
const maxAnswerRead = 2 * MaxAnswerBytes

// readAnswer reads at most maxAnswerRead bytes of res's body. A body whose
// length the mount declared (writeJSON does) is read into one buffer of
// that size rather than grown as it comes, which for a list answer of many
// MiB would copy and allocate it about twice over.
func readAnswer(res *http.Response) ([]byte, error) {
	r := io.LimitReader(res.Body, maxAnswerRead)
	if n := res.ContentLength; n > 0 && n <= maxAnswerRead {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(r)
}

// TruncatedError is returned with the answer it describes: a list the
// mount cut at MaxAnswerBytes. What was decoded is valid, and short.
type TruncatedError struct {
	Mountpoint string
	Omitted    string // "OMITTED of TOTAL"
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("the answer of the mount at %s is capped at %d bytes: %s items are left out; ask for one server (LABEL) to see more of it", e.Mountpoint, MaxAnswerBytes, e.Omitted)
}

// Status reports the mount and every server.
func (c *Client) Status(ctx context.Context) (StatusReport, error) {
	var r StatusReport
	return r, c.call(ctx, "status", struct{}{}, &r)
}

// Skills lists every skill, or those of one server.
func (c *Client) Skills(ctx context.Context, label string) ([]SkillInfo, error) {
	var r []SkillInfo
	return r, c.call(ctx, "skills", labelRequest{Origin: label}, &r)
}

// Inspect describes one skill.
func (c *Client) Inspect(ctx context.Context, ref SkillRef) (Inspection, error) {
	var r Inspection
	return r, c.call(ctx, "inspect", ref, &r)
}

// ShowSkillMD returns the verified bytes of a skill's SKILL.md.
func (c *Client) ShowSkillMD(ctx context.Context, ref SkillRef) ([]byte, error) {
	var r showResponse
	return r.Content, c.call(ctx, "show", ref, &r)
}

// Pending lists the skills waiting for approval.
func (c *Client) Pending(ctx context.Context) ([]Pending, error) {
	var r []Pending
	return r, c.call(ctx, "pending", struct{}{}, &r)
}

// Approve approves skills, each only if the mount still holds the entry
// whose digest is its ref's Binding (see vfs.Consent.Approve). all is the
// label of `approve --all`, refs then being its pending skills as listed.
// An error that Is ErrChanged: a skill changed since it was shown and
// nothing was approved.
func (c *Client) Approve(ctx context.Context, refs []SkillRef, all string) ([]SkillInfo, error) {
	var r []SkillInfo
	return r, c.call(ctx, "approve", approveRequest{Refs: refs, All: all}, &r)
}

// Revoke removes approvals.
func (c *Client) Revoke(ctx context.Context, refs []SkillRef) ([]SkillInfo, error) {
	var r []SkillInfo
	return r, c.call(ctx, "revoke", refsRequest{Refs: refs}, &r)
}

// Get confirms an unlisted skill and adds it to the tree.
func (c *Client) Get(ctx context.Context, label, uri string) (SkillInfo, error) {
	var r SkillInfo
	return r, c.call(ctx, "get", getRequest{Origin: label, URI: uri}, &r)
}
