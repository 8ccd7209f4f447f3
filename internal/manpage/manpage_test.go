package manpage

import "testing"

func TestRoffLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"--mount DIR", `\-\-mount DIR`},
		{`a\b`, `a\eb`},
		{".skillfs/status.json", `\&.skillfs/status.json`},
		{"'quoted' word", `\&'quoted' word`},
		{"<label>-<fingerprint>", `<label>\-<fingerprint>`},
		{"a … b → c", `a \[u2026] b \[u2192] c`},
		{"bell\a and\x1b[31m", "bell and[31m"},
	} {
		if got := roffLine(tc.in); got != tc.want {
			t.Errorf("roffLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
