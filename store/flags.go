package store

import "fmt"

// flagsName holds the content flags found in the SKILL.md files verified
// under each entry, so that index.json shows them after a restart before
// the files are read again. Like catalog.json it is informational: bytes
// are served only when they hash to their digest, whatever it says.
const flagsName = "flags.json"

// maxFlagsSize bounds flags.json.
const maxFlagsSize = 16 << 20

// SaveFlags atomically replaces the origin's flags.json (mode 0600).
func (o *Bucket) SaveFlags(data []byte) error {
	if o.removed.Load() {
		return fmt.Errorf("save flags of %s: %w", o.id, ErrRemoved)
	}
	if len(data) > maxFlagsSize {
		return fmt.Errorf("save flags of %s: %d bytes: %w (cap %d)", o.id, len(data), ErrTooLarge, maxFlagsSize)
	}
	if err := o.writeAtomic(flagsName, data, 0o600, false); err != nil {
		return fmt.Errorf("save flags of %s: %w", o.id, err)
	}
	return nil
}

// LoadFlags returns the saved flags.json, or ErrNotFound. One that is not
// a regular file or is over its cap is removed and logged.
func (o *Bucket) LoadFlags() ([]byte, error) {
	return o.loadFile("flags", flagsName, maxFlagsSize)
}
