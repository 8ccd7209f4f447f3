package hostile

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/skill"
)

var errStopped = errors.New("hostile: the server is stopping")

// SlowReadDelay is how long slow-read's SKILL.md takes to arrive.
const SlowReadDelay = time.Second

// methodRead is the base protocol's read; the SEP-2640 methods are
// package skill's.
const methodRead = "resources/read"

// go-sdk's wrappers around the SEP-2640 shapes of package skill: the
// well-formed shapes are the shared ones, what misbehaves is built by hand.

type listParams struct {
	mcp.ParamsBase
	skill.ListParams
}

// listResult keeps "skills" raw, shadowing the shared shape's field (the
// shallower field wins in encoding/json): malformed-list sends an object
// there, and entries that no Go type would produce.
type listResult struct {
	mcp.ResultBase
	skill.ListResult[json.RawMessage]
	Skills json.RawMessage `json:"skills"`
}

type getParams struct {
	mcp.ParamsBase
	skill.GetParams
}

type getResult struct {
	mcp.ResultBase
	skill.GetResult[skill.Entry]
}

type readDirParams struct {
	mcp.ParamsBase
	skill.ReadDirParams
}

type readDirResult struct {
	mcp.ResultBase
	skill.ReadDirResult[skill.DirChild]
}

// readResult replaces go-sdk's ReadResourceResult, whose typed contents
// could not carry invalid base64 or text and blob at once.
type readResult struct {
	mcp.ResultBase
	ResultType string            `json:"resultType,omitempty"`
	Contents   []json.RawMessage `json:"contents"`
	TTLMs      *int64            `json:"ttlMs,omitempty"`
	CacheScope string            `json:"cacheScope,omitempty"`
}

func (s *Server) addMethods() error {
	if err := mcp.AddReceivingCustomMethod(s.mcp, skill.MethodList, s.listSkills); err != nil {
		return fmt.Errorf("register %s: %w", skill.MethodList, err)
	}
	if err := mcp.AddReceivingCustomMethod(s.mcp, skill.MethodGet, s.getSkill); err != nil {
		return fmt.Errorf("register %s: %w", skill.MethodGet, err)
	}
	if err := mcp.AddReceivingCustomMethod(s.mcp, skill.MethodReadDir, s.readDir); err != nil {
		return fmt.Errorf("register %s: %w", skill.MethodReadDir, err)
	}
	return nil
}

// receive runs before go-sdk's handlers: it logs the request, re-reads the
// state file, and answers resources/read itself (go-sdk's would refuse
// the URIs the fixtures need and could not send malformed contents).
func (s *Server) receive(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		s.logAccess(method, req.GetParams())
		s.logCaps(method, req)
		s.loadState()
		if method == methodRead {
			if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && p != nil {
				return s.readResource(ctx, p)
			}
		}
		return next(ctx, method, req)
	}
}

// newProtocol reports whether a request speaks the 2026-07-28 protocol,
// whose results carry resultType and the list-caching attributes.
func newProtocol(meta mcp.Meta) bool {
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}

func invalidParams(uri, format string, args ...any) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...), Data: data}
}

// Cursors are readable on purpose (a test's access log shows them):
// "list:N" resumes the catalog at N; "endless:K", "bulk" and
// "malformed:object" are the modes' tail pages; "dir:N" and
// "dir-endless:K" page directory reads.

func (s *Server) listSkills(_ context.Context, _ *mcp.ServerSession, p *listParams) (*listResult, error) {
	if p == nil {
		p = &listParams{}
	}
	page, next, err := s.listPage(p.Cursor)
	if err != nil {
		return nil, err
	}
	res := &listResult{Skills: page}
	res.NextCursor = next
	if newProtocol(p.Meta) {
		zero := int64(0)
		res.ResultType, res.TTLMs, res.CacheScope = skill.ResultComplete, &zero, s.cacheScope()
	}
	return res, nil
}

