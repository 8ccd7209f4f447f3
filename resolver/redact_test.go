package resolver

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	inner := &url.Error{Op: "Post", URL: "http://u:***@h/mcp?api_key=SECRET#FRAG", Err: errors.New("EOF")}
	err := redact(fmt.Errorf("connect: %w", fmt.Errorf("%w: %w", ErrOffline, inner)))
	if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "FRAG") || strings.Contains(err.Error(), "u:") {
		t.Errorf("redacted: %v", err)
	}
	if !strings.Contains(err.Error(), `"http://***@h/mcp?api_key=***#***"`) {
		t.Errorf("redacted: %v; want the URL masked, not dropped", err)
	}
	var ue *url.Error
	if !errors.Is(err, ErrOffline) || !errors.As(err, &ue) {
		t.Errorf("errors.Is/As lost through redact: %v", err)
	}
	plain := errors.New("no url")
	if redact(plain) != plain || redact(nil) != nil {
		t.Error("an error without a URL is not returned as it is")
	}

	var buf bytes.Buffer
	log := redactedLog(slog.New(slog.NewTextHandler(&buf, nil))).With("at", "http://h/?t=WITHSECRET")
	log.Warn("failed http://h/?t=MSGSECRET", "err", inner, "s", "http://u:STRSECRET@h/", slog.Group("g", "x", "http://h/?t=GROUPSECRET"), "n", 3)
	for _, s := range []string{"WITHSECRET", "MSGSECRET", "SECRET#", "STRSECRET", "GROUPSECRET"} {
		if strings.Contains(buf.String(), s) {
			t.Errorf("log line holds %s: %s", s, buf.String())
		}
	}
	if !strings.Contains(buf.String(), "n=3") {
		t.Errorf("log line lost an attribute: %s", buf.String())
	}
}
