package mountd

import (
	"bufio"
	"strings"
	"sync"

	"github.com/coreos/go-systemd/v22/daemon"
)

// notifier tells systemd (Type=notify) how the mount stands, when
// NOTIFY_SOCKET is set; otherwise it does nothing.
type notifier struct {
	mu   sync.Mutex
	last string
}

// send passes state lines (READY=1, STATUS=…, STOPPING=1) to systemd.
func (n *notifier) send(lines ...string) {
	state := strings.Join(lines, "\n")
	n.mu.Lock()
	defer n.mu.Unlock()
	if state == n.last {
		return
	}
	n.last = state
	daemon.SdNotify(false, state)
}

// status sends STATUS= when it changed.
func (n *notifier) status(s string) { n.send("STATUS=" + firstLine(s)) }

func firstLine(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	if sc.Scan() {
		return sc.Text()
	}
	return ""
}