func (s *Server) listPage(cursor string) (json.RawMessage, string, error) {
	bad := func() (json.RawMessage, string, error) {
		return nil, "", invalidParams("", "invalid cursor %q", cursor)
	}
	switch {
	case cursor == "" || strings.HasPrefix(cursor, "list:"):
		off := 0
		if cursor != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(cursor, "list:"))
			if err != nil || n <= 0 || n >= len(s.skills) {
				return bad()
			}
			off = n
		}
		end := min(off+s.opts.PageSize, len(s.skills))
		var entries []json.RawMessage
		ph := s.currentPhase()
		for _, d := range s.skills[off:end] {
			if d.fixture == ModeEscapeCrowd {
				entries = append(entries, marshalRaw(d.entry(ph, false)))
				continue
			}
			entries = append(entries, marshalEntry(d.entry(ph, false)))
		}
		if off == 0 && s.opts.Mode == ModeMalformedList {
			entries = interleave(malformed(), entries)
			s.log.Info("misbehaving", "op", skill.MethodList, "err", "malformed entries in the first page")
		}
		next := ""
		switch {
		case end < len(s.skills):
			next = "list:" + strconv.Itoa(end)
		case s.opts.Mode == ModeEndlessList:
			next = "endless:1"
		case s.opts.Mode == ModeHugeListPage:
			next = "bulk"
		case s.opts.Mode == ModeMalformedList:
			next = "malformed:object"
		case s.opts.Mode == ModeHeavyList:
			next = "heavy:1"
		}
		return joinArray(entries), next, nil
	case strings.HasPrefix(cursor, "endless:") && s.opts.Mode == ModeEndlessList:
		k, err := strconv.Atoi(strings.TrimPrefix(cursor, "endless:"))
		if err != nil || k <= 0 || k > 1e8 {
			return bad()
		}
		entries := []json.RawMessage{
			marshalEntry(generatedSkill("endless", 2*k-2).entry("", false)),
			marshalEntry(generatedSkill("endless", 2*k-1).entry("", false)),
		}
		return joinArray(entries), "endless:" + strconv.Itoa(k+1), nil
	case strings.HasPrefix(cursor, "heavy:") && s.opts.Mode == ModeHeavyList:
		k, err := strconv.Atoi(strings.TrimPrefix(cursor, "heavy:"))
		if err != nil || k <= 0 || k > 1e6 {
			return bad()
		}
		return s.heavyPage(k), "heavy:" + strconv.Itoa(k+1), nil
	case cursor == "bulk" && s.opts.Mode == ModeHugeListPage:
		s.log.Info("misbehaving", "op", skill.MethodList, "err", "a huge page")
		return s.bulkPage(), "", nil
	case cursor == "malformed:object" && s.opts.Mode == ModeMalformedList:
		s.log.Info("misbehaving", "op", skill.MethodList, "err", "skills is an object")
		return json.RawMessage(`{"skill://honest-a/SKILL.md":{"note":"skills must be an array"}}`), "", nil
	}
	return bad()
}

// marshalEntry renders e as json.Marshal does. It calls MarshalJSON
// itself: json.Marshal would only check and copy its bytes, compact and
// HTML-escaped already, which for the MiBs of a heavy or huge page is
// much of the cost of serving it.
func marshalEntry(e skill.Entry) json.RawMessage {
	b, err := e.MarshalJSON()
	if err != nil {
		// Every entry is built by this package from strings and numbers.
		panic(fmt.Sprintf("hostile: marshal entry %s: %v", e.URI, err))
	}
	return b
}

