package hostile

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
)

// SSEPath is where Handler serves the legacy SSE transport (the GET
// stream at SSEPath, its POST endpoint below it).
const SSEPath = "/sse"

// redirect answers r with 307 to Options.RedirectTo plus r's path and
// query. 307 keeps the method and body, so a POST arrives as a POST.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request) {
	to := s.opts.RedirectTo + r.URL.Path
	if r.URL.RawQuery != "" {
		to += "?" + r.URL.RawQuery
	}
	s.log.Info("redirecting to another server", "op", "redirect", "uri", to)
	w.Header().Set("Location", to)
	w.WriteHeader(http.StatusTemporaryRedirect)
}

var headerMu sync.Mutex

// logHeaders records r's method, path and Authorization in HeaderLog.
func (s *Server) logHeaders(r *http.Request) {
	if s.opts.HeaderLog == "" {
		return
	}
	headerMu.Lock()
	defer headerMu.Unlock()
	f, err := os.OpenFile(s.opts.HeaderLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		s.log.Warn("header log", "err", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s %s\n", r.Method, r.URL.Path, strconv.Quote(r.Header.Get("Authorization")))
}
