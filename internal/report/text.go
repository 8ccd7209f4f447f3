// Package report writes what the commands print for a person: the tables
// and reviews of what a mount's control socket answers (status, list,
// inspect, pending, approve), with every piece of server text made visible
// and bounded (Cell), so that nothing a server sends acts on the terminal
// or passes for a line of skillfs's own.
package report

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/skillfs/skillfs/internal/control"
)

// NewTable is a table of the commands' style: columns two spaces apart.
func NewTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// Cell renders text from a server for one table cell or line: hidden
// characters, tabs and newlines in the <U+XXXX> notation, cut to max runes.
func Cell(s string, max int) string {
	if s == "" {
		return "-"
	}
	v := control.Visible([]byte(s))
	v = strings.NewReplacer("\t", "<U+0009>", "\n", "<U+000A>").Replace(v)
	if max > 0 && utf8.RuneCountInString(v) > max {
		v = string([]rune(v)[:max-1]) + "…"
	}
	return v
}

// List is ss as one cell: each made visible, joined by commas; "-" for
// none.
func List(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Cell(s, 0)
	}
	return strings.Join(out, ",")
}

// HumanBytes is n bytes for a person: 512 B, 1.5 KiB, 3.2 GiB.
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// YesNo is b as yes or no.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// plainWord is a word ShellJoin shows as it is.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// ShellJoin writes a command line a user can read unambiguously: words
// with spaces or quotes are quoted.
func ShellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if plainWord.MatchString(w) {
			out[i] = w
		} else {
			out[i] = fmt.Sprintf("%q", w)
		}
	}
	return strings.Join(out, " ")
}

// Plural is n and noun, in the plural unless n is 1: "1 server", "3 skills".
func Plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
