package hostile

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Modes whose words are made to act on a terminal, not in Modes(): every
// string the server controls that skillfs's CLI may print carries
// TerminalEscapes.
const (
	// ModeTerminalEscapes serves, besides the fixtures, EscapesSkill
	// (honest: its SKILL.md body carries TerminalEscapes, byte for byte
	// EscapesSkillMD), EscapesDescribed (the same, its description too),
	// and EscapesUnreadable, whose SKILL.md read fails with an error whose
	// message is TerminalEscapes; skills/get of any URI it does not serve
	// fails with that message too.
	ModeTerminalEscapes = "terminal-escapes"
	// ModeRefuseInitialize answers initialize (and server/discover, its
	// 2026-07-28 counterpart) with a JSON-RPC error whose
	// message is TerminalEscapes: the server fails to start, and says why.
	ModeRefuseInitialize = "refuse-initialize"
)

// TerminalEscapes is text that acts on a terminal: a CSI colour, BEL, an
// OSC that sets the window title, a C1 CSI (U+009B) that clears the
// screen, a carriage return, a bidi override (U+202E), then a line that
// would pass for skillfs's own.
const TerminalEscapes = "\x1b[31mred\x1b[0m \a \x1b]0;pwned-title\a \u009b2J \r\u202Eevil\u202C \x1b[2K\x1b[1Gskillfs: all good"

// The skills of ModeTerminalEscapes.
const (
	EscapesSkill      = "escapes"
	EscapesDescribed  = "escapes-described"
	EscapesUnreadable = "escapes-unreadable"
)

// EscapesSkillMD is the SKILL.md EscapesSkill serves.
var EscapesSkillMD = string(skillMD(EscapesSkill, "A skill whose body acts on a terminal", "",
	"# Escapes\n\n"+TerminalEscapes+"\n\nThe end.\n"))

// ErrorEscapes: resources/read fails with TerminalEscapes as its message.
const ErrorEscapes Behaviour = "error-escapes"

func escapesSkills() []*skillDef {
	plain := basic(ModeTerminalEscapes, EscapesSkill, "A skill whose body acts on a terminal", "# Escapes\n\n"+TerminalEscapes+"\n\nThe end.\n")
	described := basic(ModeTerminalEscapes, EscapesDescribed, "Described as "+TerminalEscapes, "# Escapes\n")
	unreadable := basic(ModeTerminalEscapes, EscapesUnreadable, "A skill whose SKILL.md cannot be read", "# Unreadable\n")
	unreadable.files[0].read = ErrorEscapes
	return []*skillDef{plain, described, unreadable}
}

func escapesError() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: TerminalEscapes}
}

// refuseInitialize fails initialize in ModeRefuseInitialize.
func (s *Server) refuseInitialize(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if (method == "initialize" || method == "server/discover") && s.opts.Mode == ModeRefuseInitialize {
			return nil, escapesError()
		}
		return next(ctx, method, req)
	}
}
