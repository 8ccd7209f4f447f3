package resolver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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
