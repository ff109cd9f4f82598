package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/prometheus/common/expfmt"
	prom "github.com/prometheus/common/model"
)

// scrapeTokens returns the token counters of a scrape by kind.
func scrapeTokens(t *testing.T, e *testEnv, name string) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	e.srv.metrics.handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(prom.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatalf("Prometheus cannot parse the scrape: %v\n%s", err, rec.Body)
	}
	got := map[string]float64{}
	for _, s := range fams[name].GetMetric() {
		if label(s, "model") != "scripted" {
			t.Errorf("%s: model label %q, want scripted", name, label(s, "model"))
		}
		got[label(s, "kind")] = s.GetCounter().GetValue()
	}
	return got
}

// TestUsageInWebFrontEnds: the chat API's done event, /v1 without and with
// streaming (the usage chunk only with stream_options.include_usage) and
// /metrics all carry the turn's tokens; the scripted model reports none,
// so they are the host's estimate, marked so, and never zero.
func TestUsageInWebFrontEnds(t *testing.T) {
	e := newEnv(t, toolTurns(), nil)
	if got := scrapeTokens(t, e, "agentapp_model_tokens_total"); len(got) != 0 {
		t.Errorf("tokens before any turn: %v", got)
	}

	// The chat API: the done event.
	id := e.newSession(t)
	evs := e.send(t, id, "订单 A-1024 到哪了？").until(t, "done")
	var done DoneEvent
	evs[len(evs)-1].decode(t, &done)
	if !done.Usage.Estimated || done.Usage.InputTokens <= 0 || done.Usage.OutputTokens <= 0 || len(done.Usage.Calls) != 2 {
		t.Fatalf("done event usage %+v; want two estimated calls with tokens", done.Usage)
	}
	input, output := float64(done.Usage.InputTokens), float64(done.Usage.OutputTokens)

	// /v1 without streaming.
	rec := &recorder{}
	client := openai.NewClient(option.WithBaseURL(e.url("/v1/")), option.WithAPIKey("unused"),
		option.WithHTTPClient(e.ts.Client()), option.WithMaxRetries(0), option.WithMiddleware(rec.middleware))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: DefaultModelID, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("订单 A-1024 到哪了？")}}
	c, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if c.Usage.PromptTokens <= 0 || c.Usage.CompletionTokens <= 0 || c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens ||
		!strings.Contains(rec.bodies[len(rec.bodies)-1], `"estimated":true`) {
		t.Errorf("/v1 usage %+v in %s; want estimated tokens", c.Usage, rec.bodies[len(rec.bodies)-1])
	}
	input, output = input+float64(c.Usage.PromptTokens), output+float64(c.Usage.CompletionTokens)

	// /v1 streaming: no usage unless asked for.
	stream := func(include bool) (usage []openai.CompletionUsage, emptyChoices int) {
		p := params
		if include {
			p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		}
		s := client.Chat.Completions.NewStreaming(ctx, p)
		for s.Next() {
			ch := s.Current()
			if ch.JSON.Usage.Valid() && ch.Usage.TotalTokens > 0 {
				usage = append(usage, ch.Usage)
			}
			if len(ch.Choices) == 0 {
				emptyChoices++
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		return usage, emptyChoices
	}
	if u, empty := stream(false); len(u) != 0 || empty != 0 {
		t.Errorf("a stream without include_usage sent usage %+v and %d chunks without choices", u, empty)
	}
	if !strings.Contains(rec.bodies[len(rec.bodies)-1], `"finish_reason":"stop"`) || strings.Contains(rec.bodies[len(rec.bodies)-1], `"usage"`) {
		t.Errorf("stream without include_usage:\n%s", rec.bodies[len(rec.bodies)-1])
	}
	u, empty := stream(true)
	if len(u) != 1 || empty != 1 || u[0].PromptTokens <= 0 || u[0].CompletionTokens <= 0 {
		t.Fatalf("a stream with include_usage sent usage %+v in %d chunks without choices; want one final chunk", u, empty)
	}
	body := rec.bodies[len(rec.bodies)-1]
	if i, j := strings.LastIndex(body, `"choices":[]`), strings.LastIndex(body, `"finish_reason":"stop"`); i < j || !strings.HasSuffix(strings.TrimSpace(body), "data: [DONE]") {
		t.Errorf("the usage chunk is not the last before [DONE], after the finish:\n%s", body)
	}
	input, output = input+float64(u[0].PromptTokens), output+float64(u[0].CompletionTokens)
	// The stream without include_usage cost tokens too: /metrics counts
	// every call, so it is at least the sum of what was reported.
	got := scrapeTokens(t, e, "agentapp_model_tokens_total")
	if got["input"] <= input || got["output"] <= output {
		t.Errorf("/metrics tokens %v; want more than the reported input %v and output %v (four turns)", got, input, output)
	}
	if est := scrapeTokens(t, e, "agentapp_model_estimated_tokens_total"); est["input"] != got["input"] || est["output"] != got["output"] {
		t.Errorf("estimated %v, all %v; the scripted model reports nothing, so all are estimated", est, got)
	}
}

// TestWebFoldKeepsTranscript: in a small window the model's view is
// folded, and the session's page and GET /api/sessions/{id} still show
// every message.
func TestWebFoldKeepsTranscript(t *testing.T) {
	var turns []scripted.Turn
	for i := range 40 {
		turns = append(turns, scripted.Turn{Text: fmt.Sprintf("订单 A-%d 已发货，预计 3 天送达。%s", 1000+i, strings.Repeat("Thank you for waiting. ", 10))})
	}
	m := scripted.New(turns...)
	e := newEnv(t, m, func(o *envOptions) {
		o.Context = host.ContextOptions{Window: 4000, Summarizer: budget.Extractive{}}
	})
	id := e.newSession(t)
	folds := 0
	for i := range 40 {
		evs := e.send(t, id, fmt.Sprintf("Where is order A-%d? %s", 1000+i, strings.Repeat("It is late. ", 10))).rest(t)
		if names := names(evs); names[len(names)-1] != "done" {
			t.Fatalf("turn %d: events %v", i, names)
		}
		for _, ev := range evs {
			if ev.Name == "fold" {
				var f host.Fold
				ev.decode(t, &f)
				if f.Messages <= 0 || f.Window != 4000 {
					t.Errorf("fold event %s", ev.Data)
				}
				folds++
			}
		}
	}
	if folds == 0 {
		t.Error("no fold event: the page is not told that the model's view was folded")
	}
	if h := e.history(t, id); len(h) != 80 || !strings.Contains(h[0].Content, "A-1000") {
		t.Errorf("the transcript shows %d messages, want all 80 from the first", len(h))
	}
	last := m.Requests()[len(m.Requests())-1]
	if len(last.Messages) >= 79 || !strings.Contains(last.System, "Summary of the earlier part") || !strings.Contains(last.System, "- user: Where is order A-1010?") {
		t.Errorf("the model saw %d messages and system %q; want a folded view with the summary", len(last.Messages), last.System)
	}
}

// TestV1RequestTooLarge: a /v1 conversation that cannot fit is refused
// with OpenAI's context_length_exceeded and the reason.
func TestV1RequestTooLarge(t *testing.T) {
	e := newEnv(t, toolTurns(), func(o *envOptions) {
		o.Context = host.ContextOptions{Window: 1000}
		o.System = strings.Repeat("Be helpful. ", 1000)
	})
	resp := e.post(t, "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`, "Content-Type", "application/json")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out oaError
	_ = json.Unmarshal(b, &out)
	if resp.StatusCode != http.StatusBadRequest || out.Error.Code != "context_length_exceeded" || !strings.Contains(out.Error.Message, "the largest part is the system prompt") {
		t.Errorf("%s %s; want 400 context_length_exceeded naming the system prompt", resp.Status, b)
	}
}
