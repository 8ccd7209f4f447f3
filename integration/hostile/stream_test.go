package hostile_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net"
	"strconv"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/internal/skill"
)

// The tests read multi-MiB texts and pages by streaming them: a go-sdk
// client decodes a 16 MiB frame through several full copies (about
// twenty bytes allocated for each byte received), which made the few
// big reads most of the package's CPU time. A streamed message is walked
// once as it arrives and kept only as far as a test asks: a text's
// length, digest and first bytes, an array's length, one raw element.

// rawSession serves one session of s over a pipe to a rawClient (the
// older protocol: the messages the tests stream do not depend on it).
func rawSession(t *testing.T, s *hostile.Server) *rawClient {
	t.Helper()
	c1, c2 := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, &mcp.IOTransport{Reader: c1, Writer: c1}) }()
	t.Cleanup(func() {
		c2.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return newRawClient(t, c2, c2)
}

// A textSum describes a text without keeping it: its length in bytes,
// its sha256 and its first headSize bytes.
type textSum struct {
	size int64
	h    hash.Hash
	head []byte
}

const headSize = 64 << 10

func newTextSum() *textSum { return &textSum{h: sha256.New()} }

func (s *textSum) Write(p []byte) (int, error) {
	s.size += int64(len(p))
	s.h.Write(p)
	if n := min(len(p), headSize-len(s.head)); n > 0 {
		s.head = append(s.head, p[:n]...)
	}
	return len(p), nil
}

func (s *textSum) digest() skill.Digest {
	return skill.FormatDigest([sha256.Size]byte(s.h.Sum(nil)))
}

// A streamedContent is one content of a streamed resources/read result.
type streamedContent struct {
	URI  string
	Text *textSum // nil when the content has no text
	Blob bool
}

// readStreamed reads uri on c, streaming the texts of its contents.
func (c *rawClient) readStreamed(uri string) ([]*streamedContent, error) {
	var contents []*streamedContent
	err := c.stream("resources/read", map[string]any{"uri": uri}, func(w *jsonWalker) error {
		return w.object(func(key string) error {
			if key != "contents" {
				return w.skip()
			}
			return w.array(func(int) error {
				sc := &streamedContent{}
				contents = append(contents, sc)
				return w.object(func(key string) error {
					switch key {
					case "uri":
						return w.small(&sc.URI)
					case "text":
						sc.Text = newTextSum()
						return w.str(sc.Text)
					case "blob":
						sc.Blob = true
					}
					return w.skip()
				})
			})
		})
	})
	return contents, err
}

// readText reads uri on c and returns its one content's text.
func (c *rawClient) readText(uri string) (*textSum, error) {
	contents, err := c.readStreamed(uri)
	switch {
	case err != nil:
		return nil, err
	case len(contents) != 1 || contents[0].URI != uri || contents[0].Text == nil:
		return nil, fmt.Errorf("read %s: %d contents, not one text for it", uri, len(contents))
	}
	return contents[0].Text, nil
}

// stream sends a request and walks its response's result with walk,
// skipping the messages before it; a JSON-RPC error is returned as one.
func (c *rawClient) stream(method string, params any, walk func(*jsonWalker) error) error {
	c.id++
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params}); err != nil {
		return err
	}
	w := &jsonWalker{r: c.r}
	for {
		var id *int
		var rpcErr *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		}
		walked := false
		err := w.object(func(key string) error {
			switch key {
			case "id":
				return w.small(&id)
			case "error":
				return w.small(&rpcErr)
			case "result":
				// go-sdk writes the id first; a result for another
				// request is skipped.
				if id == nil || *id != c.id {
					return w.skip()
				}
				walked = true
				return walk(w)
			}
			return w.skip()
		})
		if err == nil {
			err = w.endLine()
		}
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", method, err)
		case id == nil || *id != c.id:
			continue // a notification, or an answer to an earlier request
		case rpcErr != nil:
			return fmt.Errorf("%s: error %d: %.200s", method, rpcErr.Code, rpcErr.Message)
		case !walked:
			return fmt.Errorf("%s: no result", method)
		}
		return nil
	}
}

// A jsonWalker reads JSON values from r in one pass, each as its caller
// directs: an object member by member, an array element by element, a
// string into a writer, anything else skipped or, when small, decoded.
// It fails on what is not JSON rather than guess.
type jsonWalker struct {
	r   *bufio.Reader
	rec *[]byte      // when set, every byte read is appended to it
	n   int64        // bytes read
	key bytes.Buffer // object's keys, reused
}

