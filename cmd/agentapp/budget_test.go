package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/budget"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordedRequest is what the fake provider saw of one request.
type recordedRequest struct {
	Tools    []string
	Messages []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		Name       string `json:"name"`
		ToolCallID string `json:"tool_call_id"`
	}
}

// fakeProvider is an OpenAI-compatible server that records the requests
// and plays a model that follows what it is offered: it calls dump when
// offered, searches for tool_42 when it is deferred, calls it once
// loaded, reads one page of a cut result through its handle, and then
// answers.
type fakeProvider struct {
	mu   sync.Mutex
	reqs []recordedRequest
}

var handleRE = regexp.MustCompile(`readToolResult \{"id":"(tr_[0-9a-f]+)","offset":(\d+)\}`)

func (f *fakeProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Stream   bool            `json:"stream"`
		Messages json.RawMessage `json:"messages"`
		Tools    []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var rec recordedRequest
	for _, t := range body.Tools {
		rec.Tools = append(rec.Tools, t.Function.Name)
	}
	if err := json.Unmarshal(body.Messages, &rec.Messages); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, rec)
	f.mu.Unlock()

	name, args := f.decide(rec)
	if body.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		delta, finish := fmt.Sprintf(`{"role":"assistant","content":%q}`, "done"), "stop"
		if name != "" {
			delta = fmt.Sprintf(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":%q,"arguments":%q}}]}`, len(f.reqs), name, args)
			finish = "tool_calls"
		}
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", delta)
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%q}]}\n\ndata: [DONE]\n\n", finish)
		return
	}
	msg, finish := `{"role":"assistant","content":"done"}`, "stop"
	if name != "" {
		msg = fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":%q,"arguments":%q}}]}`, len(f.reqs), name, args)
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, msg, finish)
}

// decide is the fake model: the tool to call and its arguments, or "" to
// answer.
func (f *fakeProvider) decide(rec recordedRequest) (string, string) {
	last := rec.Messages[len(rec.Messages)-1]
	offered := func(n string) bool { return slices.Contains(rec.Tools, n) }
	if last.Role == "user" {
		switch {
		case offered("dump"):
			return "dump", "{}"
		case offered("tool_42"):
			return "tool_42", "{}"
		case offered("searchTools") && strings.Contains(last.Content, "giant"):
			return "searchTools", `{"query":"giant"}`
		case offered("searchTools"):
			return "searchTools", `{"query":"tool_42"}`
		}
		return "", ""
	}
	if last.Role != "tool" {
		return "", ""
	}
	if m := handleRE.FindStringSubmatch(last.Content); m != nil && !strings.HasPrefix(last.Content, "[Result ") && !strings.Contains(last.Content, "\n[Result tr_") {
		return "readToolResult", fmt.Sprintf(`{"id":%q,"offset":%s}`, m[1], m[2])
	}
	if strings.HasPrefix(last.Content, "Found ") && offered("tool_42") {
		return "tool_42", "{}"
	}
	return "", ""
}

func (f *fakeProvider) requests() []recordedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := slices.Clone(f.reqs)
	f.reqs = nil
	return r
}

// bigMCPServer serves an MCP server over HTTP on loopback with a dump tool
// returning about 3 MB, and n more tools tool_00… . They are declared
// read-only, so the default permission policy runs them without asking.
func bigMCPServer(t *testing.T, big string, n int) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	if big != "" {
		srv.AddTool(&mcp.Tool{Name: "dump", Description: "Dump every row of the table.", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, nil
			})
	}
	for i := range n {
		name := fmt.Sprintf("tool_%02d", i)
		srv.AddTool(&mcp.Tool{Name: name, Description: fmt.Sprintf("Tool number %d: does thing %d to a record.", i, i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"recordId":{"type":"string"}}}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + name}}}, nil
			})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// budgetEnv points the chat at the fake provider, in a directory of its
