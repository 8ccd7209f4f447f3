package vfs

// A server's instructions (the instructions of its MCP initialize answer)
// are text it wrote for the model: status.json carries the first
// resolver.MaxInstructions bytes exactly, and servers/LABEL.md quotes them
// as the server's words (internal/render/instructions.go).
//
// Under approval: required they are in no generated file, only counted: a
// server's instructions are not bound to any approval (a server can change
// them on every connect), so showing them, even after the user approved
// some of its skills, would put text the user never consented to in front
// of the model. `skillfs status --json` shows them to the person. Skills
// they name are confirmed with skills/get (resolver.NamedSkills) and, like
// any other skill of such a server, wait for approval.

// sourceNamed is the source of a skill confirmed because the server's
// instructions name it.
const sourceNamed = "instructions"

// instructionsNotShown is why the generated files leave out the
// instructions of a server under approval: required.
const instructionsNotShown = "approval is required for this server, and its instructions are not bound to an approval; the user reads them with `skillfs status --json`"

// modelInstructions leaves out st's instructions when its origin is under
// approval: required.
func modelInstructions(st *OriginStatus, required bool) {
	if st.InstructionsBytes > 0 && required {
		st.Instructions = ""
		st.InstructionsNotShown = instructionsNotShown
	}
}
