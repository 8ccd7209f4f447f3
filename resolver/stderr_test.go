package resolver

import "testing"

func TestIsWarning(t *testing.T) {
	for line, want := range map[string]bool{
		"skillfs serve: warning: skipped /d/x/SKILL.md: agent-skills: description is 1068 characters": true,
		`time=2026-12-06T10:00:00Z level=WARN msg=skipped path=/d/x err="bad"`:                        true,
		`{"time":"x","level":"error","msg":"boom"}`:                                                   true,
		"WARN: cache is cold":                 true,
		"[error] no such file":                true,
		"Error: bad config":                   true,
		"fatal":                               true,
		"serving /d on http://127.0.0.1:1/":   false,
		"level=INFO msg=started":              false,
		"no error here":                       false,
		"0 warnings, 0 errors":                false,
		"loaded 3 skills; warnings follow in": false,
	} {
		if got := isWarning(line); got != want {
			t.Errorf("isWarning(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestRecordStderrKeepsTheLastWarningsBounded(t *testing.T) {
	var out output
	long := "warning: é" + string(repeat('y', 2*MaxStderrWarningBytes))
	for i := 0; i < 3*MaxStderrWarnings; i++ {
		out.recordStderr("just a line")
		out.recordStderr(long)
	}
	out.recordStderr("warning: \x1b[31mred")
	s := out.stderr
	if s.Lines != 6*MaxStderrWarnings+1 || s.Warnings != 3*MaxStderrWarnings+1 || len(s.LastWarnings) != MaxStderrWarnings {
		t.Fatalf("counts: lines %d, warnings %d, kept %d", s.Lines, s.Warnings, len(s.LastWarnings))
	}
	if got := s.LastWarnings[0]; len(got) > MaxStderrWarningBytes+len("…") {
		t.Errorf("a kept warning is %d bytes", len(got))
	}
	if got := s.LastWarnings[MaxStderrWarnings-1]; got != "warning: <U+001B>[31mred" {
		t.Errorf("the last warning is not escaped: %q", got)
	}
}

func repeat(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}
