package mcpclient

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordingSampler answers sampling requests with a fixed text, as a
// model named "test-model", and records what it was asked.
type recordingSampler struct {
	mu   sync.Mutex
	reqs []*SamplingRequest
}

func (s *recordingSampler) CreateMessage(_ context.Context, req *SamplingRequest) (*mcp.CreateMessageResult, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "sampled answer"}, Model: "test-model", Role: "assistant"}, nil
}

// answerElicitor answers every elicitation with result.
type answerElicitor struct {
	mu     sync.Mutex
	result *mcp.ElicitResult
	asked  []*mcp.ElicitParams
}

func (e *answerElicitor) Elicit(_ context.Context, _ string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, p)
	r := *e.result
	if r.Content != nil {
		r.Content = map[string]any{}
		for k, v := range e.result.Content {
			r.Content[k] = v
		}
	}
	return &r, nil
}

type progressLog struct {
	mu  sync.Mutex
	all []Progress
}

func (p *progressLog) add(ev Progress) {
	p.mu.Lock()
	p.all = append(p.all, ev)
	p.mu.Unlock()
}

func (p *progressLog) list() []Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.all)
}

func callText(t *testing.T, b *Bridge, tool string, args any) (string, bool) {
	t.Helper()
	raw, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(raw)})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text + "\n")
		}
	}
	return sb.String(), res.IsError
}

// everythingTransports runs f against server-everything over stdio and
// over streamable HTTP.
func everythingTransports(t *testing.T, f func(t *testing.T, cfg mcpconfig.Server)) {
	bin := peerBin(t, "mcp-server-everything")
	t.Run("stdio", func(t *testing.T) {
		f(t, mcpconfig.Server{Name: "everything", Command: bin})
	})
	t.Run("http", func(t *testing.T) {
		base := testkit.StartHTTPPeer(t, "listening on port", bin, "streamableHttp")
		f(t, mcpconfig.Server{Name: "everything", URL: base + "/mcp"})
	})
}

