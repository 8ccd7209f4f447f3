package config

import (
	"fmt"
	"strings"
)

// An expandError says what is wrong with a ${…} reference and how to fix it.
type expandError struct{ problem, fix string }

func (e *expandError) Error() string { return e.problem + "; " + e.fix }

// expand replaces ${VAR} and ${VAR:-default} in s.
//
//   - ${VAR} is the variable's value; an unset variable is an error (a
//     server started without its token fails later and more obscurely).
//     A variable set to "" expands to "".
//   - ${VAR:-default} is default when VAR is unset or empty, as in sh.
//     The default is taken literally: it is not expanded again and cannot
//     contain '}'.
//   - ${env:VAR} is VS Code's spelling of ${VAR} and means the same.
//   - ${workspaceFolder} is the config file's folder and ${userHome} is
//     $HOME, as VS Code means them (there the workspace folder is the one
//     holding .vscode/mcp.json's workspace; skillfs has no workspace, and
//     the file's own folder is what its author can see). Neither is read
//     from the environment; a variable named so is reached as
//     ${env:workspaceFolder}.
//   - $${ is a literal "${". Every other '$' is literal, so configs written
//     for hosts that expand nothing keep their meaning.
func expand(s string, getenv func(string) (string, bool), workspace string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i]) // the first '$' of "$${" was already copied
			b.WriteString("{")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", &expandError{
				fmt.Sprintf("%q opens ${ without a closing }", s[i:]),
				"close it, or write $${ for a literal ${",
			}
		}
		ref := s[i+2 : i+end]
		s = s[i+end+1:]
		val, err := lookup(ref, getenv, workspace)
		if err != nil {
			return "", err
		}
		b.WriteString(val)
	}
}

func lookup(ref string, getenv func(string) (string, bool), workspace string) (string, error) {
	if rest, ok := strings.CutPrefix(ref, "input:"); ok {
		return "", &expandError{
			fmt.Sprintf("${input:%s} is a VS Code prompt, which skillfs cannot show", rest),
			"put the value in an environment variable and write ${VAR} instead",
		}
	}
	switch ref {
	case "workspaceFolder":
		if workspace == "" {
			return "", &expandError{
				"${workspaceFolder} is the config file's folder, and this config has no file",
				"write the folder out",
			}
		}
		return workspace, nil
	case "userHome":
		home, ok := getenv("HOME")
		if !ok || home == "" {
			return "", &expandError{
				"${userHome} is $HOME, which is not set",
				"set HOME in the environment skillfs runs in, or write the folder out",
			}
		}
		return home, nil
	}
	ref, _ = strings.CutPrefix(ref, "env:")
	name, def, hasDef := strings.Cut(ref, ":-")
	if !validVarName(name) {
		return "", &expandError{
			fmt.Sprintf("${%s} is not a variable reference", ref),
			"write ${NAME} or ${NAME:-default} with NAME made of letters, digits and _, or $${ for a literal ${",
		}
	}
	val, ok := getenv(name)
	if hasDef && (!ok || val == "") {
		return def, nil
	}
	if !ok {
		return "", &expandError{
			fmt.Sprintf("environment variable %s is not set", name),
			fmt.Sprintf("set %s in the environment skillfs runs in, or give a default: ${%s:-default}", name, name),
		}
	}
	return val, nil
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
