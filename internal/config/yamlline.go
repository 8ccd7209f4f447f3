package config

import (
	"bytes"
	"io"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// yaml.v3 names the line of a syntax error from the start of the enclosing
// construct when there is one, and counts it from 0 for parser errors: a
// bad indent on line 4 is reported at line 1, an unclosed "[" on line 4 at
// line 3. The line that matters to a person is the first one after which
// the file cannot be read any more: every prefix of the file up to the line
// before it parses, and none that includes it does.

// maxYAMLLineSearch bounds that search (one decode per line, from the end):
// a config file longer than this keeps yaml's own line.
const maxYAMLLineSearch = 2000

var yamlLinePrefix = regexp.MustCompile(`^line \d+: `)

// fixYAMLLine rewrites the "line N: " of yaml's message msg (for data, which
// did not parse) to the line where the file stops being YAML.
func fixYAMLLine(data []byte, msg string) string {
	if !yamlLinePrefix.MatchString(msg) {
		return msg
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > maxYAMLLineSearch {
		return msg
	}
	// The longest prefix of whole lines that still parses; the next line
	// is where it breaks.
	for n := len(lines) - 1; n >= 0; n-- {
		if yamlParses(bytes.Join(lines[:n], nil)) {
			return yamlLinePrefix.ReplaceAllLiteralString(msg, "line "+strconv.Itoa(n+1)+": ")
		}
	}
	return msg
}

func yamlParses(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
}
