package main

import (
	"fmt"

	"github.com/skillfs/skillfs/internal/control"
)

// startingLine is status's line for a mount that is starting: how many
// servers have listed, and the skills so far.
func startingLine(st control.StatusReport) string {
	listed, skills := 0, 0
	for _, s := range st.Servers {
		if s.State != "connecting" {
			listed++
		}
		skills += s.Skills
	}
	return fmt.Sprintf("starting: %d of %d servers listed (%d skills so far); the tree is mounted once every server has listed or --startup-timeout passes", listed, len(st.Servers), skills)
}
