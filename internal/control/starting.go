package control

import (
	"errors"
	"net/http"

	"github.com/skillfs/skillfs/internal/control/wire"
)

// ErrStarting answers the requests a mount does not serve before it is
// live: those that read or change a skill (inspect, show, approve, revoke,
// get, reload).
var ErrStarting = errors.New("the mount is starting (its servers are still listing); try again once it is live (`skillfs status` shows its progress)")

// servedWhileStarting are the requests a starting mount answers: they
// report what it has so far and change nothing.
var servedWhileStarting = map[string]bool{"/v1/status": true, "/v1/skills": true, "/v1/pending": true, "/v1/complete": true}

// gated refuses, while the mount is starting, the requests it does not
// serve then.
func (h *handler) gated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.isStarting() && !servedWhileStarting[r.URL.Path] {
			writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: ErrStarting.Error()})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (h *handler) isStarting() bool { return h.starting != nil && h.starting() }

func (h *handler) state() string {
	if h.isStarting() {
		return wire.MountStarting
	}
	return wire.MountLive
}

// MountStarting is StatusReport.State while the mount is starting.
const MountStarting = wire.MountStarting
