package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fixedNow pins the support clock so ticket ids and dates are stable.
var fixedNow = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// domain is the real customer-service back end on a fresh database.
type domain struct {
	st  *store.Store
	svc *support.Service
	kb  *kb.KB
}

func newDomain(t testing.TB) *domain {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := support.New(ctx, st, support.WithClock(func() time.Time { return fixedNow }))
	if err != nil {
		t.Fatal(err)
	}
	k, err := kb.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.SeedDemo(ctx); err != nil {
		t.Fatal(err)
	}
	return &domain{st: st, svc: svc, kb: k}
}

func (d *domain) options() *mcpserver.Options {
	return assistant.ServerOptions(d.svc, d.kb, "test")
}

// connect runs server on an in-memory transport and returns a connected
// client session, closed when the test ends.
func connect(t testing.TB, server *mcpserver.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: protocol error %v", name, err)
	}
	return res
}

func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d content blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content block is %T, want text", res.Content[0])
	}
	return tc.Text
}

func decodeJSON(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

func TestToolsListPublishesExactlyTheLocalTools(t *testing.T) {
	d := newDomain(t)
	cs := connect(t, mcpserver.New(d.options()))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	local := map[string]*agent.Tool{}
	for _, lt := range assistant.PublishedTools(d.svc, d.kb) {
		local[lt.Name] = lt
	}
	var names []string
	for _, got := range res.Tools {
		names = append(names, got.Name)
		lt, ok := local[got.Name]
		if !ok {
			t.Errorf("unexpected tool %q", got.Name)
			continue
		}
		if got.Description == "" || got.Description != lt.Description {
			t.Errorf("%s: description %q, want the local %q", got.Name, got.Description, lt.Description)
		}
		if got.Title == "" || got.Title != lt.Title {
			t.Errorf("%s: title %q, want the local %q", got.Name, got.Title, lt.Title)
		}
		gotIn, _ := json.Marshal(got.InputSchema)
		if diff := cmp.Diff(decodeJSON(t, lt.InputSchema), decodeJSON(t, gotIn)); diff != "" {
			t.Errorf("%s: inputSchema differs from the local schema (-local +published):\n%s", got.Name, diff)
		}
		gotOut, _ := json.Marshal(got.OutputSchema)
		if diff := cmp.Diff(decodeJSON(t, lt.OutputSchema), decodeJSON(t, gotOut)); diff != "" {
			t.Errorf("%s: outputSchema differs from the local schema (-local +published):\n%s", got.Name, diff)
		}
		a := got.Annotations
		if a == nil {
			t.Errorf("%s: no annotations", got.Name)
			continue
		}
		if a.ReadOnlyHint != lt.ReadOnly || a.IdempotentHint != lt.Idempotent {
			t.Errorf("%s: readOnlyHint=%v idempotentHint=%v, want %v %v", got.Name, a.ReadOnlyHint, a.IdempotentHint, lt.ReadOnly, lt.Idempotent)
		}
		if a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: destructiveHint and openWorldHint must be stated false, got %v %v", got.Name, a.DestructiveHint, a.OpenWorldHint)
		}
	}
	slices.Sort(names)
	if want := []string{"createTicket", "getOrderStatus", "getRefundStatus", "requestRefund", "searchKnowledge"}; !slices.Equal(names, want) {
		t.Fatalf("published tools %v, want exactly %v", names, want)
	}
	// escalateToHuman needs the conversation; MCP is session-less.
	if slices.Contains(names, d.svc.EscalateTool().Name) {
		t.Fatal("escalateToHuman must never be published")
	}
}

