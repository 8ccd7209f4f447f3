package integrate

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// The marker lines of a block skillfs writes in a Markdown file.
const (
	blockBegin = "<!-- skillfs:begin: added by `skillfs integrate %s`; remove with `skillfs integrate %s --remove` -->"
	blockEnd   = "<!-- skillfs:end -->"
)

// The marker lines of a block skillfs writes in a TOML file (comments).
const (
	tomlBegin = "# skillfs:begin: added by `skillfs integrate %s`; remove with `skillfs integrate %s --remove`"
	tomlEnd   = "# skillfs:end"
)

// marks are a kind of file's marker lines: begin has two %s, the host.
type marks struct{ begin, end string }

var (
	markdownMarks = marks{blockBegin, blockEnd}
	tomlMarks     = marks{tomlBegin, tomlEnd}
)

// Mark is the line that says a block or file is skillfs's.
func Mark(host string) string { return fmt.Sprintf(blockBegin, host, host) }

// Block is the marked block with body, newline-terminated.
func Block(host, body string) string { return markdownMarks.block(host, body) }

func (m marks) block(host, body string) string {
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return fmt.Sprintf(m.begin, host, host) + "\n" + body + m.end + "\n"
}

// withBlock is cur with every block of skillfs's taken out and, when
// want, one block of body where the first was (or at the end, after a
// blank line).
func withBlock(cur []byte, host, body string, want bool) []byte {
	return markdownMarks.withBlock(cur, host, body, want)
}

func (m marks) withBlock(cur []byte, host, body string, want bool) []byte {
	out := slices.Clone(cur)
	at := -1
	for {
		i, j, ok := m.find(out)
		if !ok {
			break
		}
		if at < 0 {
			at = i
		}
		// The blank line a write put before the block goes with it,
		// unless another block takes its place.
		if !want && i >= 2 && out[i-1] == '\n' && out[i-2] == '\n' {
			i--
		}
		out = slices.Concat(out[:i], out[j:])
	}
	if !want {
		return out
	}
	block := []byte(m.block(host, body))
	if at >= 0 {
		return slices.Concat(out[:at], block, out[at:])
	}
	if len(out) > 0 {
		if !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
		out = append(out, '\n')
	}
	return append(out, block...)
}

// findBlock finds a marked block of skillfs's: from its begin line to the
// end of its end line.
func findBlock(b []byte) (int, int, bool) { return markdownMarks.find(b) }

func (m marks) find(b []byte) (int, int, bool) {
	prefix := []byte(strings.SplitN(m.begin, "%s", 2)[0])
	for off := 0; ; {
		k := bytes.Index(b[off:], prefix)
		if k < 0 {
			return 0, 0, false
		}
		i := off + k
		if i > 0 && b[i-1] != '\n' {
			off = i + len(prefix)
			continue
		}
		e := bytes.Index(b[i:], []byte("\n"+m.end))
		if e < 0 {
			return 0, 0, false
		}
		j := i + e + 1 + len(m.end)
		if j < len(b) && b[j] == '\n' {
			j++
		}
		return i, j, true
	}
}