// marshalRaw is marshalEntry without HTML escaping: '<', '>' and '&' are
// one byte each on the wire (escape-crowd), as JSON allows.
func marshalRaw(e skill.Entry) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		panic(fmt.Sprintf("hostile: marshal entry %s: %v", e.URI, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// interleave puts a malformed entry before each honest one, so that a host
// that gives up at the first bad entry loses honest ones.
func interleave(bad []MalformedEntry, good []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for i := 0; i < max(len(bad), len(good)); i++ {
		if i < len(bad) {
			out = append(out, bad[i].JSON)
		}
		if i < len(good) {
			out = append(out, good[i])
		}
	}
	return out
}

func joinArray(entries []json.RawMessage) json.RawMessage {
	if len(entries) == 0 {
		return json.RawMessage("[]")
	}
	b := []byte{'['}
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

// bulkPage renders the huge page, generated on every request.
func (s *Server) bulkPage() json.RawMessage {
	count := s.bulkCount()
	b := make([]byte, 0, count*bulkEntry*5/4)
	b = append(b, '[')
	for n := range count {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, marshalEntry(generatedSkill("bulk", n).entry("", false))...)
	}
	return append(b, ']')
}

func (s *Server) getSkill(_ context.Context, _ *mcp.ServerSession, p *getParams) (*getResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("", "skills/get needs params.uri")
	}
	d := s.byURI[p.URI]
	if d == nil {
		d = s.generatedFor(p.URI)
	}
	if d == nil || d.uri != p.URI {
		if s.opts.Mode == ModeTerminalEscapes {
			return nil, escapesError()
		}
		return nil, invalidParams(p.URI, "%s is not the SKILL.md of a skill this server serves", p.URI)
	}
	res := &getResult{}
	res.Skill = d.entry(s.currentPhase(), true)
	if newProtocol(p.Meta) {
		res.ResultType = skill.ResultComplete
		if s.opts.GetCacheScope != "" {
			zero := int64(0)
			res.TTLMs, res.CacheScope = &zero, s.opts.GetCacheScope
		}
	}
	return res, nil
}

func (s *Server) readDir(_ context.Context, _ *mcp.ServerSession, p *readDirParams) (*readDirResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("", "resources/directory/read needs params.uri")
	}
	children, ok := s.dirs[p.URI]
	if !ok {
		if s.files[p.URI] != nil {
			return nil, invalidParams(p.URI, "%s is a file, not a directory", p.URI)
		}
		return nil, invalidParams(p.URI, "no directory %s", p.URI)
	}
	res := &readDirResult{}
	if d := s.byURI[p.URI+"/SKILL.md"]; d != nil && d.endlessDir {
		k := 0
		if p.Cursor != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(p.Cursor, "dir-endless:"))
			if !strings.HasPrefix(p.Cursor, "dir-endless:") || err != nil || n <= 0 {
				return nil, invalidParams(p.URI, "invalid cursor %q", p.Cursor)
			}
			k = n
		}
		s.log.Info("misbehaving", "op", skill.MethodReadDir, "uri", p.URI, "err", "endless cursor")
		res.Resources = dirResources(children)
		res.NextCursor = "dir-endless:" + strconv.Itoa(k+1)
	} else {
		off := 0
		if p.Cursor != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(p.Cursor, "dir:"))
			if !strings.HasPrefix(p.Cursor, "dir:") || err != nil || n <= 0 || n >= len(children) {
				return nil, invalidParams(p.URI, "invalid cursor %q", p.Cursor)
			}
			off = n
		}
		end := min(off+s.opts.PageSize, len(children))
		res.Resources = dirResources(children[off:end])
		if end < len(children) {
			res.NextCursor = "dir:" + strconv.Itoa(end)
		}
	}
	if newProtocol(p.Meta) {
		zero := int64(0)
		res.ResultType, res.TTLMs, res.CacheScope = skill.ResultComplete, &zero, s.cacheScope()
	}
	return res, nil
}

func dirResources(children []dirChild) []skill.DirChild {
	out := make([]skill.DirChild, 0, len(children))
	for _, c := range children {
		r := skill.DirChild{URI: c.uri, Name: c.uri[strings.LastIndexByte(c.uri, '/')+1:], MIMEType: mimeOf(c.uri)}
		if c.dir {
			r.MIMEType = skill.MIMEDirectory
		}
		out = append(out, r)
	}
	return out
}

func mimeOf(uri string) string {
	switch {
	case strings.HasSuffix(uri, ".md"):
		return "text/markdown"
	case strings.HasSuffix(uri, ".txt"), strings.HasSuffix(uri, ".csv"), strings.HasSuffix(uri, ".sh"):
		return "text/plain"
	}
	return "application/octet-stream"
}