// TestPublishedSchemaIsTheLocalSlice checks the server hands the SDK the
// tool's own schema bytes, not a copy, by looking at the tools/list result
// inside the server before it is encoded.
func TestPublishedSchemaIsTheLocalSlice(t *testing.T) {
	d := newDomain(t)
	tools := assistant.PublishedTools(d.svc, d.kb)
	server := mcpserver.New(&mcpserver.Options{Version: "test", Tools: tools})
	var listed []*mcp.Tool
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok {
				listed = lr.Tools
			}
			return res, err
		}
	})
	cs := connect(t, server)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(tools) {
		t.Fatalf("listed %d tools, want %d", len(listed), len(tools))
	}
	for _, lt := range tools {
		i := slices.IndexFunc(listed, func(m *mcp.Tool) bool { return m.Name == lt.Name })
		if i < 0 {
			t.Fatalf("%s not listed", lt.Name)
		}
		for what, pair := range map[string][2]any{
			"inputSchema":  {listed[i].InputSchema, lt.InputSchema},
			"outputSchema": {listed[i].OutputSchema, lt.OutputSchema},
		} {
			raw, ok := pair[0].(json.RawMessage)
			if !ok {
				t.Errorf("%s: %s is a %T, want the tool's json.RawMessage", lt.Name, what, pair[0])
				continue
			}
			want := pair[1].(json.RawMessage)
			if unsafe.SliceData(raw) != unsafe.SliceData(want) || len(raw) != len(want) {
				t.Errorf("%s: %s is a copy, not the local tool's slice", lt.Name, what)
			}
		}
	}
	// The knowledge-base search shares one schema under both names.
	if unsafe.SliceData(d.kb.MCPSearchTool().InputSchema) != unsafe.SliceData(d.kb.SearchTool().InputSchema) {
		t.Error("searchKnowledge and searchKnowledgeBase do not share their input schema")
	}
}

