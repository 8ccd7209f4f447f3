// Package config loads the MCP servers skillfs mounts and skillfs's own
// per-origin options, and owns the placement rule for the mount and the
// store (DESIGN.md rule 9). It does no I/O beyond reading the one file
// and the envFiles it names (DefaultPath stats, CheckPlacement lstats and
// reads links, Homes reads the user database), starts nothing and logs nothing, so it has no
// Options or Logger; every problem
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
//	    "index_max_bytes": "32KiB",                 // bound of .skillfs/index.md and of each servers/LABEL.md
//	    "index_available_skills": false,            // append the <available_skills> block to index.md
//	    "cache": {"max_size": "1GiB", "keep_days": 30}, // the store cleans itself (see below)
//	    "defaults": {                               // every origin
//	      "strict": false,
//	      "allow_dynamic": false,
//	      "approval": "off",                        // or "required"
//	      "limits": {
//	        "max_file_size": "16MiB",               // per-file hard cap
//	        "budget": "512MiB",                     // bytes fetched per server per budget_window
//	        "budget_window": "1h",                  // sliding window of the budget
//	        "max_list_pages": 1000,                 // skills/list pages followed
//	        "max_list_entries": 100000,             // skills/list entries kept
//	        "max_list_resources": 100000,           // resources of the skills a listing keeps, in all
//	        "max_list_bytes": "32MiB",              // bytes of skills/list entries received, in all
//	        "max_dir_pages": 100,                   // pages per resources/directory/read
//	        "max_dir_entries": 10000,               // children per directory
//	        "call_timeout": "30s",                  // each request
//	        "connect_timeout": "15s",               // connect + handshake
//	        "list_timeout": "2m",                   // a whole skills/list enumeration
//	        "refresh_interval": "10m",              // periodic re-list; 0 disables
//	        "start_attempts": 10                    // failed starts in a row before retrying stops
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
// An entry with "command" is stdio (command, args, env, envFile, cwd); one
// with "url" is streamable HTTP unless "type" says "sse" (url, headers).
// "type" may be "stdio", "http", "streamable-http", "streamableHttp" or
// "sse"; it may be left out, and Cline's "transportType" is read as "type"
// when "type" is absent. "serverUrl" (Windsurf) and "httpUrl" (Gemini)
// are read as "url". An entry with both command and url, or neither, is an error. URLs
// must be http or https and name a host. "disabled": true or "enabled":
// false skips a server without checking the rest of its entry.
// Args, env and header values may be numbers or booleans (YAML's `8080`,
// `true`); they are taken as written.
//
// Any other key in a server entry is an error with a did-you-mean
// suggestion ("evn" → "env"), since a dropped env or envFile would start
// the server without its settings and fail later and obscurely. The keys
// hosts document for their own use are accepted and ignored
// (IgnoredServerKeys): alwaysAllow (Cline, Roo Code), autoApprove (Cline,
// Claude Desktop extensions), description, dev, gallery and version (VS
// Code), disabledTools (Windsurf, Roo Code), includeTools, excludeTools
// and trust (Gemini CLI), timeout (Cline, Gemini CLI, Roo Code).
//
// "envFile" (Cursor, VS Code) names a file of KEY=VALUE lines, relative to
// the config file's folder (~ and ${…} work): blank lines and lines
// starting with # are skipped, a leading "export " is allowed, and a value
// in matching single or double quotes is taken without them; nothing in
// it is expanded. "env" wins over envFile for a name both set. A missing
// or malformed envFile is an error naming the file and the line (never
// its contents).
//
// A stdio server does not inherit skillfs's environment, which holds the
// variables other servers' headers and URLs are expanded from (their
// tokens). It gets the base set the MCP SDKs pass (HOME, LOGNAME, PATH,
// SHELL, TERM, USER) plus TMPDIR, LANG and LC_*, each only if skillfs has
// it; then the variables named by its pass_env (see the skillfs section);
// then its env and envFile, which win over both. Anything else it needs,
// set in env (`"env": {"X": "${X}"}`) or name in pass_env.
//
// The config file and every envFile are read only from regular files
// (symlinks are followed; a FIFO, device, socket or directory is refused),
// of at most MaxConfigSize (4 MiB) and MaxEnvFileSize (1 MiB) bytes, and
// within ReadTimeout (10 s) for a Load and its envFiles together, so that
// no input can hold a reload (see input.go).
//
// A server's label (its key) becomes its directory under the mount, so it
// must be 1–64 characters of A-Z a-z 0-9 . _ -, start with a letter or
// digit, and not end with '.'; labels differing only in case are refused,
// as they would be one directory on a case-insensitive filesystem.
//
// # Variables
//
// ${VAR} and ${VAR:-default} are expanded in command, args, env values,
// cwd, envFile, url and header values, and nowhere else. ${VAR} with VAR
// unset is an error naming the key and the variable; set to "" it expands to "".
// ${VAR:-default} is default when VAR is unset or empty. The default is
// literal (not expanded again, no '}'). ${env:VAR}, VS Code's spelling,
// means ${VAR}; VS Code's ${input:…} prompts cannot be shown and are an
// error. ${workspaceFolder} is the folder of the config file (VS Code
// means the workspace's; skillfs has none, and for .vscode/mcp.json this
// is .vscode itself, so write ${workspaceFolder}/.. for the project) and
// ${userHome} is $HOME; neither is looked up as an environment variable
// (${env:workspaceFolder} is). $${ is a literal "${"; any other '$' is literal, so configs
// written for hosts that expand nothing keep their meaning.
//
// # The skillfs section
//
// "skillfs" has "defaults" (strict, allow_dynamic, approval, pass_env,
// limits) for every origin, "servers", mapping a configured label (disabled
// ones included) to its own strict, allow_dynamic, approval, pin, pass_env
// and limits,
// and three keys of the mount's own: index_max_bytes,
// index_available_skills and cache. A label that
// is not configured is an error listing the labels that are. Unknown keys
// anywhere in this section are errors with a did-you-mean suggestion,
// because a misspelt limit or "strict" would otherwise silently leave the
// weaker default.
//
//   - strict: accept only the newest SEP-2640 entry shapes (every resource
//     with size). Default false. An entry without resources is refused
//     either way (the Final text makes it invalid).
//   - allow_dynamic: show skills whose resources are "dynamic", marked
//     unverified. Default false.
//   - approval: "off" (the default: every skill the server lists is in the
//     mount) or "required": a skill appears only once the user has
//     approved it with `skillfs approve`, and only while the approval
//     holds. An approval is bound to the origin identity (label and
//     fingerprint, see below), the skill's URI, its frontmatter and the
//     full set of (uri, size, digest) of its resources; when the server's
//     entry changes in any of these the skill leaves the mount at once and
//     waits in `skillfs pending` with what changed. Approving fetches
//     nothing. A "dynamic" skill cannot be bound to content and is refused
//     under "required". Approvals live in the store (approvals.json in the
//     origin's directory) and go with `skillfs cache rm LABEL`; any other
//     value is an error, so a misspelt "required" never shows unapproved
//     skills.
//   - pass_env: names of variables of skillfs's own environment a stdio
//     server gets besides the base set, its env and its envFile, such as
//     ["SSH_AUTH_SOCK", "HTTPS_PROXY"]; one that skillfs does not have is
//     left out. Names only (letters, digits and _, not starting with a
//     digit); a server's list replaces the defaults' list. In
//     skillfs.defaults it applies to stdio servers only; under the label of
//     an http or sse server it is an error. It is not part of the origin
//     identity (see ID): the values come from skillfs's environment, like
//     PATH's. Default: none.
//   - pin: skill URIs (ending in /SKILL.md, any scheme but file, http(s) and
//     data) confirmed with skills/get at connect, for skills a listing
//     leaves out.
//   - index_max_bytes: the bound, a size as for limits, of
//     .skillfs/index.md and of each .skillfs/servers/LABEL.md, the files
//     written for a model's context. 0 or absent means 32KiB, about 8,000
//     tokens at roughly 4 bytes per token; less than 4KiB is an error.
//     When every server's list fits, index.md holds them all; otherwise it
//     holds each server's health and counts and names its servers/LABEL.md,
//     which is cut, with a last line saying how many more, if even one
//     server's list does not fit. index.json keeps every skill.
//   - index_available_skills: true appends to index.md the Agent Skills
//     <available_skills> block (name, description, absolute location of
//     SKILL.md) that hosts put in a system prompt, within the same bound.
//     Default false.
//   - cache: how the store of verified bytes ($XDG_CACHE_HOME/skillfs, or
//     --cache-dir) cleans itself. max_size bounds the bytes of its stored
//     files across all servers, a size as for limits ("500MiB", "2GiB",
//     "1.5GiB", or an integer number of bytes); default 1GiB; off (or 0)
//     for no bound. Past it, files that nothing holds are removed, least
//     recently used first; held are the files named by the catalog of a
//     server a running mount uses, and by any approval. Held files alone
//     over max_size are all kept (status and the log say so). keep_days
//     drops the catalog, approvals and files of a server identity no
//     mount has used for that many days; default 30; off (or 0) for
//     never. A mount applies both at start and, for max_size, whenever
//     its fetches take the store over it; skillfs cache gc applies them
//     now. The catalogs, approvals and other small files beside the
//     stored files are not counted in max_size.
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
//     bytes_fetched is what the current window holds. What the mount
//     fetches after an approval only to keep the approved files for a
//     later diff has an account of its own, a quarter of budget over the
//     same window (keep_fetched of keep_budget), and never spends the
//     reads' budget.
//
// # Listing caps
//
// A skills/list enumeration stops at the first cap it reaches: pages
// (max_list_pages), entries (max_list_entries, kept or rejected), resources
// of the kept skills summed over the listing (max_list_resources), bytes of
// the entries as received (max_list_bytes, kept or rejected), or time
// (list_timeout). An entry is kept whole or not at all: the one that would
// cross a cap is dropped with everything after it, and no further page is
// asked for. The origin then shows what was kept, and status.json and
// index.json say which cap stopped the listing ("truncated"). The defaults
// fit a 10,000-skill catalog of a few files each several times over (the
// benchmark's lists about 40,000 resources in about 9 MB); they exist so
// that a listing inside every per-skill limit — pages of skills with 512
// resources each, without end — costs memory in proportion to what is kept
// (roughly 1–2 KB per kept resource), never the whole machine.
//
// Skills confirmed with skills/get — found by directory reads, or asked
// for with `skillfs get` — count against max_list_entries,
// max_list_resources and max_list_bytes with the listed ones: the one that
// would cross a cap is not held, and "truncated" names it and the cap.
//
// call_timeout bounds one read(2) of a file: a fetch that times out is
// remembered for that file for 5 seconds, so the kernel's retry of the
// same read fails at once instead of asking the server again.
//
// # Origin identity
//
// Origin.ID names the origin's directory in the store: the label, '-', and
// a 16-hex-digit fingerprint of everything that decides which server the
// label reaches — kind; command, args, cwd and env (stdio); URL with its
// userinfo and query, and headers (http, sse). Changing any of them, a
// rotated token included, starts the origin afresh (a re-fetch, never a
// wrong byte): a label re-pointed by a new env value or header never shows
// the old server's saved catalog or bytes, nor inherits its approvals. Because those inputs hold
// secrets and the ID is on disk and in status.json, the fingerprint is
// PBKDF2-HMAC-SHA256 (2^16 iterations) salted with the store's random
// 32-byte identity key (store.IdentityKey, <cache>/.identity-key, 0600),
// set with Config.SetIdentityKey. Whoever can list the cache or read
// status.json but not the key learns nothing; whoever also has the key (a
// copy of the whole cache directory) pays the iterations per guess at a
// short token. An HMAC alone would make guesses as cheap as sha256; a slow
// hash alone, unsalted, would let one precomputation serve every host.
// The cost is some tens of milliseconds per origin at start-up.
//
// # Placement
//
// CheckPlacement and CheckMountPlacement refuse a mountpoint, a server's
// directory under it (mountpoint/<label>) or a store path that is, or is
// inside, a filesystem-skill discovery path. Agents load skills, commands,
// rules and hooks from those as local, trusted files; MCP-served skills
// must stay distinguishable (SEP-2640 cache isolation). Refused are:
//
//   - these folders under the home directory and, since agents look in the
//     working directory and its parents, at any depth in a project:
//     .claude (Claude Code: skills/, commands/, agents/, settings, hooks),
//     .agents (.agents/skills: Codex and others), .config/agents,
//     .cursor, .copilot, .github (Copilot: skills/, prompts/,
//     instructions/, agents/), .codex, .gemini, .qwen, .opencode,
//     .config/opencode, .config/goose, .windsurf, .codeium, .continue,
//     .roo, .clinerules, .kiro, .amazonq — so a skills/ or commands/
//     folder inside any of them is refused with it;
//   - /etc/codex, /etc/claude-code and, on macOS,
//     /Library/Application Support/ClaudeCode;
//   - any folder named skills or .skills.
//
// Names are compared without regard to case. Symlinks in the existing part
// of a path are resolved, and so are those of the home's and the system's
// folders, so neither a link into ~/.claude nor a ~/.claude that is a link
// elsewhere gets through. The home directories are $HOME and the current
// user's entry in the user database (both, when they differ; the latter
// alone when HOME is unset). The lists are AgentFolders, SystemAgentFolders
// and SkillsFolderNames. Each refusal names the path, the folder it falls
// in, who reads that folder, and what to change (another directory, or
// another label).
package config
