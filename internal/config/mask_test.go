package config

import (
	"strings"
	"testing"
)

func TestMaskURLs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"no url here", "no url here"},
		{`Post "http://u:***@127.0.0.1:9/mcp?api_key=SECRET&x=1": dial tcp 127.0.0.1:9: connect: connection refused`,
			`Post "http://***@127.0.0.1:9/mcp?api_key=***&x=***": dial tcp 127.0.0.1:9: connect: connection refused`},
		{`Get "https://h/p?a=b\"SECRET&c": EOF`, `Get "https://h/p?a=***&c": EOF`},
		{"redirected to http://h/x?token=SECRET, which", "redirected to http://h/x?token=*** which"},
		{"a https://user@h/p#frag and skill://s/SKILL.md", "a https://***@h/p#*** and skill://s/SKILL.md"},
		{"://x 1http://h?q=v", "://x 1http://h?q=***"},
		{"http://h?q", "http://h?q"},
		{"HTTP://U:P@H:80/?", "HTTP://***@H:80/?"},
	} {
		if got := MaskURLs(c.in); got != c.want {
			t.Errorf("MaskURLs(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	for _, secret := range []string{"SECRET", "PASS", "FRAG"} {
		in := `x "http://USER:PASS@h/p?k=SECRET#FRAG" y http://USER:PASS@h/p?k=SECRET#FRAG`
		if strings.Contains(MaskURLs(in), secret) {
			t.Errorf("%s left in %q", secret, MaskURLs(in))
		}
	}
}

func TestMaskURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://mcp.example/mcp":                    "https://mcp.example/mcp",
		"https://u:pw@mcp.example:8443/a/b?k=v&flag": "https://***@mcp.example:8443/a/b?k=***&flag",
		"http://h/p?token=abc#frag":                  "http://h/p?token=***#***",
		"https://u:p@h:1/mcp?api_key=S&x&y=#f":       "https://***@h:1/mcp?api_key=***&x&y=***#***",
	} {
		if got := MaskURL(in); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
		// The text form agrees with the parsed one.
		if got := MaskURLs(in); got != want {
			t.Errorf("MaskURLs(%q) = %q, want %q", in, got, want)
		}
	}
}
