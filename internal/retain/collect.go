package retain

import (
	"fmt"
	"slices"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/store"
)

// A Report is what Collect removed, or would have removed in a dry run.
type Report struct {
	// Dropped are the server caches (catalog, approvals and files) of the
	// origins unused for keep_days.
	Dropped []Unused
	// Eviction is the plan for the other origins' unheld files over
	// max_size; empty when max_size is off.
	Eviction store.Eviction
}

// Collect is skillfs cache gc: the cleaning a mount does at start, now.
// In a dry run it removes nothing and reports what it would remove.
func Collect(st *store.Store, c config.Cache, dryRun bool) (Report, error) {
	var rep Report
	now := time.Now()
	drops, err := UnusedOrigins(st, c.Keep(), now)
	if err != nil {
		return rep, err
	}
	gone := map[string]bool{}
	for _, d := range drops {
		if !dryRun {
			ok, err := st.DropUnused(d.ID, now.Add(-c.Keep()))
			if err != nil {
				return rep, fmt.Errorf("remove %s: %w", d.ID, err)
			}
			if !ok {
				continue // in use since it was listed
			}
		}
		gone[d.ID] = true
		rep.Dropped = append(rep.Dropped, d)
	}
	limit := c.Bound()
	if limit <= 0 {
		return rep, nil
	}
	ids, err := Origins(st)
	if err != nil {
		return rep, err
	}
	ids = slices.DeleteFunc(ids, func(id string) bool { return gone[id] })
	held, err := Held(st)
	if err != nil {
		return rep, err
	}
	objs, err := st.Objects(ids)
	if err != nil {
		return rep, err
	}
	rep.Eviction = store.PlanEviction(objs, limit, held)
	if !dryRun {
		if err := st.Evict(rep.Eviction); err != nil {
			return rep, err
		}
	}
	return rep, nil
}
