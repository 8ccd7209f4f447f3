package mountd

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/exitcode"
	"github.com/skillfs/skillfs/internal/vfs"
)

func TestLiveSummary(t *testing.T) {
	notFound := `session: could not start a session: connect: command "acme-mcp" not found`
	for _, tc := range []struct {
		name    string
		origins []vfs.OriginStatus
		want    string
	}{
		{"the issue's example", []vfs.OriginStatus{
			{Label: "a", State: "connected", Skills: 40},
			{Label: "b", State: "connected", Skills: 1},
			{Label: "acme", State: "failed-to-start", LastError: notFound},
		}, `3 servers, 2 connected (41 skills), 1 failed: acme: command "acme-mcp" not found`},
		{"every server failed", []vfs.OriginStatus{
			{Label: "acme", State: "failed-to-start", LastError: notFound},
		}, `1 server, none connected, 1 failed: acme: command "acme-mcp" not found`},
		{"every state", []vfs.OriginStatus{
			{Label: "a", State: "connected", Skills: 1},
			{Label: "b", State: "no-skills"},
			{Label: "c", State: "connecting"},
			{Label: "d", State: "offline", LastError: "session: EOF\nmore"},
			{Label: "e", State: "failed-to-start"},
		}, "5 servers, 1 connected (1 skill), 1 without the skills extension, 1 still connecting, 1 offline: d: EOF, 1 failed: e: no reason given"},
		{"failed, and connecting again", []vfs.OriginStatus{
			{Label: "acme", State: "connecting", FailedStarts: 2, LastError: notFound},
		}, `1 server, none connected, 1 failed: acme: command "acme-mcp" not found`},
		{"gave up", []vfs.OriginStatus{
			{Label: "acme", State: "gave-up", FailedStarts: 10, LastError: notFound + " (failed to start 10 times in a row; not retrying until SIGHUP or a change to this server's entry)"},
		}, `1 server, none connected, 1 failed: acme: gave up after 10 failed starts (SIGHUP tries again): command "acme-mcp" not found`},
		{"only a server without skills", []vfs.OriginStatus{
			{Label: "b", State: "no-skills"},
		}, "1 server, 1 without the skills extension"},
	} {
		if got := LiveSummary(vfs.Status{Origins: tc.origins}); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestShortReasonIsOneBoundedLine(t *testing.T) {
	got := shortReason("list: " + strings.Repeat("x", 500) + "\nsecond line")
	if strings.Contains(got, "\n") || len([]rune(got)) != maxReason || !strings.HasSuffix(got, "…") {
		t.Errorf("shortReason = %q (%d runes)", got, len([]rune(got)))
	}
}

func TestRequireAll(t *testing.T) {
	listed := time.Now()
	st := vfs.Status{Origins: []vfs.OriginStatus{
		{Label: "ok", State: "connected"},
		{Label: "was-up", State: "offline", ListedAt: listed, LastError: "session: EOF"},
		{Label: "slow", State: "connecting"},
	}}
	retrying := st
	retrying.Origins = append(slices.Clone(st.Origins), vfs.OriginStatus{Label: "retry", State: "connecting", FailedStarts: 1, LastError: "session: could not start a session: connect: refused"})
	if err := requireAll(Options{RequireAll: true}, retrying); err == nil || !strings.Contains(err.Error(), "retry: refused") {
		t.Errorf("requireAll with a server that failed and is connecting again = %v, want it named", err)
	}
	if err := requireAll(Options{RequireAll: true}, st); err != nil {
		t.Errorf("requireAll with no failed server: %v", err)
	}
	st.Origins = append(st.Origins, vfs.OriginStatus{Label: "never", State: "offline", LastError: "session: EOF"},
		vfs.OriginStatus{Label: "broken", State: "failed-to-start", LastError: `session: could not start a session: connect: command "x" not found`})
	if err := requireAll(Options{}, st); err != nil {
		t.Errorf("without --require-all: %v", err)
	}
	err := requireAll(Options{RequireAll: true}, st)
	if exitcode.Of(err) != exitcode.Servers {
		t.Fatalf("requireAll = %v, want exit code %d", err, exitcode.Servers)
	}
	want := `--require-all: 2 of 5 servers did not start: never: EOF; broken: command "x" not found`
	if err.Error() != want {
		t.Errorf("requireAll:\n got %s\nwant %s", err, want)
	}
}

func TestInert(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, two\nlines":           "plain text, two\nlines",
		"\x1b[31mred\a\x1b]0;t\a":          "<U+001B>[31mred<U+0007><U+001B>]0;t<U+0007>",
		"c1 \u009b2J bidi \u202Eevil\tx\r": "c1 <U+009B>2J bidi <U+202E>evil<U+0009>x<U+000D>",
		"raw \x9b byte, é kept":            "raw <0x9B> byte, é kept",
	} {
		if got := control.Inert(in); got != want {
			t.Errorf("control.Inert(%q) = %q, want %q", in, got, want)
		}
	}
	if got := shortReason("connect: \x1b[2Kfake\nsecond line"); got != "<U+001B>[2Kfake" {
		t.Errorf("shortReason = %q", got)
	}
}
