package control

import (
	"context"
	"errors"
	"net/http"

	"github.com/skillfs/skillfs/internal/control/wire"
)

// ReloadResult is the answer to a reload (package internal/control/wire).
type ReloadResult = wire.ReloadResult

// ReloadFunc re-reads the mount's config and applies it, as SIGHUP does.
// An error that Is ErrInvalid is the config's (it does not load, or the
// mount refuses it); the mount then serves the servers it had.
type ReloadFunc func(ctx context.Context) (ReloadResult, error)

// errNoReload answers a reload on a mount that offers none.
var errNoReload = errors.New("this mount does not reload its config through the control endpoint; send it SIGHUP")

// reloadRoute serves POST /v1/reload: the same peer check as every other
// request applies (peerListener).
func (h *handler) reloadRoute(m *http.ServeMux) {
	m.Handle("POST /v1/reload", endpoint(h, func(ctx context.Context, _ struct{}) (ReloadResult, error) {
		if h.reload == nil {
			return ReloadResult{}, errNoReload
		}
		return h.reload(ctx)
	}))
}

// Reload asks the mount to re-read its config and apply it, as SIGHUP
// does, and says what changed.
func (c *Client) Reload(ctx context.Context) (ReloadResult, error) {
	var r ReloadResult
	return r, c.call(ctx, "reload", struct{}{}, &r)
}
