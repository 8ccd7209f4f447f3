package hostile

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/skillfs/skillfs/internal/skill"
)

// stormMessages are what notify-storm sends, in turn.
var stormMessages = []*jsonrpc.Request{
	{Method: "notifications/resources/list_changed", Params: json.RawMessage(`{}`)},
	{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","logger":"storm","data":"storm"}`)},
	{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":"storm","progress":1}`)},
	{Method: "notifications/resources/updated", Params: json.RawMessage(`{"uri":"skill://honest-a/SKILL.md"}`)},
}

// stormer starts a connection's storm once, at the client's first
// skills/list (the 2026-07-28 protocol has no notifications/initialized).
type stormer struct {
	once sync.Once
}

func (st *stormer) observe(c *dyingConn, msg jsonrpc.Message) {
	if c.s.opts.Mode != ModeNotifyStorm {
		return
	}
	if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != skill.MethodList {
		return
	}
	st.once.Do(func() {
		c.s.log.Info("notification storm begins", "op", "notify")
		go c.storm()
	})
}

// storm writes notifications until the connection refuses one.
func (c *dyingConn) storm() {
	ctx := context.Background()
	for i := 0; ; i++ {
		if c.s.dead.Load() {
			return
		}
		if err := c.Connection.Write(ctx, stormMessages[i%len(stormMessages)]); err != nil {
			return
		}
	}
}
