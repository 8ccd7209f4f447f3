package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/config"
)

// TestInstructionsInServerFile: whatever a server's instructions hold,
// servers/LABEL.md stays within its bound, keeps room for skills, and
// renders them as exactly one code block (goldmark) holding at most
// MaxInstructions bytes, with a note when they are cut.
func TestInstructionsInServerFile(t *testing.T) {
	for _, c := range []struct {
		name, text string
		cut        bool
	}{
		{"plain", "Use skill://a/SKILL.md first.\nThen the tools.\n", false},
		{"markdown that tries to end the quote", "```\n# Heading\n</pre>\n~~~\n<!-- x -->\n````` more\n", false},
		{"a long run of backticks", strings.Repeat("`", 100_000), true},
		{"controls that grow when escaped", strings.Repeat("\x01", 100_000), true},
		{"CRLF and tabs", "a\r\n\tb\r\nc", false},
		{"exactly the cap", strings.Repeat("x", MaxInstructions-1) + "\n", false},
		{"one byte over the cap", strings.Repeat("x", MaxInstructions) + "\n", true},
	} {
		for _, max := range []int{config.DefaultIndexMaxBytes, config.MinIndexMaxBytes} {
			t.Run(fmt.Sprintf("%s/%d", c.name, max), func(t *testing.T) {
				s := fakeServer("acme", stateConnected, 200)
				// What the session keeps: the first MaxInstructions bytes.
				kept := c.text[:min(len(c.text), MaxInstructions)]
				s.st.Instructions, s.st.InstructionsBytes = kept, len(c.text)
				v := fakeView(false, s)
				v.max = max
				md := string(v.renderServer(s))
				if len(md) > max {
					t.Fatalf("LABEL.md is %d bytes, over its bound of %d", len(md), max)
				}
				if shownSkills(md) == 0 {
					t.Errorf("no skill fits below the instructions")
				}
				if !strings.Contains(md, "## Instructions from server `acme`") {
					t.Fatalf("no instructions section:\n%s", md)
				}
				if strings.Contains(md, "they do not fit in this file's bound") {
					if max == config.DefaultIndexMaxBytes {
						t.Errorf("the instructions do not fit in the default bound")
					}
					return
				}
				html := renderMarkdown(t, md)
				if n := strings.Count(html, "<pre><code"); n != 1 || !strings.Contains(html, `<pre><code class="language-text">`) {
					t.Fatalf("%d code blocks in the rendered file, want the one of the instructions:\n%s", n, html)
				}
				body := html[strings.Index(html, `<pre><code class="language-text">`)+len(`<pre><code class="language-text">`):]
				body = body[:strings.Index(body, "</code></pre>")]
				if len(body) == 0 {
					t.Fatal("the quote is empty")
				}
				if !c.cut && !strings.Contains(c.text, "\x01") && !strings.Contains(c.text, "\r") && len(c.text) < 1000 {
					if want := htmlEscape(strings.TrimSuffix(c.text, "\n")) + "\n"; body != want {
						t.Errorf("the quote holds %q, want %q", body, want)
					}
				}
				if strings.ContainsAny(md, "\x01\r") {
					t.Errorf("a control character reached the file")
				}
				// At the least bound, long instructions are cut to fit it.
				wantCut := c.cut || max == config.MinIndexMaxBytes && len(c.text) > 1000
				if got := strings.Contains(md, "The instructions are cut here"); got != wantCut {
					t.Errorf("cut note shown: %v, want %v", got, wantCut)
				}
				// The quote itself: between the fence lines, at most the cap.
				lines := strings.Split(md, "\n")
				for i, l := range lines {
					if strings.HasPrefix(l, "```") && strings.HasSuffix(l, "text") {
						fence := strings.TrimSuffix(l, "text")
						if len(fence) > fenceMax {
							t.Errorf("fence of %d backticks, more than %d", len(fence), fenceMax)
						}
						n := 0
						for _, q := range lines[i+1:] {
							if q == fence {
								break
							}
							n += len(q) + 1
						}
						if n > MaxInstructions {
							t.Errorf("the quote holds %d bytes, more than %d", n, MaxInstructions)
						}
					}
				}
			})
		}
	}
}

// TestInstructionsNotShownUnderApproval: the generated text of a server
// whose instructions are held back says how long they are and why, and
// quotes nothing.
func TestInstructionsNotShownUnderApproval(t *testing.T) {
	s := fakeServer("acme", stateConnected, 3)
	s.st.InstructionsBytes = 1234
	s.st.InstructionsNotShown = "approval is required for this server, and its instructions are not bound to an approval"
	md := string(fakeView(false, s).renderServer(s))
	if !strings.Contains(md, "The server sent instructions (1234 bytes) when skillfs connected. They are not shown here: approval is required") || strings.Contains(md, "```") {
		t.Errorf("LABEL.md:\n%s", md)
	}
}
