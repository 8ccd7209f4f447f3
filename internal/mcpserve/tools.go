package mcpserve

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listInput struct {
	Path   string `json:"path" jsonschema:"a directory of the skills tree, as in the catalog: LABEL/skill (\"\" is the root, which names the servers and .skillfs)"`
	Offset int    `json:"offset,omitempty" jsonschema:"the first entry to show (0-based), for a directory of more than 200 entries"`
}

type readInput struct {
	Path   string `json:"path" jsonschema:"a file of the skills tree, as in the catalog: LABEL/skill/SKILL.md"`
	Offset int64  `json:"offset,omitempty" jsonschema:"the first byte to return (0-based), for a file over 256 KiB"`
	Length int64  `json:"length,omitempty" jsonschema:"how many bytes to return (at most and by default 262144)"`
}

func (s *Server) addTools() {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(bool)}
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolList,
		Title:       "List skill files",
		Description: "List a directory of the verified skills tree that skillfs serves (the servers' skills, by server label). Directories end with /, files show their size. At most 200 entries per call.",
		Annotations: ro,
	}, s.list)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        ToolRead,
		Title:       "Read a skill file",
		Description: "Read a file of the verified skills tree that skillfs serves, e.g. LABEL/skill/SKILL.md: the exact bytes its server published, checked against the server's digest. Nothing is executed. At most 256 KiB per call (offset and length page through larger files).",
		Annotations: ro,
	}, s.read)
}

