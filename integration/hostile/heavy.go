package hostile

import (
	"encoding/json"
	"strconv"
	"strings"
)

// ModeHeavyList: after the catalog's pages, skills/list pages on forever,
// each of Heavy.Entries generated skills (heavy-N) of Heavy.Resources
// resources with URIs of about Heavy.URILength bytes and a description of
// Heavy.DescriptionLength bytes, each page with a fresh nextCursor. Every
// entry is inside every per-skill limit and real: its files are served
// and pass verification. The listing as a whole is what costs a host:
// with the defaults, a page is about 17 MB of entries holding 51,200
// resources. It is not in Modes(), which TestHostileServers runs side by
// side; it has its own test.
const ModeHeavyList = "heavy-list"

// Heavy shapes the heavy-list mode's pages; zero fields take the defaults
// (the listing of the issue: 100 entries of 512 resources of 230-byte
// URIs, 900-byte descriptions).
type Heavy struct {
	Entries           int // entries per page; default 100
	Resources         int // resources per entry, SKILL.md included; default 512
	URILength         int // length of each resource URI but SKILL.md's; default 230
	DescriptionLength int // length of each frontmatter description; default 900
}

func (h Heavy) withDefaults() Heavy {
	if h.Entries <= 0 {
		h.Entries = 100
	}
	if h.Resources <= 0 {
		h.Resources = 512
	}
	if h.URILength <= 0 {
		h.URILength = 230
	}
	if h.DescriptionLength <= 0 {
		h.DescriptionLength = 900
	}
	return h
}

// HeavySkill returns the entry of heavy-N as the heavy-list mode serves it
// with h, and the honest bytes of each of its files by URI.
func HeavySkill(h Heavy, n int) (Skill, map[string][]byte) {
	d := heavySkill(h.withDefaults(), n)
	sk := Skill{Fixture: ModeHeavyList, Entry: d.entry("", false)}
	files := map[string][]byte{}
	for _, f := range d.files {
		sk.Files = append(sk.Files, File{URI: f.uri, Listed: true, Behaviour: Honest, f: f})
		files[f.uri] = f.gen()
	}
	return sk, files
}

// heavySkill builds heavy-N: SKILL.md and Resources-1 files named
// skill://heavy-N/<padding>/f-NNNNN.txt, the padding split into segments
// of at most 200 bytes so that no segment is over NAME_MAX.
func heavySkill(h Heavy, n int) *skillDef {
	d := heavySkillMD(h, n)
	files := make([]*file, 0, h.Resources)
	files = append(files, d.files[0])
	pad := heavyPadding{h: h, prefix: d.dir() + "/"}
	for i := 1; i < h.Resources; i++ {
		files = append(files, heavyText(pad.uri(i)))
	}
	d.files = files
	return d
}

// heavySkillMD is heavy-N with its SKILL.md alone.
func heavySkillMD(h Heavy, n int) *skillDef {
	name := "heavy-" + strconv.Itoa(n)
	desc := "Heavy skill " + strconv.Itoa(n) + " "
	if pad := h.DescriptionLength - len(desc); pad > 0 {
		desc += strings.Repeat("d", pad)
	}
	return basic(ModeHeavyList, name, desc, "# "+name+"\n\nOne of the heavy listing's skills.\n")
}

// heavyText is the heavy file at uri.
func heavyText(uri string) *file { return text(uri, "heavy file "+uri+"\n") }

// heavyPadding names the files of one heavy skill. The padding depends
// only on the length of a file's leaf name, the same for nearly all of
// them, so it is built once per length rather than once per file.
type heavyPadding struct {
	h       Heavy
	prefix  string // skill://heavy-N/
	leafLen int
	padding string // the segments and their slashes, for leafLen
}

// uri is the URI of file i (1 ≤ i < Resources).
func (p *heavyPadding) uri(i int) string {
	leaf := "f-" + appendPaddedString(i, 5) + ".txt"
	if len(leaf) != p.leafLen || p.padding == "" {
		pad := max(p.h.URILength-len(p.prefix)-len(leaf)-1, 1)
		var segs []string
		for pad > 0 {
			k := min(pad, 200)
			segs = append(segs, strings.Repeat("p", k))
			pad -= k + 1 // the next segment's slash
		}
		p.leafLen, p.padding = len(leaf), strings.Join(segs, "/")+"/"
	}
	return p.prefix + p.padding + leaf
}

// heavyFile returns heavy-N's file at uri, nil if it has none there:
// what resources/read serves, built without the skill's other files.
func heavyFile(h Heavy, n int, uri string) *file {
	d := heavySkillMD(h, n)
	if uri == d.uri {
		return d.files[0]
	}
	leaf := uri[strings.LastIndexByte(uri, '/')+1:]
	digits, ok := strings.CutPrefix(strings.TrimSuffix(leaf, ".txt"), "f-")
	i, err := strconv.Atoi(digits)
	if !ok || err != nil || i < 1 || i >= h.Resources {
		return nil
	}
	pad := heavyPadding{h: h, prefix: d.dir() + "/"}
	if pad.uri(i) != uri {
		return nil
	}
	return heavyText(uri)
}

func appendPaddedString(i, width int) string { return string(appendPadded(nil, i, width)) }

// heavyPage renders page k (k ≥ 1) of the heavy listing.
func (s *Server) heavyPage(k int) json.RawMessage {
	h := s.opts.Heavy.withDefaults()
	entries := make([]json.RawMessage, 0, h.Entries)
	for i := range h.Entries {
		entries = append(entries, marshalEntry(heavySkill(h, (k-1)*h.Entries+i).entry("", false)))
	}
	return joinArray(entries)
}