// contents renders one resource content as the honest server does: text
// for non-empty UTF-8, a blob otherwise (an empty text would vanish
// under omitempty in go-sdk's own type). The bytes are those
// json.Marshal writes for contentsMap's map; a text of the common kind
// (textLength) is written without it, into one buffer sized at once,
// because json.Marshal's copies and regrowths of the MiBs of the big
// fixtures cost a test more than the rest of serving them.
func contents(uri string, b []byte) json.RawMessage {
	n, ok := textLength(b)
	if !ok {
		return contentsMap(uri, b)
	}
	// The keys in encoding/json's order for a map: sorted.
	mime, _ := json.Marshal(mimeOf(uri))
	u, _ := json.Marshal(uri)
	out := make([]byte, 0, len(`{"mimeType":,"text":,"uri":}`)+len(mime)+n+len(u))
	out = append(out, `{"mimeType":`...)
	out = append(out, mime...)
	out = append(out, `,"text":`...)
	out = appendText(out, b)
	out = append(out, `,"uri":`...)
	out = append(out, u...)
	return append(out, '}')
}

// contentsMap is contents through json.Marshal, for any bytes.
func contentsMap(uri string, b []byte) json.RawMessage {
	c := map[string]any{"uri": uri, "mimeType": mimeOf(uri)}
	if len(b) > 0 && utf8.Valid(b) {
		c["text"] = string(b)
	} else {
		c["blob"] = base64.StdEncoding.EncodeToString(b)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("hostile: marshal contents of %s: %v", uri, err))
	}
	return raw
}

// textEscape[c] is, for an ASCII byte c, what follows the backslash when
// encoding/json escapes c as two bytes; 0 when c goes into a string as
// it is; 1 for the bytes it escapes otherwise (\u00XX, \u003c for <, >
// and &), which textLength leaves to contentsMap.
var textEscape = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		if c < ' ' {
			t[c] = 1
		}
	}
	t['<'], t['>'], t['&'] = 1, 1, 1
	t['"'], t['\\'] = '"', '\\'
	t['\n'], t['\r'], t['\t'] = 'n', 'r', 't'
	return t
}()

// textLength reports whether contents sends b as a text that appendText
// writes as encoding/json does: non-empty valid UTF-8 with no ASCII byte
// of textEscape's 1 and neither U+2028 nor U+2029. n is the length
// appendText writes.
func textLength(b []byte) (n int, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	n = len(b) + 2
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf {
			switch textEscape[c] {
			case 0:
			case 1:
				return 0, false
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return 0, false
		}
		i += size
	}
	return n, true
}

// appendText appends b, which textLength accepted, as a JSON string.
func appendText(out, b []byte) []byte {
	out = append(out, '"')
	out = appendTextBody(out, b)
	return append(out, '"')
}

// appendTextBody is appendText without the quotes, for a text in pieces.
func appendTextBody(out, b []byte) []byte {
	start := 0
	for i, c := range b {
		if c >= utf8.RuneSelf || textEscape[c] == 0 {
			continue
		}
		out = append(out, b[start:i]...)
		out = append(out, '\\', textEscape[c])
		start = i + 1
	}
	return append(out, b[start:]...)
}

// contentsBlocks is contents(uri, gen()) for a big file whose bytes
// blocks passes in pieces (file.blocks): a non-empty text of ASCII that
// textLength accepts, as generated files are, is written from two passes
// over the pieces without gen's buffer of the whole; anything else takes
// contents.
func contentsBlocks(uri string, blocks func(fn func([]byte)), gen func() []byte) json.RawMessage {
	n, ok := 2, true
	blocks(func(p []byte) {
		if !ok {
			return
		}
		for _, c := range p {
			if c >= utf8.RuneSelf || textEscape[c] == 1 {
				ok = false
				return
			}
			if textEscape[c] != 0 {
				n++
			}
		}
		n += len(p)
	})
	if !ok || n == 2 {
		return contents(uri, gen())
	}
	mime, _ := json.Marshal(mimeOf(uri))
	u, _ := json.Marshal(uri)
	out := make([]byte, 0, len(`{"mimeType":,"text":,"uri":}`)+len(mime)+n+len(u))
	out = append(out, `{"mimeType":`...)
	out = append(out, mime...)
	out = append(out, `,"text":"`...)
	blocks(func(p []byte) { out = appendTextBody(out, p) })
	out = append(out, `","uri":`...)
	out = append(out, u...)
	return append(out, '}')
}