// checkOutput validates a successful result: the text block and
// structuredContent carry the same JSON, which matches the output schema.
func checkOutput(t *testing.T, lt *agent.Tool, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: unexpected isError: %s", lt.Name, resultText(t, res))
	}
	text := resultText(t, res)
	structured, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("%s: structuredContent is %T, want an object", lt.Name, res.StructuredContent)
	}
	if diff := cmp.Diff(decodeJSON(t, []byte(text)), any(structured)); diff != "" {
		t.Fatalf("%s: text block and structuredContent differ:\n%s", lt.Name, diff)
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(lt.OutputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := resolved.Validate(any(structured)); err != nil {
		t.Fatalf("%s: output does not match its outputSchema: %v\n%s", lt.Name, err, text)
	}
	return structured
}

func TestCallTools(t *testing.T) {
	d := newDomain(t)
	cs := connect(t, mcpserver.New(d.options()))
	order, ticket, search := d.svc.OrderStatusTool(), d.svc.CreateTicketTool(), d.kb.MCPSearchTool()

	t.Run("getOrderStatus", func(t *testing.T) {
		out := checkOutput(t, order, callTool(t, cs, "getOrderStatus", map[string]any{"orderId": "A-1024"}))
		if out["orderId"] != "A-1024" || out["status"] != "已发货" || !strings.Contains(fmt.Sprint(out["eta"]), "18:00") {
			t.Fatalf("A-1024: %v", out)
		}
		res := callTool(t, cs, "getOrderStatus", map[string]any{"orderId": "Z-9999"})
		out = checkOutput(t, order, res)
		if out["found"] != false {
			t.Fatalf("unknown order should be a normal not-found result, got %v", out)
		}
	})
	t.Run("createTicket", func(t *testing.T) {
		args := map[string]any{"subject": "订单 A-1024 申请退款", "description": "包装破损，要求退款"}
		out := checkOutput(t, ticket, callTool(t, cs, "createTicket", args))
		if !regexp.MustCompile(`^TK-20260314-\d{4}$`).MatchString(fmt.Sprint(out["ticketId"])) || out["status"] != "open" {
			t.Fatalf("ticket: %v", out)
		}
		// The same call again in the same MCP session is the same ticket.
		again := checkOutput(t, ticket, callTool(t, cs, "createTicket", args))
		if again["ticketId"] != out["ticketId"] {
			t.Fatalf("repeated call opened %v, want the first ticket %v", again["ticketId"], out["ticketId"])
		}
		// Another client is another session: it gets its own ticket.
		other := connect(t, mcpserver.New(d.options()))
		third := checkOutput(t, ticket, callTool(t, other, "createTicket", args))
		if third["ticketId"] == out["ticketId"] {
			t.Fatalf("a different session reused ticket %v", out["ticketId"])
		}
	})
	t.Run("searchKnowledge", func(t *testing.T) {
		out := checkOutput(t, search, callTool(t, cs, "searchKnowledge", map[string]any{"query": "出差住宿标准", "k": 3}))
		hits, _ := out["hits"].([]any)
		if len(hits) == 0 || len(hits) > 3 {
			t.Fatalf("want 1..3 hits, got %d: %v", len(hits), out)
		}
		if !strings.Contains(fmt.Sprint(hits), "600") {
			t.Errorf("no hit for lodging standards mentions 600 yuan: %v", hits)
		}
	})

	bad := []struct {
		tool  string
		args  any
		wants []string // all must appear in the error text
	}{
		{"getOrderStatus", map[string]any{}, []string{"required", "orderId"}},
		{"getOrderStatus", map[string]any{"orderId": 1024}, []string{"orderId", "type"}},
		{"getOrderStatus", map[string]any{"orderId": "not an id"}, []string{"orderId", "pattern"}},
		{"getOrderStatus", map[string]any{"orderId": "A-1024", "extra": true}, []string{"additional properties", "extra"}},
		{"createTicket", map[string]any{"subject": "", "description": "x"}, []string{"subject", "minLength"}},
		{"createTicket", map[string]any{"subject": "refund"}, []string{"required", "description"}},
		{"searchKnowledge", map[string]any{"query": "refund", "k": 11}, []string{"k", "maximum"}},
		{"searchKnowledge", map[string]any{"query": 5}, []string{"query", "type"}},
		{"searchKnowledge", []any{"refund"}, []string{"object"}},
	}
	for _, tc := range bad {
		t.Run("invalid/"+tc.tool, func(t *testing.T) {
			res := callTool(t, cs, tc.tool, tc.args)
			text := resultText(t, res)
			if !res.IsError {
				t.Fatalf("args %v: want an isError result, got %s", tc.args, text)
			}
			if res.StructuredContent != nil {
				t.Errorf("an error result carries structuredContent %v", res.StructuredContent)
			}
			for _, w := range tc.wants {
				if !strings.Contains(text, w) {
					t.Errorf("args %v: error %q does not mention %q", tc.args, text, w)
				}
			}
		})
	}

	t.Run("unknown tool", func(t *testing.T) {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "escalateToHuman", Arguments: map[string]any{}})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, "escalateToHuman") {
			t.Fatalf("want the protocol's unknown-tool error, got %v", err)
		}
	})
}

// testTools are small tools with known behaviour for the server's own
// error paths.
func testTools(calls *atomic.Int32) []*agent.Tool {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	return []*agent.Tool{
		{Name: "boom", Description: "Panics.", InputSchema: schema, Execute: func(context.Context, json.RawMessage) (any, error) {
			calls.Add(1)
			panic("boom")
		}},
		{Name: "fail", Description: "Fails.", InputSchema: schema, Execute: func(context.Context, json.RawMessage) (any, error) {
			return nil, errors.New("the warehouse system is down; try again in a minute")
		}},
		{Name: "plain", Description: "Answers text.", Execute: func(context.Context, json.RawMessage) (any, error) {
			return "just text", nil
		}},
		{Name: "echo", Description: "Echoes n.", InputSchema: schema, Execute: func(_ context.Context, args json.RawMessage) (any, error) {
			m, err := agent.DecodeArgs(args)
			return map[string]any{"n": m["n"]}, err
		}},
	}
}

