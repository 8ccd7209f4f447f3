package skillserver

import (
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"
)

// Limits of the Agent Skills specification (agentskills.io/specification)
// on SKILL.md frontmatter, in characters: Unicode code points, as the
// specification's reference validator (skills-ref) counts them.
const (
	maxDescriptionChars   = 1024
	maxCompatibilityChars = 500
)

// agentSkillsProblem says which rule of the Agent Skills specification a
// SKILL.md's frontmatter breaks, or returns "". It covers the optional
// fields and the description's length; the name rules, name == folder and
// a non-blank description are verify.CheckEntry's, which every entry passes
// too. SEP-2640 requires every served skill to conform, and a host (the
// Working Group's TypeScript SDK among them) may skip one that does not, so
// the server refuses it rather than publish what some hosts drop.
//
// Fields the specification does not define (hooks, version, ...) are
// published as they are (and so is allowed-tools as a list, below): the specification does not forbid them, hosts
// ignore or flag them, and authors use them.
func agentSkillsProblem(fm map[string]any) string {
	if d, ok := fm["description"].(string); ok {
		if n := utf8.RuneCountInString(d); n > maxDescriptionChars {
			return fmt.Sprintf("agent-skills: description is %d characters; the Agent Skills specification allows at most %d", n, maxDescriptionChars)
		}
	}
	if v, ok := fm["compatibility"]; ok {
		s, isString := v.(string)
		switch n := utf8.RuneCountInString(s); {
		case !isString:
			return "agent-skills: compatibility is " + kindOfValue(v) + "; the Agent Skills specification requires a string of 1 to 500 characters"
		case n == 0:
			return "agent-skills: compatibility is empty; the Agent Skills specification requires 1 to 500 characters when it is present"
		case n > maxCompatibilityChars:
			return fmt.Sprintf("agent-skills: compatibility is %d characters; the Agent Skills specification allows at most %d", n, maxCompatibilityChars)
		}
	}
	if v, ok := fm["license"]; ok {
		if _, isString := v.(string); !isString {
			return "agent-skills: license is " + kindOfValue(v) + "; the Agent Skills specification requires a string"
		}
	}
	// allowed-tools is a space-separated string in the specification. A
	// YAML list of strings is accepted too, as the one exception: skills in
	// the wild (and this repository's vfs tests) spell it so, every host
	// reads it as the same request, and skillfs only reports it.
	if v, ok := fm["allowed-tools"]; ok && !stringOrStrings(v) {
		return "agent-skills: allowed-tools is " + kindOfValue(v) + "; the Agent Skills specification requires a string of space-separated tool names"
	}
	if v, ok := fm["metadata"]; ok {
		m, isMap := v.(map[string]any)
		if !isMap {
			return "agent-skills: metadata is " + kindOfValue(v) + "; the Agent Skills specification requires a mapping of string keys to string values"
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, isString := m[k].(string); !isString {
				return fmt.Sprintf("agent-skills: metadata.%s is %s; the Agent Skills specification requires string values (quote it in the YAML)", k, kindOfValue(m[k]))
			}
		}
	}
	return ""
}

func stringOrStrings(v any) bool {
	switch x := v.(type) {
	case string:
		return true
	case []any:
		for _, e := range x {
			if _, ok := e.(string); !ok {
				return false
			}
		}
		return true
	}
	return false
}

// kindOfValue names a frontmatter value's JSON kind for a message.
func kindOfValue(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64, int, int64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("a %T", v)
}
