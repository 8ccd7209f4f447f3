package config

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// The skillfs section. Unknown keys here are errors, as in a server entry:
// a misspelt limit would otherwise silently leave the default, and a
// misspelt "strict" silently weaken the checks.

var (
	sectionKeys  = []string{"defaults", "servers", "index_max_bytes", "index_available_skills", "cache"}
	defaultsKeys = []string{"strict", "allow_dynamic", "approval", "pass_env", "limits"}
	serverKeys   = []string{"strict", "allow_dynamic", "approval", "pin", "pass_env", "limits"}
)

// originOptions is one level of options; nil means not set at this level.
type originOptions struct {
	strict, allowDynamic *bool
	approval             *Approval
	pin                  []string
	passEnv              []string
	limits               []func(*Limits)
}

func (p *parser) options(section *value, cfg *Config, configured map[string]bool) {
	if section.isNull() {
		return
	}
	sp := keyPath("skillfs")
	if section.kind != mapValue {
		p.errs.add(sp, "write an object with defaults and servers keys (see `skillfs mount --help`)", "is %s, not an object", section.kind)
		return
	}
	for _, k := range section.keys {
		if !contains(sectionKeys, k) {
			fix := unknownKeyFix(k, sectionKeys)
			switch {
			case k == "pin":
				fix = "move it under skillfs.servers.LABEL: pins name one server's skills"
			case contains(serverKeys, k):
				fix = "move it under skillfs.defaults (every server) or skillfs.servers.LABEL (one server)"
			}
			p.errs.add(sp.key(k), fix, "unknown key %q", k)
		}
	}
	p.index(section, sp, cfg)
	p.cache(section, sp, cfg)
	defaults := p.level(section.field("defaults"), sp.key("defaults"), defaultsKeys)

	perServer := map[string]originOptions{}
	if servers := section.field("servers"); !servers.isNull() {
		ssp := sp.key("servers")
		if servers.kind != mapValue {
			p.errs.add(ssp, "write an object mapping server labels to their options", "is %s, not an object", servers.kind)
		} else {
			for _, label := range servers.keys {
				lp := ssp.key(label)
				if !configured[label] {
					p.errs.add(lp, labelsFix(label, configured), "there is no server %q in mcpServers or servers", label)
					continue
				}
				perServer[label] = p.level(servers.fields[label], lp, serverKeys)
			}
		}
	}

	for i := range cfg.Origins {
		o := &cfg.Origins[i]
		if perServer[o.Label].passEnv != nil && o.Kind != Stdio {
			p.errs.add(sp.key("servers").key(o.Label).key("pass_env"), "remove it: only a server skillfs starts (\"command\") has an environment to pass variables to",
				"server %s is reached by URL (%s), not started by skillfs", o.Label, o.Kind)
		}
		for _, lv := range []originOptions{defaults, perServer[o.Label]} {
			if lv.passEnv != nil && o.Kind == Stdio {
				o.PassEnv = append([]string(nil), lv.passEnv...)
			}
			if lv.strict != nil {
				o.Strict = *lv.strict
			}
			if lv.allowDynamic != nil {
				o.AllowDynamic = *lv.allowDynamic
			}
			if lv.approval != nil {
				o.Approval = *lv.approval
			}
			if lv.pin != nil {
				o.Pin = append([]string(nil), lv.pin...)
			}
			// Limits apply key by key, so a server's {budget: 64MiB}
			// keeps the defaults' call_timeout.
			for _, set := range lv.limits {
				set(&o.Limits)
			}
		}
	}
}

// index reads the keys that shape .skillfs/index.md: they are the
// mount's, not any one server's.
func (p *parser) index(section *value, sp keyPath, cfg *Config) {
	if f := section.field("index_max_bytes"); !f.isNull() {
		n, problem := parseSize(f)
		switch {
		case problem != "":
			p.errs.add(sp.key("index_max_bytes"), `write bytes as an integer or with a unit, such as 32KiB, or 0 for the default`, "%s", problem)
		case n != 0 && n < MinIndexMaxBytes:
			p.errs.add(sp.key("index_max_bytes"), fmt.Sprintf("give at least %d (4KiB), or 0 for the default %d (32KiB)", MinIndexMaxBytes, DefaultIndexMaxBytes),
				"%d bytes is too small to hold the servers' health and one skill", n)
		default:
			cfg.Index.MaxBytes = n
		}
	}
	if b, set := p.get.boolean(section, sp, "index_available_skills"); set {
		cfg.Index.AvailableSkills = b
	}
}

