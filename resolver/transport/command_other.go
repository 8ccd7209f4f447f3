//go:build !unix

package transport

import (
	"context"
	"errors"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Command returns a transport that runs cmd as a stdio MCP server. Process
// groups are a Unix notion; elsewhere Connect fails.
func Command(cmd *exec.Cmd, opts Options) mcp.Transport {
	return commandTransport{}
}

type commandTransport struct{}

func (commandTransport) Connect(context.Context) (mcp.Connection, error) {
	return nil, errors.New("start stdio server: not supported on this system")
}