func (w *jsonWalker) readByte() (byte, error) {
	c, err := w.r.ReadByte()
	if err != nil {
		return 0, err
	}
	w.n++
	if w.rec != nil {
		*w.rec = append(*w.rec, c)
	}
	return c, nil
}

// peek returns the next byte that is not white space, unread.
func (w *jsonWalker) peek() (byte, error) {
	for {
		b, err := w.r.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			if _, err := w.readByte(); err != nil {
				return 0, err
			}
			continue
		}
		return b[0], nil
	}
}

// endLine reads the newline that ends a message, and white space before it.
func (w *jsonWalker) endLine() error {
	for {
		c, err := w.readByte()
		switch {
		case err != nil:
			return err
		case c == '\n':
			return nil
		case c != ' ' && c != '\t' && c != '\r':
			return fmt.Errorf("at byte %d: %q after a message", w.n, c)
		}
	}
}

func (w *jsonWalker) expect(want byte) error {
	c, err := w.peek()
	if err == nil {
		_, err = w.readByte()
	}
	if err == nil && c != want {
		err = fmt.Errorf("at byte %d: %q, want %q", w.n, c, want)
	}
	return err
}

// object walks an object, calling member for each key with the walker
// at the key's value, which member must walk.
func (w *jsonWalker) object(member func(key string) error) error {
	if err := w.expect('{'); err != nil {
		return err
	}
	if c, err := w.peek(); err != nil || c == '}' {
		if err == nil {
			_, err = w.readByte()
		}
		return err
	}
	for {
		w.key.Reset()
		if err := w.str(&w.key); err != nil {
			return err
		}
		key := w.key.String()
		if err := w.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		c, err := w.peek()
		if err == nil {
			_, err = w.readByte()
		}
		switch {
		case err != nil:
			return err
		case c == '}':
			return nil
		case c != ',':
			return fmt.Errorf("at byte %d: %q in an object", w.n, c)
		}
	}
}

// array walks an array, calling element for each index with the walker
// at the element, which element must walk.
func (w *jsonWalker) array(element func(i int) error) error {
	if err := w.expect('['); err != nil {
		return err
	}
	if c, err := w.peek(); err != nil || c == ']' {
		if err == nil {
			_, err = w.readByte()
		}
		return err
	}
	for i := 0; ; i++ {
		if err := element(i); err != nil {
			return err
		}
		c, err := w.peek()
		if err == nil {
			_, err = w.readByte()
		}
		switch {
		case err != nil:
			return err
		case c == ']':
			return nil
		case c != ',':
			return fmt.Errorf("at byte %d: %q in an array", w.n, c)
		}
	}
}

// str walks a string, writing its decoded bytes to sink in pieces,
// which sink must not keep.
func (w *jsonWalker) str(sink io.Writer) error {
	if err := w.expect('"'); err != nil {
		return err
	}
	for {
		// The run of plain bytes the reader holds goes to sink as it is.
		if _, err := w.r.Peek(1); err != nil {
			return err
		}
		buf, _ := w.r.Peek(w.r.Buffered())
		i := 0
		for i < len(buf) && !strSpecial[buf[i]] {
			i++
		}
		if i > 0 {
			sink.Write(buf[:i])
			if w.rec != nil {
				*w.rec = append(*w.rec, buf[:i]...)
			}
			w.n += int64(i)
			w.r.Discard(i)
			continue
		}
		c, err := w.readByte()
		switch {
		case err != nil:
			return err
		case c == '"':
			return nil
		case c < ' ':
			return fmt.Errorf("at byte %d: control byte %#x in a string", w.n, c)
		}
		// An escape.
		if c, err = w.readByte(); err != nil {
			return err
		}
		var out []byte
		switch c {
		case '"', '\\', '/':
			out = []byte{c}
		case 'b':
			out = []byte{'\b'}
		case 'f':
			out = []byte{'\f'}
		case 'n':
			out = []byte{'\n'}
		case 'r':
			out = []byte{'\r'}
		case 't':
			out = []byte{'\t'}
		case 'u':
			r, err := w.hex4()
			if err != nil {
				return err
			}
			if utf16.IsSurrogate(r) {
				// Only a pair is taken: encoding/json's replacements for
				// a lone one are not needed by any text served.
				var r2 rune
				if err = w.expectRaw('\\'); err == nil {
					if err = w.expectRaw('u'); err == nil {
						r2, err = w.hex4()
					}
				}
				if r = utf16.DecodeRune(r, r2); err != nil || r == utf8.RuneError {
					return fmt.Errorf("at byte %d: an unpaired surrogate (%v)", w.n, err)
				}
			}
			out = utf8.AppendRune(nil, r)
		default:
			return fmt.Errorf("at byte %d: escape \\%c", w.n, c)
		}
		sink.Write(out)
	}
}