func (s *Server) list(ctx context.Context, _ *mcp.CallToolRequest, in listInput) (*mcp.CallToolResult, any, error) {
	p, err := s.clean(in.Path)
	if err != nil {
		return toolError(err.Error()), nil, nil
	}
	if in.Offset < 0 {
		return toolError("offset must not be negative"), nil, nil
	}
	ents, err := s.tree.ReadDir(ctx, p)
	if err != nil {
		return s.failed(ToolList, p, err), nil, nil
	}
	var b strings.Builder
	shown := ents[min(in.Offset, len(ents)):]
	more := 0
	if len(shown) > MaxListEntries {
		more = len(shown) - MaxListEntries
		shown = shown[:MaxListEntries]
	}
	fmt.Fprintf(&b, "%s: %d entries\n", display(p), len(ents))
	for _, e := range shown {
		switch {
		case e.Dir:
			b.WriteString(safeName(e.Name) + "/\n")
		case e.Size >= 0:
			fmt.Fprintf(&b, "%s (%d bytes)\n", safeName(e.Name), e.Size)
		default:
			fmt.Fprintf(&b, "%s (size not known until read)\n", safeName(e.Name))
		}
	}
	if more > 0 {
		fmt.Fprintf(&b, "[skillfs: %d more entries not shown; call %s with offset=%d for the next ones]\n", more, ToolList, in.Offset+MaxListEntries)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, nil, nil
}

func (s *Server) read(ctx context.Context, _ *mcp.CallToolRequest, in readInput) (*mcp.CallToolResult, any, error) {
	p, err := s.clean(in.Path)
	if err != nil {
		return toolError(err.Error()), nil, nil
	}
	if in.Offset < 0 || in.Length < 0 {
		return toolError("offset and length must not be negative"), nil, nil
	}
	if p == "" {
		return s.failed(ToolRead, p, ErrIsDir), nil, nil
	}
	b, err := s.tree.ReadFile(ctx, p)
	if err != nil {
		return s.failed(ToolRead, p, err), nil, nil
	}
	size := int64(len(b))
	off := min(in.Offset, size)
	n := in.Length
	if n == 0 || n > MaxReadBytes {
		n = MaxReadBytes
	}
	end := min(off+n, size)
	text := isText(b)
	if text {
		// A chunk ends on a character boundary, so that the next one
		// starts on one too and each is valid text.
		for end > off && end < size && !utf8.RuneStart(b[end]) {
			end--
		}
	}
	chunk := b[off:end]
	var content []mcp.Content
	if text {
		content = append(content, &mcp.TextContent{Text: string(chunk)})
	} else {
		content = append(content,
			&mcp.TextContent{Text: fmt.Sprintf("[skillfs: %s is not UTF-8 text (%d bytes); bytes %d to %d follow, base64-encoded]", display(p), size, off, end)},
			&mcp.TextContent{Text: base64.StdEncoding.EncodeToString(chunk)})
	}
	if off > 0 || end < size {
		note := fmt.Sprintf("[skillfs: bytes %d to %d of %d of %s", off, end, size, display(p))
		if end < size {
			note += fmt.Sprintf("; call %s with offset=%d for the rest", ToolRead, end)
		}
		content = append(content, &mcp.TextContent{Text: note + "]"})
	}
	return &mcp.CallToolResult{Content: content}, nil, nil
}

// failed is the tool error for a Tree's failure at p.
func (s *Server) failed(tool, p string, err error) *mcp.CallToolResult {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return toolError(fmt.Sprintf("no such file or directory: %s (paths are as in the catalog, LABEL/skill/FILE; %s with path \"\" names the servers)", display(p), ToolList))
	case errors.Is(err, ErrNotDir):
		return toolError(fmt.Sprintf("not a directory: %s (read it with %s)", display(p), ToolRead))
	case errors.Is(err, ErrIsDir):
		return toolError(fmt.Sprintf("is a directory: %s (list it with %s)", display(p), ToolList))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return toolError(fmt.Sprintf("%s: %s: canceled before it was done", tool, display(p)))
	}
	s.log.Warn("tool call failed", "op", tool, "path", p, "err", err)
	return toolError(fmt.Sprintf("read failed: %s: %s; no unverified byte is ever returned", display(p), sanitize(err.Error(), maxErrorBytes)))
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// clean checks a path argument and returns it mount-relative: "" is the
// root. Paths are the mount's, relative; an absolute one is taken only
// under Options.Root.
func (s *Server) clean(p string) (string, error) {
	if len(p) > maxPathBytes {
		return "", fmt.Errorf("path of %d bytes: at most %d", len(p), maxPathBytes)
	}
	if root := strings.TrimSuffix(s.opts.Root, "/"); root != "" {
		if p == root {
			p = ""
		} else if rest, ok := strings.CutPrefix(p, root+"/"); ok {
			p = rest
		}
	}
	if p == "." || p == "/" {
		p = ""
	}
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return "", nil
	}
	if strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%s is absolute: paths are relative to the skills tree, as in the catalog (LABEL/skill/SKILL.md)", display(p))
	}
	if !utf8.ValidString(p) {
		return "", fmt.Errorf("%s is not valid UTF-8", display(p))
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return "", fmt.Errorf("%s has an empty name (//)", display(p))
		case seg == "." || seg == "..":
			return "", fmt.Errorf("%s has a %q name: paths are plain names below the tree's root", display(p), seg)
		case strings.ContainsFunc(seg, func(r rune) bool { return r == '\\' || unicode.IsControl(r) }):
			return "", fmt.Errorf("%s has a backslash or a control character", display(p))
		}
	}
	return p, nil
}

// display quotes a path for a message.
func display(p string) string {
	if p == "" {
		return `"" (the root)`
	}
	return strconv.Quote(p)
}

// safeName is a name as a listing shows it: as it is when every character
// is visible, quoted (with escapes) otherwise.
func safeName(n string) string {
	for _, r := range n {
		if !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) || r == '\n' {
			return strconv.QuoteToASCII(n)
		}
	}
	return n
}

// sanitize makes server-chosen text safe for a message: invisible and
// control characters in a visible notation, invalid bytes replaced, at
// most limit bytes.
func sanitize(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
		} else {
			b.WriteRune(r)
		}
		if b.Len() > limit {
			out := b.String()
			cut := limit
			for cut > 0 && !utf8.RuneStart(out[cut]) {
				cut--
			}
			return out[:cut] + "…"
		}
	}
	return b.String()
}

// isText reports whether b is UTF-8 text without NUL bytes.
func isText(b []byte) bool {
	return utf8.Valid(b) && !strings.ContainsRune(string(b), 0)
}
