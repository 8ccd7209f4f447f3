package integrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
)

// HookTimeout is the timeout, in seconds, of the hook skillfs adds.
const HookTimeout = 10

// editJSON is the JSON object cur with skillfs's hook and list entries
// made f.Parts. It returns cur itself when nothing changes, so that a
// file whose formatting is the user's is not rewritten for nothing.
func editJSON(f File, cur []byte, existed bool, added map[string][]string) ([]byte, map[string][]string, error) {
	top, err := parseObject(cur, existed, f.Path)
	if err != nil {
		return nil, nil, err
	}
	hook := ""
	lists := map[string][]string{}
	members := map[string]json.RawMessage{}
	var paths [][]string
	for _, p := range f.Parts {
		switch {
		case p.Hook != "":
			hook = p.Hook
		case len(p.Member) > 0:
			members[memberKey+strings.Join(p.Member, ".")] = p.JSON
		case len(p.List) > 0:
			k := strings.Join(p.List, ".")
			if _, ok := lists[k]; !ok {
				paths = append(paths, p.List)
			}
			lists[k] = append(lists[k], p.Value)
		}
	}
	for k := range added {
		if strings.HasPrefix(k, memberKey) {
			if _, ok := members[k]; !ok {
				members[k] = nil
			}
			continue
		}
		if _, ok := lists[k]; !ok {
			lists[k] = nil
			paths = append(paths, strings.Split(k, "."))
		}
	}
	slices.SortFunc(paths, func(a, b []string) int { return strings.Compare(strings.Join(a, "."), strings.Join(b, ".")) })
	changed, err := editHook(top, hook, f.Path)
	if err != nil {
		return nil, nil, err
	}
	nextAdded := map[string][]string{}
	for _, p := range paths {
		k := strings.Join(p, ".")
		c, ours, err := editList(top, p, lists[k], added[k], f.Path)
		if err != nil {
			return nil, nil, err
		}
		changed = changed || c
		if len(ours) > 0 {
			nextAdded[k] = ours
		}
	}
	for _, k := range slices.Sorted(maps.Keys(members)) {
		var had string
		if h := added[k]; len(h) > 0 {
			had = h[0]
		}
		c, ours, err := editMember(top, strings.Split(strings.TrimPrefix(k, memberKey), "."), members[k], had, f.Path)
		if err != nil {
			return nil, nil, err
		}
		changed = changed || c
		if ours != "" {
			nextAdded[k] = []string{ours}
		}
	}
	if !changed {
		return cur, nextAdded, nil
	}
	return append(top.marshal(""), '\n'), nextAdded, nil
}

// memberKey starts the record's key of an object member skillfs wrote
// (Part.Member), beside the key paths of lists.
const memberKey = "="

// editMember makes the member at key path p want (nil: take skillfs's out).
// had is the compact JSON skillfs last wrote there ("" when it wrote
// none). A member skillfs did not write is the user's: never overwritten
// (an error says so) and never removed; one skillfs wrote and someone
// changed since is overwritten only by a write, left by a removal. It
// returns whether the object changed and the compact JSON of skillfs's
// member now ("" for none).
func editMember(top *object, p []string, want json.RawMessage, had, target string) (bool, string, error) {
	objs := []*object{top}
	o := top
	what := target
	for _, k := range p[:len(p)-1] {
		what += fmt.Sprintf(": %q", k)
		if !o.has(k) && want == nil {
			return false, "", nil
		}
		child, err := parseObject(o.get(k), o.has(k), what)
		if err != nil {
			return false, "", err
		}
		objs, o = append(objs, child), child
	}
	last := p[len(p)-1]
	what += fmt.Sprintf(": %q", last)
	cur := ""
	if o.has(last) {
		cur = string(compact(o.get(last)))
	}
	if want != nil {
		w := string(compact(want))
		switch {
		case cur == w && had == "":
			return false, "", nil // the user's own, the same
		case cur == w:
			return false, w, nil
		case cur != "" && had == "":
			return false, "", fmt.Errorf("integrate: %s is already there and is not skillfs's: left alone (rename or remove it, then run this again)", what)
		}
		o.set(last, json.RawMessage(w))
	} else {
		if cur == "" || had == "" || cur != had {
			return false, "", nil // absent, the user's, or changed by the user since
		}
		o.del(last)
	}
	for i := len(p) - 2; i >= 0; i-- {
		parent, child := objs[i], objs[i+1]
		if len(child.keys) == 0 && want == nil {
			parent.del(p[i])
		} else {
			parent.set(p[i], child.marshal(""))
		}
	}
	if want == nil {
		return true, "", nil
	}
	return true, string(compact(want)), nil
}

