package mcpclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// We advertise that we run the server's sampling and elicitation as tasks
// (stdio), so server-everything offers its -async tools; their requests
// come with params.task, we answer with a task, the server polls it and
// fetches the sampler's and the elicitor's answers as its result.
func TestRequestTasksEverythingAsync(t *testing.T) {
	bin := peerBin(t, "mcp-server-everything")
	sampler := &recordingSampler{}
	elicitor := &answerElicitor{result: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "favoriteColor": "Blue"}}}
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "everything", Command: bin, Args: []string{"stdio"}},
		WithGracePeriods(2*time.Second, 2*time.Second), WithSampler(sampler, 50), WithElicitor(elicitor))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	wantTools(t, b, "trigger-sampling-request-async", "trigger-elicitation-request-async")

	out, isErr := callText(t, b, "trigger-sampling-request-async", map[string]any{"prompt": "hello"})
	if isErr || !strings.Contains(out, "[COMPLETED]") || !strings.Contains(out, "sampled answer") || !strings.Contains(out, "Task created: ") {
		t.Errorf("async sampling: isError %v\n%s", isErr, out)
	}
	sampler.mu.Lock()
	if len(sampler.reqs) != 1 || !strings.Contains(sampler.reqs[0].Params.Messages[0].Content.(*mcp.TextContent).Text, "hello") {
		t.Errorf("the sampler was asked %d times; want once, with the prompt", len(sampler.reqs))
	}
	sampler.mu.Unlock()

	out, isErr = callText(t, b, "trigger-elicitation-request-async", map[string]any{})
	if isErr || !strings.Contains(out, "[COMPLETED]") || !strings.Contains(out, "Ada") || !strings.Contains(out, "Blue") {
		t.Errorf("async elicitation: isError %v\n%s", isErr, out)
	}
	elicitor.mu.Lock()
	if len(elicitor.asked) != 1 {
		t.Errorf("the elicitor was asked %d times; want once", len(elicitor.asked))
	}
	elicitor.mu.Unlock()
}