// strSpecial marks the bytes that end a run of a string's plain bytes.
var strSpecial = func() (t [256]bool) {
	for c := range ' ' {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func (w *jsonWalker) expectRaw(want byte) error {
	c, err := w.readByte()
	if err == nil && c != want {
		err = fmt.Errorf("at byte %d: %q, want %q", w.n, c, want)
	}
	return err
}

func (w *jsonWalker) hex4() (rune, error) {
	var h [4]byte
	for i := range h {
		c, err := w.readByte()
		if err != nil {
			return 0, err
		}
		h[i] = c
	}
	v, err := strconv.ParseUint(string(h[:]), 16, 16)
	if err != nil {
		return 0, fmt.Errorf("at byte %d: \\u%s", w.n, h[:])
	}
	return rune(v), nil
}

// skip walks any value and drops it.
func (w *jsonWalker) skip() error {
	c, err := w.peek()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		return w.object(func(string) error { return w.skip() })
	case '[':
		return w.array(func(int) error { return w.skip() })
	case '"':
		return w.str(io.Discard)
	}
	// A number, true, false or null: its bytes up to the next delimiter,
	// which encoding/json then checks.
	var lit [64]byte
	n := 0
	for ; n < len(lit); n++ {
		b, err := w.r.Peek(1)
		if err != nil || !isLiteralByte(b[0]) {
			break
		}
		lit[n], _ = w.readByte()
	}
	if !json.Valid(lit[:n]) {
		return fmt.Errorf("at byte %d: %q is not a value", w.n, lit[:n])
	}
	return nil
}

func isLiteralByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// small walks a value and decodes it into v with encoding/json, which
// also checks what skip let through.
func (w *jsonWalker) small(v any) error {
	b, err := w.raw()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// raw walks a value and returns its bytes as sent.
func (w *jsonWalker) raw() (json.RawMessage, error) {
	if _, err := w.peek(); err != nil {
		return nil, err
	}
	outer := w.rec
	var b []byte
	if outer == nil {
		w.rec = &b
	}
	start := len(*w.rec)
	err := w.skip()
	got := (*w.rec)[start:]
	if outer == nil {
		w.rec = nil
	} else {
		got = bytes.Clone(got)
	}
	return got, err
}

// TestStreamedReadsAsSDK holds the streaming reads to go-sdk's: the same
// text, by length, digest and head, for every honest file of fixtures
// whose texts need escapes of every kind (HTML, tag characters, bidi
// controls, quotes, line breaks), and blobs seen as blobs.
func TestStreamedReadsAsSDK(t *testing.T) {
	fixtures := []string{hostile.TagChars, hostile.MarkdownSteering, hostile.NestedAllowedTools, hostile.OldRevision}
	s := newServer(t, hostile.Options{Fixtures: fixtures})
	cs, rc := connect(t, s, eraNew), rawSession(t, s)
	texts := 0
	for _, fixture := range append([]string{hostile.HonestA, hostile.HonestB}, fixtures...) {
		skills, err := hostile.Describe(fixture, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, sk := range skills {
			for _, f := range sk.Files {
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: f.URI})
				if err != nil || len(res.Contents) != 1 {
					t.Fatalf("read %s with go-sdk: %v", f.URI, err)
				}
				want := res.Contents[0]
				got, err := rc.readStreamed(f.URI)
				if err != nil || len(got) != 1 || got[0].URI != want.URI {
					t.Fatalf("read %s streamed: %v, %d contents", f.URI, err, len(got))
				}
				if want.Blob != nil {
					if !got[0].Blob || got[0].Text != nil {
						t.Errorf("read %s streamed: not a blob", f.URI)
					}
					continue
				}
				texts++
				sum := got[0].Text
				if sum == nil || sum.size != int64(len(want.Text)) || sum.digest() != sha([]byte(want.Text)) || string(sum.head) != want.Text[:min(len(want.Text), headSize)] {
					t.Errorf("read %s streamed: not go-sdk's text %.100q", f.URI, want.Text)
				}
			}
		}
	}
	if texts < 10 {
		t.Errorf("only %d texts compared", texts)
	}
	if _, err := rc.readText("skill://nowhere/SKILL.md"); err == nil {
		t.Error("a streamed read of an unknown URI succeeded")
	}
}
