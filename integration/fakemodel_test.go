//go:build linux

package integration

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// fakeModel is a model API on 127.0.0.1 that speaks the wire of the three
// hosts the suite drives: Anthropic's Messages API (Claude Code), Gemini's
// generateContent (Gemini CLI) and OpenAI's Responses API (Codex). Every
// request body is kept. In a turn that offers the host's file tool, it asks
// for the files of reads one by one, by the host's own tool, and records
// what the tool returned; once every file was read, it answers "done".
// Requests that offer no such tool (titles, routing, quotas) get a short
// text or the JSON they ask for.
type fakeModel struct {
	url   string
	reads []string // the absolute paths to ask the host to read, in order
	// tool is the Anthropic-shaped host's tool to read with: "Read" when
	// empty (an MCP server's tool is mcp__SERVER__TOOL in Claude Code).
	tool string

	mu      sync.Mutex
	bodies  []fakeRequest
	results map[int]string // index into reads → what the host's tool returned
	errs    []string
}

type fakeRequest struct {
	Path string
	Body []byte
}

func newFakeModel(t *testing.T, reads ...string) *fakeModel {
	t.Helper()
	return newFakeModelTool(t, "", reads...)
}

// newFakeModelTool is newFakeModel reading with tool (fakeModel.tool).
func newFakeModelTool(t *testing.T, tool string, reads ...string) *fakeModel {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeModel{url: "http://" + ln.Addr().String(), reads: reads, tool: tool, results: map[int]string{}}
	srv := &http.Server{Handler: http.HandlerFunc(f.serve)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return f
}

func (f *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, fakeRequest{Path: r.URL.Path, Body: body})
	f.mu.Unlock()
	var req map[string]any
	if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil {
		// Probes and telemetry: nothing to say.
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
		return
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
	case strings.HasSuffix(r.URL.Path, "/messages"):
		f.anthropic(w, req)
	case strings.Contains(r.URL.Path, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 100})
	case strings.Contains(r.URL.Path, ":generateContent"), strings.Contains(r.URL.Path, ":streamGenerateContent"):
		f.gemini(w, r, req)
	case strings.HasSuffix(r.URL.Path, "/responses"):
		f.openai(w, req)
	default:
		f.fail("unexpected request %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	}
}

func (f *fakeModel) fail(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

// next records the tool results a request carries (results[i] is the
// answer to the call for reads[i], in the order they were asked) and
// returns the index of the next file to ask for, len(reads) when done.
func (f *fakeModel) next(results []string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range results {
		if i < len(f.reads) {
			f.results[i] = r
		}
	}
	return len(results)
}

// reset forgets the requests and results of an earlier session.
func (f *fakeModel) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies, f.results, f.errs = nil, map[int]string{}, nil
}

// result returns what the host's tool returned for reads[i].
func (f *fakeModel) result(i int) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.results[i]
	return r, ok
}

// requests returns every request the API received, in order.
func (f *fakeModel) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.bodies...)
}

