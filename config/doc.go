// Package config loads the MCP servers skillfs mounts and skillfs's own
// per-origin options, and owns the placement rule for the mount and the
// store (DESIGN.md rule 9). It does no I/O beyond reading the one file
// (DefaultPath stats, CheckPlacement lstats and reads links), starts
// nothing and logs nothing, so it has no Options or Logger; every problem
// is returned as an error that names the file, the key and the fix:
// "<file>: <key>: <what is wrong>; <what to change>".
//
// # The file
//
// It is the file users already keep for their MCP hosts, in JSON (comments
// and trailing commas allowed, as in VS Code's mcp.json) or YAML. The
// default is $XDG_CONFIG_HOME/skillfs/config.json (~/.config when unset),
// or config.yaml beside it; `--config FILE` chooses another.
//
//	{
//	  "mcpServers": {
//	    "local": {                                  // stdio: a command skillfs starts
//	      "command": "skillfs",
//	      "args": ["serve", "${HOME}/skills"],
//	      "env": {"LOG_LEVEL": "${LOG_LEVEL:-info}"},
//	      "cwd": "~/work"                           // ~ and paths relative to this file work
//	    },
//	    "acme": {                                   // streamable HTTP ("type" may be left out)
//	      "type": "http",
//	      "url": "https://mcp.acme.example/mcp",
//	      "headers": {"Authorization": "Bearer ${ACME_TOKEN}"}
//	    },
//	    "legacy": {"type": "sse", "url": "http://127.0.0.1:8931/sse"},
//	    "old": {"command": "old-mcp", "disabled": true}
//	  },
//	  "skillfs": {
//	    "defaults": {                               // every origin
//	      "strict": false,
//	      "allow_dynamic": false,
//	      "limits": {
//	        "max_file_size": "16MiB",               // per-file hard cap
//	        "budget": "512MiB",                     // bytes fetched per server per budget_window
//	        "budget_window": "1h",                  // sliding window of the budget
//	        "max_list_pages": 1000,                 // skills/list pages followed
//	        "max_list_entries": 100000,             // skills/list entries kept
//	        "max_dir_pages": 100,                   // pages per resources/directory/read
//	        "max_dir_entries": 10000,               // children per directory
//	        "call_timeout": "30s",                  // each request
//	        "connect_timeout": "15s",               // connect + handshake
//	        "list_timeout": "2m",                   // a whole skills/list enumeration
//	        "refresh_interval": "10m"               // periodic re-list; 0 disables
//	      }
//	    },
//	    "servers": {                                // one origin each; overrides defaults key by key
//	      "acme": {
//	        "strict": true,
//	        "pin": ["skill://billing/refunds/SKILL.md"],
//	        "limits": {"budget": "64MiB"}
//	      }
//	    }
//	  }
//	}
//
// The values shown for limits are the defaults. The same in YAML:
//
//	mcpServers:
//	  local: {command: skillfs, args: [serve, "${HOME}/skills"]}
//	  acme:
//	    url: https://mcp.acme.example/mcp
//	    headers: {Authorization: "Bearer ${ACME_TOKEN}"}
//	skillfs:
//	  defaults: {limits: {call_timeout: 30s}}
//	  servers:
//	    acme: {strict: true, pin: ["skill://billing/refunds/SKILL.md"], limits: {budget: 64MiB}}
//
// # Servers
//
// Servers sit under "mcpServers" (Claude, Cursor, …) or "servers" (VS
// Code); both may appear and are merged, but one label may not be in both.
// An entry with "command" is stdio (command, args, env, cwd); one with
// "url" is streamable HTTP unless "type" says "sse" (url, headers). "type"
// may be "stdio", "http", "streamable-http", "streamableHttp" or "sse"; it
// may be left out. "serverUrl" (Windsurf) and "httpUrl" (Gemini) are read as
// "url". An entry with both command and url, or neither, is an error. URLs
// must be http or https and name a host. "disabled": true or "enabled":
// false skips a server without checking the rest of its entry. Keys skillfs
// does not know are ignored in a server entry, because other hosts keep
// their own keys there. Args, env and header values may be numbers or
// booleans (YAML's `8080`, `true`); they are taken as written.
//
// A server's label (its key) becomes its directory under the mount, so it
// must be 1–64 characters of A-Z a-z 0-9 . _ -, start with a letter or
// digit, and not end with '.'; labels differing only in case are refused,
// as they would be one directory on a case-insensitive filesystem.
//
// # Variables
//
// ${VAR} and ${VAR:-default} are expanded in command, args, env values,
// cwd, url and header values, and nowhere else. ${VAR} with VAR unset is an
// error naming the key and the variable; set to "" it expands to "".
// ${VAR:-default} is default when VAR is unset or empty. The default is
// literal (not expanded again, no '}'). ${env:VAR}, VS Code's spelling,
// means ${VAR}; VS Code's ${input:…} prompts cannot be shown and are an
// error. $${ is a literal "${"; any other '$' is literal, so configs
// written for hosts that expand nothing keep their meaning.
//
// # The skillfs section
//
// "skillfs" has two keys: "defaults" (strict, allow_dynamic, limits) for
// every origin, and "servers", mapping a configured label (disabled ones
// included) to its own strict, allow_dynamic, pin and limits. A label that
// is not configured is an error listing the labels that are. Unknown keys
// anywhere in this section are errors with a did-you-mean suggestion,
// because a misspelt limit or "strict" would otherwise silently leave the
// weaker default.
//
//   - strict: accept only the newest SEP-2640 entry shapes (resources with
//     size, "dynamic" spelled out). Default false.
//   - allow_dynamic: show skills whose resources are "dynamic", marked
//     unverified. Default false.
//   - pin: skill URIs (ending in /SKILL.md, any scheme but file, http(s) and
//     data) confirmed with skills/get at connect, for skills a listing
//     leaves out.
//   - limits: see Limits. Sizes are integers (bytes) or strings with a unit:
//     B, KiB, MiB, GiB, TiB, KB, MB, GB, TB, any case, with or without a
//     space ("16MiB", "16 MiB", "1.5GiB"). Durations are Go duration
//     strings ("30s", "1m30s") or integer milliseconds. Every limit must be
//     positive, except refresh_interval, where 0 turns periodic re-listing
//     off; bounds cannot be switched off.
//   - budget and budget_window: a server may be fetched from (resources/read)
//     at most budget bytes in any budget_window, a sliding window. A read of
//     a file whose size is declared reserves that size before it is sent,
//     and is refused (EIO, "over-budget") when the bytes charged in the last
//     window plus the reservation exceed the budget: exactly budget passes,
//     one byte more does not, and a file declared larger than the budget is
//     never fetched. A file of unknown size reserves nothing and is charged
//     what arrives, so such reads can pass the budget by at most one file
//     (max_file_size) each. Charges are grouped in budget_window/64 slices;
//     a slice is forgotten budget_window after its last charge, so a byte
//     counts for between one and 1+1/64 windows. Verified bytes already
//     held are served without a fetch and cost nothing; status.json's
//     bytes_fetched is what the current window holds.
//
// # Origin identity
//
// Origin.ID is the label plus a fingerprint of where the server is (kind,
// command, args and cwd, or URL), so the store never shows bytes fetched
// from one server under a label since re-pointed at another. Env and
// headers are not part of it; a secret given in args or in the URL is,
// and rotating it costs a re-fetch, never a wrong byte.
//
// # Placement
//
// CheckPlacement refuses a mount or store path that is, or is inside, a
// filesystem-skill discovery path: ~/.claude, ~/.agents, ~/.config/agents,
// ~/.cursor, ~/.copilot, ~/.codex, ~/.gemini, ~/.config/opencode,
// ~/.config/goose, ~/.windsurf, ~/.codeium, /etc/codex, or any folder named
// skills or .skills. Agents load skills from those as local, trusted files;
// MCP-served skills must stay distinguishable (SEP-2640 cache isolation).
package config
