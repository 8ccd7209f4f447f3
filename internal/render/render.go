package render

import "github.com/skillfs/skillfs/internal/control/wire"

// MetaDir is the directory of generated files at the mount's root.
const MetaDir = ".skillfs"

// The generated files under MetaDir, besides ServersDir/LABEL.md.
const (
	IndexJSONFile = "index.json"
	IndexMDFile   = "index.md"
	StatusFile    = "status.json"
	CatalogFile   = "catalog.md"
)

// The states of an origin (status.json's "state"), as the resolver names
// them (wire.OriginState); render does not import the resolver.
const (
	stateConnecting = wire.OriginConnecting
	stateConnected  = wire.OriginConnected
	stateNoSkills   = wire.OriginNoSkills
	stateOffline    = wire.OriginOffline
	stateFailed     = wire.OriginFailed
	stateGaveUp     = wire.OriginGaveUp
	stateStopped    = wire.OriginStopped
)

// A Snapshot is everything the generated files are rendered from, taken
// once by the mount: a plain value, so that every file is a pure function
// of it.
type Snapshot struct {
	// Index is the model's view (vfs's modelIndex): under approval:
	// required, skills not approved and rejected ones are only counted.
	Index Index
	// Status is status.json as the model sees it.
	Status Status
	// Mount is the absolute mountpoint, "" when not known.
	Mount string
	// Bound is the bound of index.md, servers/LABEL.md and catalog.md
	// (config.Index.Bound).
	Bound int
	// AvailableSkills appends the <available_skills> block to index.md
	// (index_available_skills).
	AvailableSkills bool
}

// IndexMD renders index.md.
func IndexMD(s *Snapshot) []byte { return newView(s).renderIndex() }

// ServerMD renders servers/LABEL.md, false when no origin is labelled so.
func ServerMD(s *Snapshot, label string) ([]byte, bool) {
	v := newView(s)
	for _, si := range v.servers {
		if si.label == label {
			return v.renderServer(si), true
		}
	}
	return nil, false
}