// level reads defaults or one server's options.
func (p *parser) level(v *value, path keyPath, known []string) originOptions {
	var o originOptions
	if v.isNull() {
		return o
	}
	if v.kind != mapValue {
		p.errs.add(path, "write an object such as {strict: true, limits: {budget: 64MiB}}", "is %s, not an object", v.kind)
		return o
	}
	for _, k := range v.keys {
		kp := path.key(k)
		if !contains(known, k) {
			fix := unknownKeyFix(k, known)
			switch k {
			case "pin":
				fix = "pins name one server's skills: move it under skillfs.servers.LABEL"
			case "index_max_bytes", "index_available_skills":
				fix = "move it to the top of the skillfs section: it shapes the mount's index.md, not one server's"
			}
			p.errs.add(kp, fix, "unknown key %q", k)
			continue
		}
		switch k {
		case "strict":
			if b, set := p.get.boolean(v, path, k); set {
				o.strict = &b
			}
		case "allow_dynamic":
			if b, set := p.get.boolean(v, path, k); set {
				o.allowDynamic = &b
			}
		case "approval":
			o.approval = p.approval(v.fields[k], kp)
		case "pin":
			o.pin = p.pins(v.fields[k], kp)
		case "pass_env":
			o.passEnv = p.passEnv(v.fields[k], kp)
		case "limits":
			o.limits = parseLimits(v.fields[k], kp, &p.errs)
		}
	}
	return o
}

// approval reads "required" or "off". Anything else is an error rather
// than off: a misspelt "required" must not silently show unapproved skills.
func (p *parser) approval(v *value, path keyPath) *Approval {
	if v.isNull() {
		return nil
	}
	const fix = `write "required" (skills appear only once approved with skillfs approve) or "off"`
	if v.kind != stringValue {
		p.errs.add(path, fix, "is %s, not a string", v.kind)
		return nil
	}
	switch a := Approval(v.text); a {
	case ApprovalOff:
		// Off is the zero value, so that a config that says "off" and
		// one that says nothing load alike.
		off := Approval("")
		return &off
	case ApprovalRequired:
		return &a
	}
	p.errs.add(path, fix, "unknown value %q", v.text)
	return nil
}

// pins reads a list of skill URIs. Only the shape is checked here: a URI
// with a scheme that names a SKILL.md. Package verify checks the rest when
// skills/get answers.
func (p *parser) pins(v *value, path keyPath) []string {
	if v.isNull() {
		return nil
	}
	if v.kind != listValue {
		p.errs.add(path, `write a list of skill URIs, like ["skill://billing/refunds/SKILL.md"]`, "is %s, not a list", v.kind)
		return nil
	}
	out := []string{}
	seen := map[string]bool{}
	for i, e := range v.list {
		ip := path.index(i)
		if e.kind != stringValue {
			p.errs.add(ip, "write the skill's URI as a string", "is %s, not a string", e.kind)
			continue
		}
		if problem := pinProblem(e.text); problem != "" {
			p.errs.add(ip, `write the URI of the skill's SKILL.md, like "skill://billing/refunds/SKILL.md"`, "%q %s", e.text, problem)
			continue
		}
		if !seen[e.text] {
			seen[e.text] = true
			out = append(out, e.text)
		}
	}
	return out
}

// passEnv reads a list of environment variable names.
func (p *parser) passEnv(v *value, path keyPath) []string {
	if v.isNull() {
		return nil
	}
	const fix = `write a list of variable names, like ["SSH_AUTH_SOCK", "HTTPS_PROXY"]`
	if v.kind != listValue {
		p.errs.add(path, fix, "is %s, not a list", v.kind)
		return nil
	}
	out := []string{}
	for i, e := range v.list {
		ip := path.index(i)
		switch {
		case e.kind != stringValue:
			p.errs.add(ip, "write the variable's name as a string", "is %s, not a string", e.kind)
		case !validVarName(e.text):
			p.errs.add(ip, "write a variable's name (letters, digits and _, not starting with a digit), without $ or a value", "%q is not a variable name", e.text)
		case !contains(out, e.text):
			out = append(out, e.text)
		}
	}
	return out
}

func pinProblem(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return "is not a URI with a scheme"
	}
	switch strings.ToLower(u.Scheme) {
	case "file", "http", "https", "data":
		return fmt.Sprintf("has scheme %q, which skillfs never reads skills from", u.Scheme)
	}
	skillPath, ok := strings.CutSuffix(s[len(u.Scheme)+1:], "/SKILL.md")
	if !ok || strings.Trim(skillPath, "/") == "" {
		return "does not name a skill's SKILL.md"
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// unknownKeyFix suggests the closest known key, or lists them all.
func unknownKeyFix(key string, known []string) string {
	if s := suggest(key, known); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return "known keys: " + strings.Join(known, ", ")
}

// labelsFix names the servers a skillfs.servers key could have meant.
func labelsFix(label string, configured map[string]bool) string {
	labels := make([]string, 0, len(configured))
	for l := range configured {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	if s := suggest(label, labels); s != "" {
		return fmt.Sprintf("did you mean %q? (servers: %s)", s, strings.Join(labels, ", "))
	}
	return "use one of the configured labels: " + strings.Join(labels, ", ")
}
