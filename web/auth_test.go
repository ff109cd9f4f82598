package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// TestAPIKeysGuardV1: with APIKeys set, /v1 answers 401 in OpenAI's error
// shape without a key or with a wrong one, and an OpenAI client with a
// right key is served; the chat API stays open.
func TestAPIKeysGuardV1(t *testing.T) {
	e := newEnv(t, toolTurns(), func(o *envOptions) { o.APIKeys = []string{"sk-one", "sk-two"} })
	body := `{"messages":[{"role":"user","content":"订单 A-1024 到哪了？"}]}`
	for _, hdr := range [][]string{nil, {"Authorization", "Bearer sk-wrong"}, {"Authorization", "Basic c2stb25lOg=="}, {"Authorization", "Bearer "}} {
		resp := e.post(t, "/v1/chat/completions", body, hdr...)
		var oe oaError
		err := json.NewDecoder(resp.Body).Decode(&oe)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || err != nil || oe.Error.Code != "invalid_api_key" || !strings.Contains(oe.Error.Message, "Authorization: Bearer <key>") {
			t.Errorf("%v: %d %+v %v, want 401 invalid_api_key naming the header", hdr, resp.StatusCode, oe, err)
		}
		if strings.Contains(oe.Error.Message, "sk-one") {
			t.Errorf("the refusal names a configured key: %q", oe.Error.Message)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, e.url("/v1/models"), nil)
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/v1/models without a key: %d, want 401", resp.StatusCode)
	}

	client := func(key string) *openai.Client {
		c := openai.NewClient(option.WithBaseURL(e.url("/v1/")), option.WithAPIKey(key),
			option.WithHTTPClient(e.ts.Client()), option.WithMaxRetries(0))
		return &c
	}
	params := openai.ChatCompletionNewParams{Model: DefaultModelID,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("订单 A-1024 到哪了？")}}
	c, err := client("sk-two").Chat.Completions.New(context.Background(), params)
	if err != nil || len(c.Choices) != 1 || !strings.Contains(c.Choices[0].Message.Content, "已发货") {
		t.Fatalf("with a right key: %v %+v", err, c)
	}
	_, err = client("sk-bad").Chat.Completions.New(context.Background(), params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || apiErr.Code != "invalid_api_key" {
		t.Errorf("the SDK with a wrong key got %v, want its 401 invalid_api_key error", err)
	}
	// The customer chat stays public.
	if id := e.newSession(t); id == "" {
		t.Error("the chat API refused a session")
	}
}

// TestMetricsTokenGuardsMetricsAndReadyDetails: with a metrics token,
// /metrics needs it, and /readyz keeps its status and {"ready"} public
// but shows database and server details only with it.
func TestMetricsTokenGuardsMetricsAndReadyDetails(t *testing.T) {
	e := newEnv(t, toolTurns(), func(o *envOptions) { o.MetricsToken = "m-secret" })
	get := func(path, auth string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, e.url(path), nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := e.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := get("/metrics", "Bearer nope"); code != http.StatusUnauthorized {
		t.Errorf("/metrics with a wrong token: %d, want 401", code)
	}
	if code, body := get("/metrics", "Bearer m-secret"); code != http.StatusOK || !strings.Contains(body, "agentapp_web_requests_total") {
		t.Errorf("/metrics with the token: %d %.200s", code, body)
	}
	code, body := get("/readyz", "")
	if code != http.StatusOK || strings.TrimSpace(body) != `{"ready":true}` {
		t.Errorf("/readyz without the token: %d %s, want 200 {\"ready\":true} only", code, body)
	}
	code, body = get("/readyz", "Bearer m-secret")
	if code != http.StatusOK || !strings.Contains(body, `"database":"ok"`) {
		t.Errorf("/readyz with the token: %d %s, want the details", code, body)
	}
}
