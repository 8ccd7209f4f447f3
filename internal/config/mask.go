package config

import (
	"net/url"
	"strings"
)

// MaskURL hides the parts of a URL that carry credentials: user info
// (written ***@), every query value (key=***) and the fragment (#***).
// The scheme, host, path and query keys stay, so that a person can still
// tell which server and endpoint it is. A URL that does not parse is ***.
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "***"
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://")
	if u.User != nil {
		b.WriteString("***@")
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		maskQuery(&b, u.RawQuery)
	}
	if u.Fragment != "" {
		b.WriteString("#***")
	}
	return b.String()
}

func maskQuery(b *strings.Builder, q string) {
	for i, kv := range strings.Split(q, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		k, _, hasValue := strings.Cut(kv, "=")
		b.WriteString(k)
		if hasValue {
			b.WriteString("=***")
		}
	}
}

// MaskURLs returns s with every URL in it (scheme://…) masked as MaskURL
// masks one: user info, query values and the fragment become ***. It works
// on the text, so it also masks a URL that does not parse, one quoted by
// %q (as net/http's url.Error quotes the request URL, password masked but
// query intact), and one cut short.
//
// A URL ends at white space or one of "'<>`, except that within a URL that
// follows a double quote, an escaped quote (\") does not end it.
func MaskURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	done := 0 // s[:done] is written
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			break
		}
		sep := i + j
		start := sep
		for start > done && schemeChar(s[start-1]) {
			start--
		}
		// A scheme starts with a letter.
		for start < sep && !isLetter(s[start]) {
			start++
		}
		if start == sep {
			i = sep + 3
			continue
		}
		quoted := start > 0 && s[start-1] == '"'
		end := urlEnd(s, sep+3, quoted)
		b.WriteString(s[done:start])
		b.WriteString(maskURLText(s[start:end], sep-start))
		done, i = end, end
	}
	b.WriteString(s[done:])
	return b.String()
}

// urlEnd is where the URL whose authority starts at i ends.
func urlEnd(s string, i int, quoted bool) int {
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted && i+1 < len(s):
			i++
		case c == '"', c == '\'', c == '<', c == '>', c == '`', c <= ' ', c == 0x7f:
			return i
		}
	}
	return len(s)
}

// maskURLText masks u, whose "://" is at sep.
func maskURLText(u string, sep int) string {
	var b strings.Builder
	b.WriteString(u[:sep+3])
	rest := u[sep+3:]
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth := rest[:authEnd]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		b.WriteString("***@")
		auth = auth[at+1:]
	}
	b.WriteString(auth)
	rest = rest[authEnd:]
	frag := ""
	if h := strings.IndexByte(rest, '#'); h >= 0 {
		rest, frag = rest[:h], rest[h:]
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	b.WriteString(path)
	if hasQuery {
		b.WriteByte('?')
		maskQuery(&b, query)
	}
	if frag != "" {
		b.WriteString("#***")
	}
	return b.String()
}

func schemeChar(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