// editHook puts skillfs's SessionStart hook of command in place (the
// first hook of skillfs's, in its group, takes it; any other goes; none:
// a group of its own at the end), or takes every hook of skillfs's out
// when command is "". A group left with no hook goes. The user's hooks,
// in skillfs's group or any other, stay.
func editHook(top *object, command, target string) (bool, error) {
	if command == "" && !top.has("hooks") {
		return false, nil
	}
	hooks, err := parseObject(top.get("hooks"), top.has("hooks"), target+`: "hooks"`)
	if err != nil {
		return false, err
	}
	var groups []json.RawMessage
	if raw := hooks.get("SessionStart"); raw != nil {
		if err := json.Unmarshal(raw, &groups); err != nil {
			return false, fmt.Errorf("integrate: %s: \"hooks\".\"SessionStart\" is not a list: left alone", target)
		}
	} else if command == "" {
		return false, nil
	}
	ours, _ := json.Marshal(hookObject{Type: "command", Command: command, Timeout: HookTimeout})
	placed, changed := false, false
	next := make([]json.RawMessage, 0, len(groups)+1)
	for _, g := range groups {
		ng, p, c := editHookGroup(g, ours, command != "" && !placed)
		placed, changed = placed || p, changed || c
		if ng != nil {
			next = append(next, ng)
		}
	}
	if command != "" && !placed {
		g, _ := json.Marshal(struct {
			Matcher string       `json:"matcher"`
			Hooks   []hookObject `json:"hooks"`
		}{"", []hookObject{{Type: "command", Command: command, Timeout: HookTimeout}}})
		next, changed = append(next, g), true
	}
	if !changed {
		return false, nil
	}
	if len(next) == 0 {
		hooks.del("SessionStart")
	} else {
		b, _ := json.Marshal(next)
		hooks.set("SessionStart", b)
	}
	if len(hooks.keys) == 0 {
		top.del("hooks")
	} else {
		top.set("hooks", hooks.marshal(""))
	}
	return true, nil
}

// editHookGroup is the SessionStart group g with skillfs's hooks taken
// out of it, but for ours in place of the first when place; nil when only
// skillfs's hooks were in it. A group it cannot read stays as it is. It
// also returns whether ours was placed and whether the group changed.
func editHookGroup(g json.RawMessage, ours []byte, place bool) (json.RawMessage, bool, bool) {
	group, err := parseObject(g, true, "")
	if err != nil || !group.has("hooks") {
		return g, false, false
	}
	var list []json.RawMessage
	if json.Unmarshal(group.get("hooks"), &list) != nil {
		return g, false, false
	}
	placed, changed := false, false
	kept := make([]json.RawMessage, 0, len(list))
	touched := false
	for _, h := range list {
		if !IsOurHook(h) {
			kept = append(kept, h)
			continue
		}
		touched = true
		if place && !placed {
			placed = true
			if !bytes.Equal(compact(h), ours) {
				changed = true
			}
			kept = append(kept, ours)
			continue
		}
		changed = true
	}
	switch {
	case !touched:
		return g, placed, changed
	case len(kept) == 0:
		// Only skillfs's hooks were in it.
		return nil, placed, changed
	}
	b, _ := json.Marshal(kept)
	group.set("hooks", b)
	return group.marshal(""), placed, changed
}

type hookObject struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

// IsOurHook reports whether a hook object runs skillfs's catalog hook:
// its command's first word is a program whose name starts with skillfs
// (skillfs, or a renamed build such as skillfs-1.2) and the next are
// `catalog --hook claude-code`.
func IsOurHook(raw json.RawMessage) bool {
	var h struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(raw, &h) != nil {
		return false
	}
	w := shellWords(h.Command)
	return len(w) >= 4 && strings.HasPrefix(path.Base(w[0]), "skillfs") && w[1] == "catalog" && w[2] == "--hook" && w[3] == "claude-code"
}