func TestEverythingClientSide(t *testing.T) {
	everythingTransports(t, func(t *testing.T, cfg mcpconfig.Server) {
		dir, other := t.TempDir(), t.TempDir()
		sampler := &recordingSampler{}
		elicitor := &answerElicitor{result: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}
		progress := &progressLog{}
		logs, logBuf := testkit.NewLogger()
		b, err := Connect(context.Background(), cfg,
			WithGracePeriods(2*time.Second, 2*time.Second),
			WithLogger(logs),
			WithSampler(sampler, 50),
			WithElicitor(elicitor),
			WithRoots([]string{dir}),
			WithProgress(progress.add),
		)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		wantTools(t, b, "trigger-sampling-request", "trigger-elicitation-request", "get-roots-list", "trigger-long-running-operation")

		// Sampling: the sampler is asked (with the user's approval, the
		// default policy), the cap applies, and its model is named.
		out, isErr := callText(t, b, "trigger-sampling-request", map[string]any{"prompt": "hello", "maxTokens": 1000})
		if isErr || !strings.Contains(out, "sampled answer") || !strings.Contains(out, "test-model") {
			t.Errorf("sampling result: isError %v\n%s", isErr, out)
		}
		sampler.mu.Lock()
		if len(sampler.reqs) != 1 || !sampler.reqs[0].Ask || sampler.reqs[0].Params.MaxTokens != 50 || sampler.reqs[0].Server != "everything" ||
			sampler.reqs[0].Params.SystemPrompt == "" {
			t.Errorf("sampling requests: %+v", sampler.reqs)
		}
		sampler.mu.Unlock()

		// Elicitation: the answer reaches the server, with the schema's
		// defaults filled in for what the user left out.
		out, _ = callText(t, b, "trigger-elicitation-request", map[string]any{})
		if !strings.Contains(out, "Name: Ada") || !strings.Contains(out, "Favorite Integer: 42") {
			t.Errorf("elicitation result:\n%s", out)
		}
		elicitor.mu.Lock()
		elicitor.result = &mcp.ElicitResult{Action: "decline"}
		elicitor.mu.Unlock()
		if out, _ = callText(t, b, "trigger-elicitation-request", map[string]any{}); !strings.Contains(out, "declined") {
			t.Errorf("declined elicitation result:\n%s", out)
		}

		// Roots: the configured ones, and a change reaches the server.
		roots := b.Roots()
		if len(roots) != 1 || !strings.HasSuffix(roots[0].URI, filepath.ToSlash(dir)) {
			t.Fatalf("roots %+v", roots)
		}
		if out, _ = callText(t, b, "get-roots-list", map[string]any{}); !strings.Contains(out, roots[0].URI) {
			t.Errorf("get-roots-list does not name %s:\n%s", roots[0].URI, out)
		}
		if err := b.SetRoots([]string{other}); err != nil {
			t.Fatal(err)
		}
		want := "file://" + filepath.ToSlash(other)
		deadline := time.Now().Add(10 * time.Second)
		for {
			out, _ = callText(t, b, "get-roots-list", map[string]any{})
			if strings.Contains(out, want) && !strings.Contains(out, roots[0].URI) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after SetRoots, get-roots-list still says:\n%s", out)
			}
			time.Sleep(100 * time.Millisecond)
		}

		// Progress: every step of the operation, named after the tool.
		callText(t, b, "trigger-long-running-operation", map[string]any{"duration": 0.5, "steps": 5})
		var got []string
		for end := time.Now().Add(5 * time.Second); len(progress.list()) < 5 && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		for _, p := range progress.list() {
			got = append(got, p.String())
		}
		wantSteps := []string{
			"trigger-long-running-operation 1/5", "trigger-long-running-operation 2/5", "trigger-long-running-operation 3/5",
			"trigger-long-running-operation 4/5", "trigger-long-running-operation 5/5",
		}
		if !slices.Equal(got, wantSteps) {
			t.Errorf("progress %q, want %q", got, wantSteps)
		}

		// Resources and prompts were listed at connect.
		ctx := context.Background()
		if !b.OffersResources() || !b.OffersPrompts() {
			t.Fatalf("offers resources %v prompts %v", b.OffersResources(), b.OffersPrompts())
		}
		rs, err := b.Resources(ctx)
		if err != nil || len(rs) == 0 {
			t.Fatalf("resources: %d, %v", len(rs), err)
		}
		read, err := b.ReadResource(ctx, rs[0].URI)
		if err != nil || len(read.Contents) == 0 {
			t.Fatalf("read %s: %v", rs[0].URI, err)
		}
		ps, err := b.Prompts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
		}
		if !slices.Contains(names, "simple-prompt") || !slices.Contains(names, "args-prompt") {
			t.Fatalf("prompts %v", names)
		}
		pr, err := b.GetPrompt(ctx, "args-prompt", map[string]string{"city": "Paris"})
		if err != nil || len(pr.Messages) == 0 {
			t.Fatalf("args-prompt: %v", err)
		}
		if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "Paris") {
			t.Errorf("args-prompt message %+v", pr.Messages[0].Content)
		}
		if strings.Contains(logBuf.String(), "level=WARN") {
			t.Errorf("warnings while connecting:\n%s", logBuf.String())
		}
	})
}

func TestEverythingSamplingDenied(t *testing.T) {
	everythingTransports(t, func(t *testing.T, cfg mcpconfig.Server) {
		cfg.Sampling = mcpconfig.SamplingDeny
		sampler := &recordingSampler{}
		b, err := Connect(context.Background(), cfg, WithGracePeriods(2*time.Second, 2*time.Second), WithSampler(sampler, 0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "trigger-sampling-request", Arguments: map[string]any{"prompt": "hi"}})
		text := ""
		if err != nil {
			text = err.Error()
		} else {
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			if !res.IsError {
				t.Errorf("a denied sampling request succeeded: %s", text)
			}
		}
		if !strings.Contains(text, "denies sampling") {
			t.Errorf("the refusal does not say sampling is denied: %s", text)
		}
		if len(sampler.reqs) != 0 {
			t.Errorf("the sampler was asked despite deny: %+v", sampler.reqs)
		}
	})
}

// Without the host's handlers nothing is advertised, so the server does
// not offer the tools that need them.
func TestEverythingWithoutClientSide(t *testing.T) {
	bin := peerBin(t, "mcp-server-everything")
	b := connectPeer(t, mcpconfig.Server{Name: "everything", Command: bin})
	names := toolNames(b)
	for _, n := range []string{"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} {
		if slices.Contains(names, n) {
			t.Errorf("%s offered to a client that did not advertise its capability", n)
		}
	}
	if err := b.SetRoots([]string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "without the roots capability") {
		t.Errorf("SetRoots without roots: %v", err)
	}
}
