package mountd

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/skillfs/skillfs/internal/control"
)

// reloadHook answers `skillfs reload` for a mount: the control endpoint
// may listen before the mount is live, and a reload is refused until it is.
type reloadHook struct{ m atomic.Pointer[running] }

// reload is SIGHUP's reload of the config through the control endpoint,
// answered when it is done: what changed, or why nothing did. Like SIGHUP,
// a reload that changed the config lists every server again.
func (h *reloadHook) reload(ctx context.Context) (control.ReloadResult, error) {
	m := h.m.Load()
	if m == nil {
		return control.ReloadResult{}, errors.New("the mount is starting; try again once it is live")
	}
	if m.origins.Path == "" {
		return control.ReloadResult{}, errors.New("this mount serves the embedded demo; there is no config file to re-read")
	}
	// A client that goes away does not abandon a reload half applied; a
	// mount that stops does (Apply refuses then).
	r, err := m.applyConfig(context.WithoutCancel(ctx), "skillfs reload")
	var ce configError
	switch {
	case errors.As(err, &ce):
		return control.ReloadResult{}, fmt.Errorf("%s has errors; the mount keeps serving the servers it had: %v", m.origins.Path, ce.error)
	case err != nil:
		return control.ReloadResult{}, err
	}
	m.log.Info("skillfs reload: listing every server again")
	m.v.Refresh()
	return control.ReloadResult{Config: m.origins.Path, Added: nonNil(r.Added), Removed: nonNil(r.Removed), Changed: nonNil(r.Changed)}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