func TestToolFailuresAreResults(t *testing.T) {
	var calls atomic.Int32
	cs := connect(t, mcpserver.New(&mcpserver.Options{Version: "test", Tools: testTools(&calls)}))

	for i := range 2 {
		res := callTool(t, cs, "boom", map[string]any{})
		if text := resultText(t, res); !res.IsError || !strings.Contains(text, "boom") || !strings.Contains(text, "still running") {
			t.Fatalf("panic %d: want an isError result naming the tool, got isError=%v %q", i, res.IsError, text)
		}
		// The server lives on: the next call on the same session works.
		res = callTool(t, cs, "echo", map[string]any{"n": 7})
		if res.IsError || fmt.Sprint(res.StructuredContent) != "map[n:7]" {
			t.Fatalf("call after a panic: %+v", res)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("boom ran %d times, want 2", calls.Load())
	}

	res := callTool(t, cs, "fail", nil)
	if text := resultText(t, res); !res.IsError || !strings.Contains(text, "warehouse system is down") {
		t.Fatalf("handler error: %v %q", res.IsError, text)
	}
	res = callTool(t, cs, "plain", nil)
	if res.IsError || resultText(t, res) != "just text" || res.StructuredContent != nil {
		t.Fatalf("text output: %+v", res)
	}
	// A tool without a schema is published with an empty object schema.
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "plain" && fmt.Sprint(tl.InputSchema) != "map[type:object]" {
			t.Errorf("plain's input schema is %v", tl.InputSchema)
		}
	}
}

func TestNewServerRejectsBadToolLists(t *testing.T) {
	ok := &agent.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Execute: func(context.Context, json.RawMessage) (any, error) { return nil, nil }}
	for name, tools := range map[string][]*agent.Tool{
		"nil tool":   {nil},
		"no execute": {{Name: "x", InputSchema: ok.InputSchema}},
		"duplicate":  {ok, ok},
		"not object": {{Name: "y", InputSchema: json.RawMessage(`{"type":"string"}`), Execute: ok.Execute}},
		"no type":    {{Name: "y", InputSchema: json.RawMessage(`{"properties":{}}`), Execute: ok.Execute}},
		"not JSON":   {{Name: "y", InputSchema: json.RawMessage(`{"type":"object"`), Execute: ok.Execute}},
		"bad output": {{Name: "y", InputSchema: ok.InputSchema, OutputSchema: json.RawMessage(`{"type":`), Execute: ok.Execute}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("NewServer accepted a bad tool list")
				}
			}()
			mcpserver.New(&mcpserver.Options{Tools: tools})
		})
	}
}

func listAll(t *testing.T, cs *mcp.ClientSession) []*mcp.Resource {
	t.Helper()
	var all []*mcp.Resource
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	return all
}

func uris(rs []*mcp.Resource) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.URI)
	}
	return out
}