func (s *Server) readResource(ctx context.Context, p *mcp.ReadResourceParams) (mcp.Result, error) {
	uri := p.URI
	res := &readResult{}
	if newProtocol(p.Meta) {
		zero := int64(0)
		res.ResultType, res.TTLMs, res.CacheScope = skill.ResultComplete, &zero, s.cacheScope()
	}
	if s.opts.Mode == ModeDieAfterList {
		res.Meta = mcp.Meta{dieKey: dieNow}
		res.Contents = []json.RawMessage{}
		return res, nil
	}
	f := s.files[uri]
	if f == nil {
		f = s.generatedFile(uri)
	}
	if f == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if f.read != Honest {
		s.log.Info("misbehaving", "op", methodRead, "uri", uri, "err", string(f.read))
	}
	if f.read == Honest && f.blocks != nil {
		res.Contents = []json.RawMessage{contentsBlocks(uri, f.blocks, f.gen)}
		return res, nil
	}
	b := f.gen()
	switch f.read {
	case Honest:
	case Tampered:
		b = bytes.Clone(b)
		b[0] ^= 1
	case Longer:
		b = append(bytes.Clone(b), "and more bytes than the listing declared\n"...)
	case Shorter:
		b = b[:len(b)/2]
	case Rotated:
		if n := f.reads.Add(1); n > 1 {
			// Never 000000 again: every later read differs from the first.
			r := 1 + int(n-2)%999999
			b = bytes.Replace(b, []byte("rotation 000000"), appendPadded([]byte("rotation "), r, 6), 1)
		}
	case Phased:
		if ph := s.currentPhase(); ph == "b" || ph == "c" {
			b = f.alt.gen()
		}
	case Restarted:
		if s.currentPhase() == "new" {
			b = f.alt.gen()
		}
	case SwappedInB, RefusedThenSwapped:
		switch ph := s.currentPhase(); {
		case ph == "b":
			b = f.alt.gen()
		case f.read == RefusedThenSwapped:
			return nil, fmt.Errorf("%s is not served now", uri)
		}
	case DiesWhenDying:
		if s.currentPhase() == "dying" {
			// The server that comes back must find phase "new": the
			// supervisor restarts the command within a second, which on
			// a loaded machine can be before a test's own write of it.
			if err := WriteState(s.opts.StateFile, State{Phase: "new"}); err != nil {
				s.log.Warn("move the state file to phase new", "op", methodRead, "err", err)
			}
			res.Meta = mcp.Meta{dieKey: dieHalf}
		}
	case Slow:
		select {
		case <-time.After(SlowReadDelay):
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-stopped(ctx):
			return nil, errStopped
		}
	case ErrorEscapes:
		return nil, escapesError()
	case Hang:
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-stopped(ctx):
			return nil, errStopped
		}
	case Die:
		res.Meta = mcp.Meta{dieKey: dieHalf}
	case BadBase64:
		raw, _ := json.Marshal(map[string]string{"uri": uri, "mimeType": mimeOf(uri), "blob": "@@ this is not base64 @@"})
		res.Contents = []json.RawMessage{raw}
		return res, nil
	case WrongURI:
		res.Contents = []json.RawMessage{contents(strings.TrimSuffix(uri, "other-uri.md")+"elsewhere.md", b)}
		return res, nil
	case TwoContents:
		res.Contents = []json.RawMessage{contents(uri, b), contents(uri, b)}
		return res, nil
	case HugeText:
		huge := func(fn func([]byte)) { fillerBlocks(uri, MalformedHugeTextSize, fn) }
		res.Contents = []json.RawMessage{contentsBlocks(uri, huge, func() []byte { return filler(uri, MalformedHugeTextSize) })}
		return res, nil
	case TextAndBlob:
		raw, _ := json.Marshal(map[string]string{"uri": uri, "mimeType": mimeOf(uri), "text": string(b), "blob": base64.StdEncoding.EncodeToString(b)})
		res.Contents = []json.RawMessage{raw}
		return res, nil
	}
	res.Contents = []json.RawMessage{contents(uri, b)}
	return res, nil
}

// cacheScope is the cacheScope results carry (Options.CacheScope).
func (s *Server) cacheScope() string {
	switch s.opts.CacheScope {
	case "":
		return skill.ScopePrivate
	case "none":
		return ""
	}
	return s.opts.CacheScope
}