// own with a config file of servers.
func budgetEnv(t *testing.T, servers string) (*fakeProvider, string) {
	t.Helper()
	chatEnv(t)
	f := &fakeProvider{}
	hs := httptest.NewServer(f)
	t.Cleanup(hs.Close)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", hs.URL+"/v1")
	t.Setenv("OPENAI_MODEL", "gpt-4o")
	t.Setenv("AGENTAPP_DATA_DIR", t.TempDir())
	dir := t.TempDir()
	t.Chdir(dir)
	cfg := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(cfg, []byte(servers), 0o600); err != nil {
		t.Fatal(err)
	}
	return f, cfg
}

// TestChatCutsLargeResult: an MCP server's 3 MB result through the real
// OpenAI client: every request the provider gets stays under the server's
// maxOutputTokens per message, the model reads on through readToolResult,
// and the cut is in stream-json's tool_result and on the terminal's line.
func TestChatCutsLargeResult(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, `{"row":%d,"状态":"已发货 shipped"}`+"\n", i)
	}
	big := b.String()
	url := bigMCPServer(t, big, 0)
	f, cfg := budgetEnv(t, `{"mcpServers": {"big": {"url": "`+url+`/mcp", "maxOutputTokens": 4000}}}`)

	out, stderr, code := runChatCLI(t, "", "chat", "--config", cfg, "-p", "dump the table", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var cut map[string]any
	var page string
	for line := range strings.Lines(out) {
		var ev struct {
			Type   string          `json:"type"`
			Tool   string          `json:"tool"`
			Output json.RawMessage `json:"output"`
			Cut    map[string]any  `json:"cut"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("stream-json line %q: %v", line, err)
		}
		if ev.Type == "tool_result" && ev.Tool == "dump" {
			cut = ev.Cut
		}
		if ev.Type == "tool_result" && ev.Tool == "readToolResult" {
			_ = json.Unmarshal(ev.Output, &page)
		}
	}
	if cut == nil || cut["bytes"] != float64(len(big)) || cut["id"] == "" || !strings.Contains(fmt.Sprint(cut["notice"]), "dump returned") {
		t.Errorf("stream-json's tool_result of dump: cut %v", cut)
	}
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (dump, one page, the answer)", len(reqs))
	}
	est := budget.NewEstimator(budget.FamilyO200k)
	for i, r := range reqs {
		for _, m := range r.Messages {
			if n := est.Text(m.Content); n > 4000 {
				t.Errorf("request %d carries a %s message of %d tokens, over the server's maxOutputTokens 4000", i+1, m.Role, n)
			}
		}
	}
	if !slices.Contains(reqs[1].Tools, "readToolResult") || slices.Contains(reqs[0].Tools, "readToolResult") {
		t.Errorf("readToolResult offered in requests 1 and 2: %v / %v; want only after the cut", reqs[0].Tools, reqs[1].Tools)
	}
	body, _, ok := strings.Cut(page, "\n[Result ")
	if !ok || body == "" || !strings.Contains(big, body+"\n") {
		t.Errorf("the page read is not part of the result: %q", page[:min(200, len(page))])
	}

	// --output-format json: the step has the cut too.
	out, stderr, code = runChatCLI(t, "", "chat", "--config", cfg, "-p", "dump the table", "--output-format", "json")
	var answer struct {
		Steps []struct {
			Tool string         `json:"tool"`
			Cut  map[string]any `json:"cut"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &answer); code != 0 || err != nil || len(answer.Steps) == 0 ||
		answer.Steps[0].Tool != "dump" || answer.Steps[0].Cut["bytes"] != float64(len(big)) {
		t.Errorf("--output-format json: exit %d, %v, steps %+v\n%s", code, err, answer.Steps, stderr)
	}
	f.requests()

	// The terminal: a line on stderr says it was cut.
	_, stderr, code = runChatCLI(t, "", "chat", "--config", cfg, "-p", "dump the table")
	if code != 0 || !strings.Contains(stderr, fmt.Sprintf("✂ dump returned %d bytes", len(big))) {
		t.Errorf("exit %d; stderr has no line about the cut:\n%s", code, stderr)
	}
	f.requests()
	// --max-output-tokens caps servers without their own cap.
	cfg2 := filepath.Join(filepath.Dir(cfg), "nocap.json")
	if err := os.WriteFile(cfg2, []byte(`{"mcpServers": {"big": {"url": "`+url+`/mcp"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runChatCLI(t, "", "chat", "--config", cfg2, "-p", "dump the table", "--max-output-tokens", "1000")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for i, r := range f.requests() {
		for _, m := range r.Messages {
			if n := est.Text(m.Content); n > 1000 {
				t.Errorf("--max-output-tokens 1000: request %d carries a %s message of %d tokens", i+1, m.Role, n)
			}
		}
	}
}

// TestChatToolSearch: with 60 MCP tools the first request carries the
// local tools and searchTools only; the search loads tool_42, which the
// model then calls; --continue keeps it loaded; --tool-search off offers
// every tool.
func TestChatToolSearch(t *testing.T) {
	url := bigMCPServer(t, "", 60)
	f, cfg := budgetEnv(t, `{"mcpServers": {"many": {"url": "`+url+`/mcp"}}}`)

	out, stderr, code := runChatCLI(t, "", "chat", "--config", cfg, "-p", "run tool 42", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	reqs := f.requests()
	if len(reqs) < 3 {
		t.Fatalf("%d requests, want search, call, answer; output %s", len(reqs), out)
	}
	for _, n := range reqs[0].Tools {
		if strings.HasPrefix(n, "tool_") {
			t.Errorf("the first request offers the deferred %s: %v", n, reqs[0].Tools)
			break
		}
	}
	if !slices.Contains(reqs[0].Tools, "searchTools") || !slices.Contains(reqs[1].Tools, "tool_42") {
		t.Errorf("searchTools first (%v), then tool_42 loaded (%v)", reqs[0].Tools, reqs[1].Tools)
	}
	if !strings.Contains(out, "ran tool_42") {
		t.Errorf("tool_42 was not called: %s", out)
	}

	_, stderr, code = runChatCLI(t, "", "chat", "--config", cfg, "--continue", "-p", "again")
	if code != 0 {
		t.Fatalf("--continue: exit %d\n%s", code, stderr)
	}
	reqs = f.requests()
	if len(reqs) == 0 || !slices.Contains(reqs[0].Tools, "tool_42") || slices.Contains(reqs[0].Tools, "tool_07") {
		t.Errorf("after --continue the first request offers %v, want tool_42 still loaded", reqs[0].Tools)
	}

	_, stderr, code = runChatCLI(t, "", "chat", "--config", cfg, "--tool-search", "off", "-p", "hello")
	if code != 0 {
		t.Fatalf("--tool-search off: exit %d\n%s", code, stderr)
	}
	if reqs = f.requests(); len(reqs) == 0 || !slices.Contains(reqs[0].Tools, "tool_07") || slices.Contains(reqs[0].Tools, "searchTools") {
		t.Errorf("--tool-search off offers %v", reqs[0].Tools)
	}
	for _, cmd := range [][]string{{"chat", "-p", "hello"}, {"web", "--http", "127.0.0.1:0"}} {
		_, stderr, code = runChatCLI(t, "", append(cmd, "--config", cfg, "--tool-search", "sometimes")...)
		if code != 2 || !strings.Contains(stderr, "auto, on or off") {
			t.Errorf("%s --tool-search sometimes: exit %d\n%s", cmd[0], code, stderr)
		}
		_, stderr, code = runChatCLI(t, "", append(cmd, "--config", cfg, "--max-output-tokens", "0")...)
		if code != 2 || !strings.Contains(stderr, "--max-output-tokens must be from 1") {
			t.Errorf("%s --max-output-tokens 0: exit %d\n%s", cmd[0], code, stderr)
		}
	}
	// The config file's "toolSearch" holds when the flag is not given.
	if err := os.WriteFile(cfg, []byte(`{"toolSearch": "off", "mcpServers": {"many": {"url": "`+url+`/mcp"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code = runChatCLI(t, "", "chat", "--config", cfg, "-p", "hello"); code != 0 {
		t.Fatalf("toolSearch off in the config: exit %d\n%s", code, stderr)
	}
	if reqs = f.requests(); len(reqs) == 0 || !slices.Contains(reqs[0].Tools, "tool_07") {
		t.Errorf("with \"toolSearch\": \"off\" in the config the first request offers %v", reqs[0].Tools)
	}
}