// shellWords splits s into words as a POSIX shell would for the forms
// ShellQuote writes: unquoted words and single-quoted strings.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, in = true, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// editList makes skillfs's entries of the list of strings at key path p
// want: an entry skillfs added before (had) that is not wanted goes; a
// wanted one missing is added and is skillfs's; a wanted one the user
// already has stays theirs (a removal leaves it). It returns whether the
// object changed and skillfs's entries now.
func editList(top *object, p []string, want, had []string, target string) (bool, []string, error) {
	objs := []*object{top}
	o := top
	what := target
	for _, k := range p[:len(p)-1] {
		what += fmt.Sprintf(": %q", k)
		if !o.has(k) && len(want) == 0 {
			return false, nil, nil
		}
		child, err := parseObject(o.get(k), o.has(k), what)
		if err != nil {
			return false, nil, err
		}
		objs, o = append(objs, child), child
	}
	last := p[len(p)-1]
	what += fmt.Sprintf(": %q", last)
	if !o.has(last) && len(want) == 0 {
		return false, nil, nil
	}
	var list []json.RawMessage
	if o.has(last) {
		if err := json.Unmarshal(o.get(last), &list); err != nil {
			return false, nil, fmt.Errorf("integrate: %s is not a list: left alone", what)
		}
	}
	str := func(raw json.RawMessage) (string, bool) {
		var s string
		return s, json.Unmarshal(raw, &s) == nil
	}
	changed := false
	var ours []string
	kept := list[:0:0]
	present := map[string]bool{}
	for _, raw := range list {
		s, ok := str(raw)
		if ok && slices.Contains(had, s) && !slices.Contains(want, s) {
			changed = true
			continue
		}
		if ok {
			present[s] = true
			if slices.Contains(had, s) && !slices.Contains(ours, s) {
				ours = append(ours, s)
			}
		}
		kept = append(kept, raw)
	}
	for _, s := range want {
		if present[s] {
			continue
		}
		b, _ := json.Marshal(s)
		kept, changed = append(kept, b), true
		present[s] = true
		ours = append(ours, s)
	}
	if !changed {
		return false, ours, nil
	}
	if len(kept) == 0 {
		o.del(last)
	} else {
		b, _ := json.Marshal(kept)
		o.set(last, b)
	}
	// Each object on the path goes back into its parent; one left empty
	// by a removal goes.
	for i := len(p) - 2; i >= 0; i-- {
		parent, child := objs[i], objs[i+1]
		if len(child.keys) == 0 && len(want) == 0 {
			parent.del(p[i])
		} else {
			parent.set(p[i], child.marshal(""))
		}
	}
	return true, ours, nil
}

// An object is a JSON object whose keys keep their order.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseObject parses b as a JSON object; an absent one (!present, or
// only white space) is empty.
func parseObject(b []byte, present bool, what string) (*object, error) {
	o := &object{vals: map[string]json.RawMessage{}}
	if !present || len(bytes.TrimSpace(b)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	bad := fmt.Errorf("integrate: %s is not a JSON object: left alone (fix it, or make the change by hand)", what)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, bad
	}
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok {
			return nil, bad
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, bad
		}
		o.set(k, v)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, bad
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad
	}
	return o, nil
}

func (o *object) has(k string) bool            { _, ok := o.vals[k]; return ok }
func (o *object) get(k string) json.RawMessage { return o.vals[k] }

func (o *object) set(k string, v json.RawMessage) {
	if !o.has(k) {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) del(k string) {
	delete(o.vals, k)
	o.keys = slices.DeleteFunc(o.keys, func(x string) bool { return x == k })
}

// marshal writes o indented by two spaces, keys in order.
func (o *object) marshal(prefix string) []byte {
	if len(o.keys) == 0 {
		return []byte("{}")
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, k := range o.keys {
		key, _ := json.Marshal(k)
		b.WriteString(prefix + "  ")
		b.Write(key)
		b.WriteString(": ")
		var v bytes.Buffer
		if json.Indent(&v, o.vals[k], prefix+"  ", "  ") != nil {
			v.Reset()
			v.Write(o.vals[k])
		}
		b.Write(v.Bytes())
		if i < len(o.keys)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(prefix + "}")
	return b.Bytes()
}