func TestResources(t *testing.T) {
	ctx := context.Background()
	d := newDomain(t)
	cs := connect(t, mcpserver.New(d.options()))

	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "docs://kb/{docId}" ||
		templates.ResourceTemplates[0].MIMEType == "" || templates.ResourceTemplates[0].Title == "" {
		t.Fatalf("templates: %+v", templates.ResourceTemplates)
	}

	docs, err := d.kb.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all := listAll(t, cs)
	// The order card (an MCP Apps view) heads the list; the rest are the
	// documents.
	if len(all) == 0 || all[0].URI != assistant.OrderCardURI || all[0].MIMEType != assistant.AppMIMEType {
		t.Fatalf("the list does not start with the order card: %v", uris(all))
	}
	listed := all[1:]
	if len(listed) != len(docs) || len(docs) == 0 {
		t.Fatalf("listed %d documents, the knowledge base has %d", len(listed), len(docs))
	}
	for _, doc := range docs {
		i := slices.IndexFunc(listed, func(r *mcp.Resource) bool { return r.Name == doc.ID })
		if i < 0 {
			t.Fatalf("document %s not listed", doc.ID)
		}
		r := listed[i]
		if r.URI != "docs://kb/"+doc.ID || r.Title != doc.Title || r.MIMEType != "text/markdown" || r.Size != int64(doc.Bytes) {
			t.Errorf("resource %+v does not describe document %+v", r, doc)
		}
		read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Fatalf("read %s: %v", r.URI, err)
		}
		_, text, err := d.kb.Text(ctx, doc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(read.Contents) != 1 || read.Contents[0].Text != text || read.Contents[0].URI != r.URI || read.Contents[0].MIMEType != "text/markdown" {
			t.Errorf("read %s: got %+v, want the document's full text", r.URI, read.Contents)
		}
	}

	// A document ingested while the server runs is listed at once, and
	// disappears when removed.
	ing, err := d.kb.Ingest(ctx, "shipping.txt", []byte("Shipping\n\nOrders ship within two working days."))
	if err != nil {
		t.Fatal(err)
	}
	newURI := mcpserver.DocURI(ing.Doc.ID)
	after := listAll(t, cs)
	if !slices.Contains(uris(after), newURI) || len(after) != len(docs)+2 {
		t.Fatalf("new document %s not listed: %v", newURI, uris(after))
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: newURI})
	if err != nil {
		t.Fatal(err)
	}
	if c := read.Contents[0]; c.MIMEType != "text/plain" || !strings.Contains(c.Text, "two working days") {
		t.Fatalf("read new document: %+v", c)
	}
	if err := d.kb.Remove(ctx, ing.Doc.ID); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(uris(listAll(t, cs)), newURI) {
		t.Fatal("removed document still listed")
	}

	for _, uri := range []string{newURI, "docs://kb/no-such-doc-00000000", "docs://kb/a%2Fb", "docs://other/x", "file:///etc/passwd"} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != mcp.CodeResourceNotFound {
			t.Errorf("read %s: want resource-not-found, got %v", uri, err)
		}
	}
}

// fakeDocs is a DocStore with n generated documents that can be told to
// fail or panic.
type fakeDocs struct {
	ids   []string
	panic bool
	err   error
}

func (f *fakeDocs) ListDocs(context.Context) ([]mcpserver.DocInfo, error) {
	if f.panic {
		panic("list exploded")
	}
	out := make([]mcpserver.DocInfo, len(f.ids))
	for i, id := range f.ids {
		out[i] = mcpserver.DocInfo{ID: id, Title: "Doc " + id, Source: id + ".md", Bytes: 3}
	}
	return out, f.err
}

func (f *fakeDocs) ReadDoc(_ context.Context, id string) (mcpserver.DocInfo, string, error) {
	if f.panic {
		panic("read exploded")
	}
	if f.err != nil {
		return mcpserver.DocInfo{}, "", f.err
	}
	if !slices.Contains(f.ids, id) {
		return mcpserver.DocInfo{}, "", mcpserver.ErrDocNotFound
	}
	return mcpserver.DocInfo{ID: id, Source: id + ".txt"}, "text of " + id, nil
}

func TestResourcesListPagination(t *testing.T) {
	ctx := context.Background()
	docs := &fakeDocs{ids: []string{"e", "a", "d", "c", "b"}}
	cs := connect(t, mcpserver.New(&mcpserver.Options{Docs: docs, PageSize: 2}))

	var pages [][]string
	cursor := ""
	for range 10 {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range res.Resources {
			names = append(names, r.Name)
		}
		pages = append(pages, names)
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
		if len(pages) == 1 {
			// Documents change between pages: one before the cursor is
			// removed, one after it added. Nothing repeats or goes missing.
			docs.ids = []string{"e", "d", "c", "b", "bb"}
		}
	}
	want := [][]string{{"a", "b"}, {"bb", "c"}, {"d", "e"}}
	if diff := cmp.Diff(want, pages); diff != "" {
		t.Fatalf("pages (-want +got):\n%s", diff)
	}

	_, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "%%%not-a-cursor"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, "cursor") {
		t.Fatalf("bad cursor: want invalid params, got %v", err)
	}

	docs.ids = nil
	res, err := cs.ListResources(ctx, nil)
	if err != nil || res.Resources == nil || len(res.Resources) != 0 {
		t.Fatalf("empty knowledge base: %v %+v (want an empty, non-null list)", err, res)
	}
}

