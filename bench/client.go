//go:build linux

package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os/exec"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/skill"
)

// The baseline is what any MCP host does without skillfs: a plain go-sdk
// client, over the same transport to the same kind of server, that lists
// with skills/list and reads with resources/read and sha256. It keeps none
// of skillfs's bounds, checks or store, so the ratio against it is the
// price of those.

type listParams struct {
	mcp.ParamsBase
	skill.ListParams
}

type listResult struct {
	mcp.ResultBase
	skill.ListResult[json.RawMessage]
}

// A transportSpec says how the baseline reaches a server: HTTP to URL, or
// stdio to a `skillfs serve DIR` it starts itself.
type transportSpec struct {
	Stdio bool
	URL   string // HTTP
	Bin   string // stdio: the skillfs binary
	Dir   string // stdio: the folder it serves
}

func (t transportSpec) name() string {
	if t.Stdio {
		return "stdio"
	}
	return "http"
}

func (t transportSpec) transport() mcp.Transport {
	if !t.Stdio {
		return &mcp.StreamableClientTransport{Endpoint: t.URL}
	}
	cmd := exec.Command(t.Bin, "serve", "--poll=-1s", t.Dir)
	cmd.SysProcAttr = childAttrs(syscall.SIGKILL)
	return &mcp.CommandTransport{Command: cmd}
}

// dial connects a plain client.
func dial(ctx context.Context, t transportSpec) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "skillfs-bench-baseline", Version: "0"}, nil)
	if err := mcp.AddSendingCustomMethod[*listParams, *listResult](c, skill.MethodList); err != nil {
		return nil, err
	}
	cs, err := c.Connect(ctx, t.transport(), nil)
	if err != nil {
		return nil, fmt.Errorf("baseline connect over %s: %w", t.name(), err)
	}
	return cs, nil
}

// listAll follows skills/list to its end and returns how many skills it
// names.
func listAll(ctx context.Context, cs *mcp.ClientSession) (int, error) {
	n := 0
	cursor := ""
	for page := 0; page < 100000; page++ {
		res, err := mcp.CallCustomMethod[*listParams, *listResult](ctx, cs, skill.MethodList, &listParams{ListParams: skill.ListParams{Cursor: cursor}})
		if err != nil {
			return n, fmt.Errorf("baseline skills/list page %d: %w", page+1, err)
		}
		n += len(res.Skills)
		if res.NextCursor == "" {
			return n, nil
		}
		cursor = res.NextCursor
	}
	return n, fmt.Errorf("baseline skills/list: no end after 100000 pages")
}

// readHash reads one resource and returns the sha256 of its bytes.
func readHash(ctx context.Context, cs *mcp.ClientSession, uri string) ([32]byte, error) {
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return [32]byte{}, fmt.Errorf("baseline resources/read %s: %w", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0] == nil {
		return [32]byte{}, fmt.Errorf("baseline resources/read %s: %d contents", uri, len(res.Contents))
	}
	c := res.Contents[0]
	if c.Blob != nil {
		return sha256.Sum256(c.Blob), nil
	}
	return sha256.Sum256([]byte(c.Text)), nil
}
