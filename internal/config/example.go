package config

import (
	"net/url"
	"strings"
)

// Example is a config file to show users (in `skillfs mount --help`): each
// kind of server and the skillfs section. The tests parse it.
const Example = `{
  "mcpServers": {
    "local": {"command": "skillfs", "args": ["serve", "${HOME}/skills"]},
    "acme": {
      "url": "https://mcp.acme.example/mcp",
      "headers": {"Authorization": "Bearer ${ACME_TOKEN}"}
    },
    "legacy": {"type": "sse", "url": "http://127.0.0.1:8931/sse"}
  },
  "skillfs": {
    "defaults": {"limits": {"call_timeout": "30s"}},
    "servers": {
      "acme": {
        "strict": true,
        "pin": ["skill://billing/refunds/SKILL.md"],
        "limits": {"budget": "64MiB"}
      }
    }
  }
}`

// Endpoint says where the origin's server is without the secrets its
// config may carry, for logs and status: the command alone for stdio (args
// may hold a token), the URL without userinfo, query and fragment for
// http and sse.
func (o Origin) Endpoint() string {
	if o.Kind == Stdio {
		return string(o.Kind) + " " + o.Command
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return string(o.Kind)
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return string(o.Kind) + " " + strings.ToLower(u.Scheme) + "://" + u.Host + u.EscapedPath()
}