func (f *fakeModel) problems() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errs...)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func sse(w http.ResponseWriter, events ...[2]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	for _, e := range events {
		b, _ := json.Marshal(e[1])
		if name, _ := e[0].(string); name != "" {
			fmt.Fprintf(w, "event: %s\n", name)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}

// findTool reports whether tools (a request's tool list, any of the three
// shapes) offers a tool named name, and returns its parameter schema.
func findTool(tools any, name string) (map[string]any, bool) {
	list, _ := tools.([]any)
	for _, t := range list {
		m, _ := t.(map[string]any)
		if decls, ok := m["functionDeclarations"].([]any); ok { // Gemini
			if s, ok := findTool(decls, name); ok {
				return s, true
			}
			continue
		}
		if fn, ok := m["function"].(map[string]any); ok { // chat completions shape
			m = fn
		}
		if m["name"] == name {
			for _, k := range []string{"input_schema", "parameters", "parametersJsonSchema"} {
				if s, ok := m[k].(map[string]any); ok {
					return s, true
				}
			}
			return map[string]any{}, true
		}
	}
	return nil, false
}

// pathParam is the name of the string parameter of schema that holds a
// file's path.
func pathParam(schema map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	for _, k := range []string{"file_path", "absolute_path", "path"} {
		if _, ok := props[k]; ok {
			return k
		}
	}
	return "file_path"
}

// Claude Code's tool that loads a deferred tool's schema, and the id of
// the fake model's call to it.
const (
	toolSearch = "ToolSearch"
	searchID   = "toolu_search"
)

// anthropic answers a Messages API request, streamed or not.
func (f *fakeModel) anthropic(w http.ResponseWriter, req map[string]any) {
	var content []map[string]any
	stop := "end_turn"
	tool := cmp.Or(f.tool, "Read")
	schema, offered := findTool(req["tools"], tool)
	_, search := findTool(req["tools"], toolSearch)
	// Claude Code defers an MCP server's tools: a model loads them with
	// ToolSearch ("select:NAME") first, as this one does.
	if offered || search && f.tool != "" {
		var results []string
		searched := false
		msgs, _ := req["messages"].([]any)
		for _, m := range msgs {
			blocks, _ := m.(map[string]any)["content"].([]any)
			for _, b := range blocks {
				bm, _ := b.(map[string]any)
				if bm["type"] != "tool_result" {
					continue
				}
				if bm["tool_use_id"] == searchID {
					searched = true
					continue
				}
				results = append(results, anthropicText(bm["content"]))
			}
		}
		switch i := f.next(results); {
		case i >= len(f.reads):
		case offered:
			content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d", i),
				"name": tool, "input": map[string]any{pathParam(schema): f.reads[i]}})
			stop = "tool_use"
		case !searched:
			content = append(content, map[string]any{"type": "tool_use", "id": searchID,
				"name": toolSearch, "input": map[string]any{"query": "select:" + tool}})
			stop = "tool_use"
		default:
			f.fail("%s is not offered after %s loaded it", tool, toolSearch)
		}
	}
	if content == nil {
		content = append(content, map[string]any{"type": "text", "text": "done"})
	}
	model, _ := req["model"].(string)
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10}
	if stream, _ := req["stream"].(bool); !stream {
		writeJSON(w, map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	events := [][2]any{{"message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage}}}}
	for i, c := range content {
		start := map[string]any{}
		var delta map[string]any
		for k, v := range c {
			start[k] = v
		}
		if c["type"] == "tool_use" {
			in, _ := json.Marshal(c["input"])
			start["input"] = map[string]any{}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(in)}
		} else {
			start["text"] = ""
			delta = map[string]any{"type": "text_delta", "text": c["text"]}
		}
		events = append(events,
			[2]any{"content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start}},
			[2]any{"content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta}},
			[2]any{"content_block_stop", map[string]any{"type": "content_block_stop", "index": i}})
	}
	events = append(events,
		[2]any{"message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 10}}},
		[2]any{"message_stop", map[string]any{"type": "message_stop"}})
	sse(w, events...)
}

func anthropicText(c any) string {
	if s, ok := c.(string); ok {
		return s
	}
	var b strings.Builder
	list, _ := c.([]any)
	for _, p := range list {
		if m, _ := p.(map[string]any); m["type"] == "text" {
			s, _ := m["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// gemini answers a generateContent or streamGenerateContent request.
func (f *fakeModel) gemini(w http.ResponseWriter, r *http.Request, req map[string]any) {
	var parts []map[string]any
	tool := "read_file"
	if f.tool != "" {
		tool = f.tool
	}
	if schema, ok := findTool(req["tools"], tool); ok {
		var results []string
		contents, _ := req["contents"].([]any)
		for _, c := range contents {
			ps, _ := c.(map[string]any)["parts"].([]any)
			for _, p := range ps {
				fr, ok := p.(map[string]any)["functionResponse"].(map[string]any)
				if !ok {
					continue
				}
				resp, _ := fr["response"].(map[string]any)
				out, _ := resp["output"].(string)
				if out == "" {
					b, _ := json.Marshal(resp)
					out = string(b)
				}
				results = append(results, out)
			}
		}
		if i := f.next(results); i < len(f.reads) {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": tool,
				"args": map[string]any{pathParam(schema): f.reads[i]}}})
		}
	}
	if parts == nil {
		text := "done"
		if gc, _ := req["generationConfig"].(map[string]any); gc["responseMimeType"] == "application/json" || gc["responseJsonSchema"] != nil || gc["responseSchema"] != nil {
			// The router's classifier asks which model to use.
			text = `{"reasoning":"a test","model_choice":"flash","complexity_reasoning":"a test","complexity_score":10}`
		}
		parts = append(parts, map[string]any{"text": text})
	}
	resp := map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts},
		"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}}
	if strings.Contains(r.URL.Path, ":streamGenerateContent") {
		sse(w, [2]any{nil, resp})
		return
	}
	writeJSON(w, resp)
}

// openai answers a Responses API request (Codex streams it).
func (f *fakeModel) openai(w http.ResponseWriter, req map[string]any) {
	var item map[string]any
	if ns, name, ok := strings.Cut(f.tool, "/"); ok {
		item = f.openaiNamespaced(req, ns, name)
	}
	for _, tool := range []string{"exec_command", "shell"} {
		if f.tool != "" {
			break
		}
		schema, ok := findTool(req["tools"], tool)
		if !ok {
			continue
		}
		var results []string
		input, _ := req["input"].([]any)
		for _, it := range input {
			m, _ := it.(map[string]any)
			if m["type"] == "function_call_output" {
				out, _ := m["output"].(string)
				if out == "" {
					b, _ := json.Marshal(m["output"])
					out = string(b)
				}
				results = append(results, out)
			}
		}
		if i := f.next(results); i < len(f.reads) {
			cmd := "cat " + shellQuote(f.reads[i])
			var args any = map[string]any{"cmd": cmd}
			if props, _ := schema["properties"].(map[string]any); props["cmd"] == nil && props["command"] != nil {
				args = map[string]any{"command": []string{"bash", "-lc", cmd}}
			}
			a, _ := json.Marshal(args)
			item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%02d", i), "call_id": fmt.Sprintf("call_%02d", i),
				"name": tool, "arguments": string(a), "status": "completed"}
		}
		break
	}
	if item == nil {
		item = map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
	}
	usage := map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}
	sse(w,
		[2]any{"response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1", "status": "in_progress"}}},
		[2]any{"response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item}},
		[2]any{"response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item}},
		[2]any{"response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_1", "status": "completed", "usage": usage}}})
}

// openaiNamespaced is the next call of tool name in the namespace ns (how
// Codex offers an MCP server's tools: a namespace mcp__SERVER), or nil
// once every file was read.
func (f *fakeModel) openaiNamespaced(req map[string]any, ns, name string) map[string]any {
	list, _ := req["tools"].([]any)
	offered := false
	for _, t := range list {
		m, _ := t.(map[string]any)
		if m["type"] == "namespace" && m["name"] == ns {
			_, offered = findTool(m["tools"], name)
		}
	}
	if !offered {
		return nil
	}
	var results []string
	input, _ := req["input"].([]any)
	for _, it := range input {
		m, _ := it.(map[string]any)
		if m["type"] == "function_call_output" {
			out, _ := m["output"].(string)
			if out == "" {
				b, _ := json.Marshal(m["output"])
				out = string(b)
			}
			results = append(results, out)
		}
	}
	i := f.next(results)
	if i >= len(f.reads) {
		return nil
	}
	a, _ := json.Marshal(map[string]any{"path": f.reads[i]})
	return map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%02d", i), "call_id": fmt.Sprintf("call_%02d", i),
		"name": name, "namespace": ns, "arguments": string(a), "status": "completed"}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// texts returns every string in a JSON body, decoded, joined by newlines:
// what the model was told, whatever the wire's shape.
func texts(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return string(body)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

var lineNumber = regexp.MustCompile(`(?m)^ *[0-9]+(\t|→)`)
