package resolver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/resolver/transport"
)

// Errors returned by a Session. They are wrapped with the operation and the
// URI; test them with errors.Is.
var (
	// ErrOffline: there is no live session with the server right now.
	ErrOffline = errors.New("server offline")
	// ErrNotServed: the server answered -32602, it does not serve the URI.
	ErrNotServed = errors.New("not served by the server")
	// ErrTooLarge: the response exceeded the declared size or the per-file cap.
	ErrTooLarge = errors.New("response too large")
	// ErrOverBudget: the origin's byte budget for the current window is
	// spent.
	ErrOverBudget = errors.New("byte budget exhausted")
	// ErrTimeout: the server did not answer in time.
	ErrTimeout = errors.New("server did not answer in time")
	// ErrMalformed: the server's answer does not have the shape the
	// protocol requires.
	ErrMalformed = errors.New("malformed response")
	// ErrNoDirectoryRead: the server did not declare directoryRead.
	ErrNoDirectoryRead = errors.New("server does not support directory reads")
	// ErrNoSkills: the server does not declare the skills extension.
	ErrNoSkills = errors.New("server does not declare the skills extension")
)

// classify maps an error from a go-sdk call to one of the package's errors,
// keeping the original text for the log.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var werr *jsonrpc.Error
	var nerr *net.OpError
	var b64 base64.CorruptInputError
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &nerr), errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		// The request did not reach a live server (connection refused or
		// reset, the session gone).
		return fmt.Errorf("%w: %v", ErrOffline, err)
	case errors.As(err, &b64), errors.As(err, &syn), errors.As(err, &typ):
		// The result did not decode: invalid base64, wrong JSON types.
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	case transport.IsResponseTooLarge(err):
		return fmt.Errorf("%w: %v", ErrTooLarge, err)
	case errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams:
		return fmt.Errorf("%w: %s", ErrNotServed, werr.Message)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	case errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &werr):
		return fmt.Errorf("server error %d: %s", werr.Code, werr.Message)
	}
	return err
}

// Everything that leaves a Session — the errors its methods return, its
// Status, its log lines — passes through redact, redactedLog or
// Status: user info, query values and fragments of every URL in the text
// become *** (config.MaskURLs). Go's url.Error embeds the request URL with
// only its password masked, and a server's redirect may name any URL, so
// the text of an error is never trusted to be free of them.

// redactedError is an error whose text has its URLs masked; errors.Is and
// errors.As see the original.
type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact returns err with the URLs in its text masked.
func redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if masked := config.MaskURLs(msg); masked != msg {
		return &redactedError{err: err, msg: masked}
	}
	return err
}

// redactHandler masks the URLs in every log line's message and attributes.
type redactHandler struct{ h slog.Handler }

func redactedLog(l *slog.Logger) *slog.Logger { return slog.New(redactHandler{l.Handler()}) }

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, config.MaskURLs(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = redactAttr(a)
	}
	return redactHandler{r.h.WithAttrs(out)}
}

func (r redactHandler) WithGroup(name string) slog.Handler { return redactHandler{r.h.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, config.MaskURLs(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, ga := range g {
			out[i] = redactAttr(ga)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		// An error or a Stringer becomes its masked text, but only when
		// masking changes it: the handler formats the others as ever.
		var text string
		switch x := v.Any().(type) {
		case error:
			text = x.Error()
		case fmt.Stringer:
			text = x.String()
		default:
			return slog.Attr{Key: a.Key, Value: v}
		}
		if masked := config.MaskURLs(text); masked != text {
			return slog.String(a.Key, masked)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
