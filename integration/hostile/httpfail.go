package hostile

import (
	"net/http"
	"strings"
)

// HTTP-only modes, not in Modes() (which TestHostileServers runs over
// stdio too): ways an HTTP server fails a client whose configured URL
// carries secrets, so that the client's errors would carry them too.
const (
	// ModeHTTP500 answers every HTTP request 500 Internal Server Error.
	ModeHTTP500 = "http-500"
	// ModeHTTPClose drops every HTTP request's connection unanswered.
	ModeHTTPClose = "http-close"
	// ModeRedirectSecret answers every request but those to /moved with
	// 307 to http://RedirectUser:RedirectPass@HOST/moved?token=RedirectToken
	// (the same origin), and drops the connection of every request to
	// /moved: the client's error then names the URL the server chose.
	ModeRedirectSecret = "redirect-secret"
)

// The secrets ModeRedirectSecret's Location carries.
const (
	RedirectUser  = "locationuser"
	RedirectPass  = "locationpass"
	RedirectToken = "locationtoken"
)

func httpModes() []string { return []string{ModeHTTP500, ModeHTTPClose, ModeRedirectSecret} }

// httpFailure serves the HTTP-only modes; it reports whether it answered.
func (s *Server) httpFailure(w http.ResponseWriter, r *http.Request) bool {
	switch s.opts.Mode {
	case ModeHTTP500:
		http.Error(w, "internal error", http.StatusInternalServerError)
	case ModeHTTPClose:
		panic(http.ErrAbortHandler)
	case ModeRedirectSecret:
		if strings.HasPrefix(r.URL.Path, "/moved") {
			panic(http.ErrAbortHandler)
		}
		w.Header().Set("Location", "http://"+RedirectUser+":"+RedirectPass+"@"+r.Host+"/moved?token="+RedirectToken)
		w.WriteHeader(http.StatusTemporaryRedirect)
	default:
		return false
	}
	return true
}
