package store

// flagsName holds the content flags found in the SKILL.md files verified
// under each entry, so that index.json shows them after a restart before
// the files are read again. Like catalog.json it is informational: bytes
// are served only when they hash to their digest, whatever it says.
const flagsName = "flags.json"

// maxFlagsSize bounds flags.json.
const maxFlagsSize = 16 << 20
