package agentappbench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
)

// The per-turn host overhead is measured on a host with turnServers MCP
// servers of turnToolsPerServer tools each, plus turnLocalTools local
// ones: about a hundred tools, what a desktop host with a dozen servers
// offers the model.
const (
	turnServers        = 12
	turnToolsPerServer = 8
	turnLocalTools     = 4
)

// fakeServer is a connected MCP server as the chat sees it, whose tools
// answer at once: the benchmark leaves out the transport and the server's
// work, which the harness rows measure.
type fakeServer struct {
	name  string
	tools []*agent.Tool
}

func (s *fakeServer) Name() string         { return s.name }
func (s *fakeServer) Tools() []*agent.Tool { return s.tools }
func (s *fakeServer) Close() error         { return nil }

// turnTool is a tool shaped like the ones MCP servers publish: a
// description of a sentence or two and an object schema of a few
// properties.
func turnTool(origin string, i int, calls *atomic.Int64) *agent.Tool {
	name := fmt.Sprintf("%s_tool%d", origin, i)
	if origin == "" {
		name = fmt.Sprintf("local_tool%d", i)
	}
	out := json.RawMessage(`{"orderId":"A-1024","status":"已发货","eta":"2026-12-03","carrier":"SF Express 顺丰速运 13812345678"}`)
	return &agent.Tool{
		Name:        name,
		Description: fmt.Sprintf("Looks up record %d of the %s system by its id and returns its status, owner and dates. Use it when the user names a record.", i, origin),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the record's id","maxLength":64},"detail":{"type":"string","enum":["short","full"]}},"required":["id"]}`),
		ReadOnly:    true,
		Origin:      origin,
		Validate:    origin == "",
		Execute: func(context.Context, json.RawMessage) (any, error) {
			calls.Add(1)
			return out, nil
		},
	}
}

// turnModel answers instantly: a call of the named tool when the last
// message is the user's, the answer once the tool's result is in. The
// model's own time is not part of the host's overhead.
type turnModel struct{ tool string }

func (m *turnModel) Name() string { return "instant" }

func (m *turnModel) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == model.RoleTool {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "订单 A-1024 已发货，预计 12 月 3 日送达。"}}, nil
	}
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
		{ID: "call_1", Name: m.tool, Arguments: json.RawMessage(`{"id":"A-1024","detail":"short"}`)},
	}}}, nil
}

func (m *turnModel) Stream(ctx context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	r, err := m.Generate(ctx, req)
	if err == nil && onText != nil && r.Message.Content != "" {
		onText(r.Message.Content)
	}
	return r, err
}

// BenchmarkTurnOverhead is one turn through the host's turn runner (what
// every front end calls: host.Run) with 12 MCP servers and 100 tools, guards on (user-message
// injection scan, PII mask of MCP output, the audit log), the session kept
// in SQLite: the history window read, the tools merged and offered, the
// user message scanned, one MCP tool call checked, audited and masked, the
// turn stored. The model answers instantly and the tool at once, so what
// is left is the host's own work per turn. Reported: ns/op and the p50
// and p99 of the turns.
func BenchmarkTurnOverhead(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := store.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	env := map[string]string{guard.EnvPII: "1", guard.EnvInput: "1"}
	cfg, err := guard.FromEnv(func(k string) string { return env[k] }, dir)
	if err != nil {
		b.Fatal(err)
	}
	var calls atomic.Int64
	var servers []host.Server
	tools := 0
	for s := range turnServers {
		srv := &fakeServer{name: fmt.Sprintf("srv%02d", s)}
		for i := range turnToolsPerServer {
			srv.tools = append(srv.tools, turnTool(srv.name, i, &calls))
		}
		tools += len(srv.tools)
		servers = append(servers, srv)
	}
	var local []*agent.Tool
	for i := range turnLocalTools {
		local = append(local, turnTool("", i, &calls))
	}
	tools += len(local)
	h, err := host.Open(ctx, &host.Options{
		Model:   &turnModel{tool: "srv07_tool3"},
		Local:   local,
		Servers: servers,
		Guards:  &cfg,
		Store:   st,
		Logger:  quiet,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	if n := h.Tools().Current().Len(); n != tools {
		b.Fatalf("the host offers %d tools, want %d", n, tools)
	}
	session := h.Sessions().NewID()
	if err := h.Sessions().Create(ctx, session); err != nil {
		b.Fatal(err)
	}
	ask := func() error {
		_, err := h.Run(ctx, host.Turn{Session: session, Messages: []model.Message{{Role: model.RoleUser, Content: "订单 A-1024 到哪了？"}}})
		return err
	}
	// Fill the history window first: a steady conversation, not a new one.
	const warm = 12
	for range warm {
		if err := ask(); err != nil {
			b.Fatal(err)
		}
	}
	ds := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := ask(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	b.StopTimer()
	if n := calls.Load(); n != int64(warm+b.N) {
		b.Fatalf("the tool ran %d times in %d turns", n, warm+b.N)
	}
	slices.Sort(ds)
	pick := func(p int) float64 { return float64(ds[max(0, (len(ds)*p+99)/100-1)]) }
	b.ReportMetric(pick(50), "p50-ns")
	b.ReportMetric(pick(99), "p99-ns")
}
