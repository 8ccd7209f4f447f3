package transport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

type scanResult struct {
	id       string // "" when no usable id
	idSeen   bool
	method   bool
	response bool
	bad      bool
}

func scanAll(in []byte, chunk int) scanResult {
	var s idScanner
	if chunk <= 0 {
		chunk = len(in) + 1
	}
	for len(in) > 0 {
		n := min(chunk, len(in))
		s.feed(in[:n])
		in = in[n:]
	}
	return scanResult{id: string(s.id), idSeen: s.idSeen, method: s.method, response: s.response, bad: s.bad}
}

func TestScanner(t *testing.T) {
	huge := strings.Repeat("A", 1<<20)
	tests := []struct {
		name string
		in   string
		want scanResult
	}{
		{"response", `{"jsonrpc":"2.0","id":7,"result":{}}`, scanResult{id: "7", idSeen: true, response: true}},
		{"string id", `{"id":"a\"b\\c","result":1}`, scanResult{id: `"a\"b\\c"`, idSeen: true, response: true}},
		{"id after huge member", `{"result":{"text":"` + huge + `"},"id":12}`, scanResult{id: "12", idSeen: true, response: true}},
		{"id before huge member", `{"id":-3,"error":{"message":"` + huge + `"}}`, scanResult{id: "-3", idSeen: true, response: true}},
		{"escaped quotes hide id", `{"result":"\"id\":5,\"x\\\"","id":6}`, scanResult{id: "6", idSeen: true, response: true}},
		{"nested id does not count", `{"result":{"id":1,"a":[{"id":2}]}}`, scanResult{response: true}},
		{"nested id then top id", `{"result":{"id":1},"id":2}`, scanResult{id: "2", idSeen: true, response: true}},
		{"later duplicate wins", `{"id":1,"id":"two","result":0}`, scanResult{id: `"two"`, idSeen: true, response: true}},
		{"escaped member name", `{"\u0069d":4,"\u006d\u0065\u0074\u0068\u006f\u0064":"x"}`, scanResult{id: "4", idSeen: true, method: true}},
		{"request", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, scanResult{id: "3", idSeen: true, method: true}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":9}}`, scanResult{method: true}},
		{"null id", `{"id":null,"result":1}`, scanResult{idSeen: true, response: true}},
		{"object id", `{"id":{"a":1},"result":1}`, scanResult{idSeen: true, response: true}},
		{"bool id", `{"id":true}`, scanResult{idSeen: true}},
		{"id too long", `{"id":"` + strings.Repeat("x", maxIDLen) + `"}`, scanResult{idSeen: true}},
		{"number id forms", `{"id":1.5e3 , "result":[]}`, scanResult{id: "1.5e3", idSeen: true, response: true}},
		{"white space", " \t{ \"id\" : 8 }\r", scanResult{id: "8", idSeen: true}},
		{"truncated in id", `{"jsonrpc":"2.0","id":12`, scanResult{}},
		{"truncated in string", `{"id":1,"result":"abc`, scanResult{id: "1", idSeen: true, response: true}},
		{"truncated in name", `{"id":1,"res`, scanResult{id: "1", idSeen: true}},
		{"batch", `[{"id":1,"result":2}]`, scanResult{}},
		{"log line", `INFO starting server {"id":1}`, scanResult{bad: true}},
		{"empty", ``, scanResult{}},
		{"member name not string", `{id:1}`, scanResult{bad: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunk := range []int{0, 1, 2, 7} {
				if got := scanAll([]byte(tt.in), chunk); got != tt.want {
					t.Errorf("chunks of %d: got %+v, want %+v", chunk, got, tt.want)
				}
			}
		})
	}
}

// FuzzScanner holds the scanner to encoding/json on small inputs: on any
// valid JSON object it must find the same top-level "id" (when usable) and
// "method" that encoding/json decodes, whatever pieces it is fed in.
func FuzzScanner(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"skill://a/SKILL.md","text":"x"}]}}`,
		`{"result":{"text":"` + strings.Repeat("B", 3000) + `"},"id":"after"}`,
		`{"id":"esc\"aped\\","error":{"code":-1,"message":"m"}}`,
		`{"a":{"id":1},"b":[{"id":2}],"id":3}`,
		`{"id":1,"id":2}`,
		`{"\u0069\u0064":"u","method":"m"}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"id":5}}`,
		`{"id":null}`,
		`{"id":[1]}`,
		`{"id":-0.5e-3}`,
		`{"id":"` + strings.Repeat("y", 300) + `"}`,
		`{"jsonrpc":"2.0","id":`,
		`{"x":"\\\"","id":4}`,
		`[1,2]`,
		`"id"`,
		`not json`,
		`{}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		whole := scanAll(in, 0)
		if got := scanAll(in, int(chunk)); got != whole {
			t.Fatalf("fed in chunks of %d: %+v; whole: %+v", chunk, got, whole)
		}
		if len(in) > 8<<10 || !json.Valid(in) {
			return
		}
		trimmed := bytes.TrimLeft(in, " \t\r\n")
		if len(trimmed) == 0 || trimmed[0] != '{' {
			if whole.idSeen || whole.method || whole.id != "" {
				t.Fatalf("found members in a non-object: %+v", whole)
			}
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(in, &m); err != nil {
			t.Fatalf("valid object does not decode: %v", err)
		}
		if whole.bad {
			t.Fatalf("valid object called bad")
		}
		rawID, hasID := m["id"]
		_, hasMethod := m["method"]
		_, hasResult := m["result"]
		_, hasError := m["error"]
		want := scanResult{idSeen: hasID, method: hasMethod, response: hasResult || hasError}
		if hasID && len(rawID) <= maxIDLen {
			var v any
			if err := json.Unmarshal(rawID, &v); err != nil {
				t.Fatal(err)
			}
			switch v.(type) {
			case string, float64:
				want.id = string(rawID)
			}
		}
		if whole != want {
			t.Fatalf("scanner %+v, encoding/json %+v", whole, want)
		}
	})
}
