package transport

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/skillfs/skillfs/internal/testkit"
)

// childEnv selects a child-process mode when the test binary is re-executed
// by the Command tests.
const childEnv = "SKILLFS_TRANSPORT_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		runChild(mode)
		os.Exit(0)
	}
	// The parallel tests mostly wait out Close's graces.
	testkit.WaitingParallel(4)
	testkit.Main(m)
}

// testLog records every log record and fails the test, at cleanup, on any
// Warn or Error whose message contains none of the expected substrings.
// testLog keeps every record (testkit.Log).
type testLog = testkit.Log

// newTestLog fails the test, when it ends, on any Warn or Error record
// whose message contains none of expectWarn.
func newTestLog(t *testing.T, expectWarn ...string) (*slog.Logger, *testLog) {
	t.Helper()
	l := testkit.NewLog(nil)
	t.Cleanup(func() {
		for _, r := range l.Records() {
			if r.Level < slog.LevelWarn {
				continue
			}
			ok := false
			for _, w := range expectWarn {
				ok = ok || strings.Contains(r.Msg, w)
			}
			if !ok {
				t.Errorf("unexpected log record: %s %v", r.Level, r)
			}
		}
	})
	return l.Logger(), l
}

// describe summarises a message for comparisons.
func describe(m jsonrpc.Message) string {
	switch m := m.(type) {
	case *jsonrpc.Request:
		return fmt.Sprintf("request id=%v method=%s", m.ID.Raw(), m.Method)
	case *jsonrpc.Response:
		if m.Error != nil {
			if werr, ok := m.Error.(*jsonrpc.Error); ok {
				return fmt.Sprintf("response id=%v error %d %s", m.ID.Raw(), werr.Code, werr.Message)
			}
			return fmt.Sprintf("response id=%v error %v", m.ID.Raw(), m.Error)
		}
		return fmt.Sprintf("response id=%v result %d bytes", m.ID.Raw(), len(m.Result))
	}
	return fmt.Sprintf("%T", m)
}