func TestDocStoreFailures(t *testing.T) {
	ctx := context.Background()
	docs := &fakeDocs{ids: []string{"a"}}
	cs := connect(t, mcpserver.New(&mcpserver.Options{Docs: docs}))

	docs.panic = true
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://kb/a"}); err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Fatalf("panicking read: want an internal error, got %v", err)
	}
	if _, err := cs.ListResources(ctx, nil); err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Fatalf("panicking list: want an internal error, got %v", err)
	}
	docs.panic = false
	docs.err = errors.New("disk on fire")
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://kb/a"}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("failing read: %v", err)
	}
	docs.err = nil
	// The server survived all of it.
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://kb/a"})
	if err != nil || res.Contents[0].Text != "text of a" || res.Contents[0].MIMEType != "text/plain" {
		t.Fatalf("read after failures: %v %+v", err, res)
	}
}

func TestCapabilities(t *testing.T) {
	d := newDomain(t)
	cs := connect(t, mcpserver.New(d.options()))
	init := cs.InitializeResult()
	if init.ServerInfo.Name != "agentapp" || init.ServerInfo.Version != "test" {
		t.Errorf("serverInfo %+v", init.ServerInfo)
	}
	c := init.Capabilities
	// Prompts: the SDK answers prompts/list (with none), and 2026-07-28
	// wants what answers declared.
	if c.Tools == nil || c.Resources == nil || c.Logging == nil || c.Prompts == nil || c.Prompts.ListChanged {
		t.Errorf("capabilities %+v: want tools, resources, logging and prompts (no listChanged)", c)
	}
	if pl, err := cs.ListPrompts(context.Background(), nil); err != nil || len(pl.Prompts) != 0 {
		t.Errorf("prompts/list: %v %+v, want an empty list", err, pl)
	}
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Errorf("logging/setLevel: %v", err)
	}
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Errorf("ping: %v", err)
	}
}

func BenchmarkToolsCallGetOrderStatus(b *testing.B) {
	d := newDomain(b)
	cs := connect(b, mcpserver.New(d.options()))
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "getOrderStatus", Arguments: map[string]any{"orderId": "A-1024"}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkToolHandlerGetOrderStatus measures agentapp's own share of a
// tools/call (validation, the SQLite look-up, encoding the result), without
// the SDK's JSON-RPC decoding and transport.
func BenchmarkToolHandlerGetOrderStatus(b *testing.B) {
	d := newDomain(b)
	h := mcpserver.New(d.options()).ToolHandler("getOrderStatus")
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "getOrderStatus", Arguments: json.RawMessage(`{"orderId":"A-1024"}`)}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := h(ctx, req)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// TestToolsListBytesUnchanged holds New's registration without the SDK's
// schema re-marshalling (addTool) to the SDK's own AddTool: tools/list,
// read off the wire, is the same bytes from both, for the published tools
// of `agentapp serve` (schemas, annotations, _meta, task support) and for
// an argument-less tool.
func TestToolsListBytesUnchanged(t *testing.T) {
	d := newDomain(t)
	list := func(newServer func(*mcpserver.Options) *mcpserver.Server) []byte {
		opts := d.options()
		opts.Tools = append(opts.Tools, &agent.Tool{Name: "plain", Execute: func(context.Context, json.RawMessage) (any, error) { return "ok", nil }})
		r := newRawSessionOn(t, newServer(opts), rawTransports[2].make)
		r.handshake()
		r.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
		return r.receive()
	}
	ours, sdk := list(mcpserver.New), list(mcpserver.NewWithSDKAddTool)
	if !bytes.Equal(ours, sdk) {
		t.Fatalf("tools/list differs from the SDK's AddTool path:\nours: %s\nsdk:  %s", ours, sdk)
	}
	if !bytes.Contains(ours, []byte(`"outputSchema"`)) || !bytes.Contains(ours, []byte(`"plain"`)) {
		t.Fatalf("tools/list lacks the tools it should list: %s", ours)
	}
}
