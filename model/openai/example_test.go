package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/openai"
)

// A model configured from the environment or a .env file, as the chat
// command does. With no key configured the caller falls back to the offline
// model.
func ExampleLoadConfig() {
	cfg, err := openai.LoadConfig("", os.LookupEnv) // the working directory, else its repository root
	if err != nil {
		fmt.Println("config:", err)
		return
	}
	if !cfg.HasKey() {
		fmt.Println("no OPENAI_API_KEY: using the offline model")
		return
	}
	m := openai.New(cfg)
	fmt.Printf("using %s (base URL from %s)\n", m.Name(), cfg.Source.BaseURL)
}

// Streaming a reply from an OpenAI-compatible server (here a local stand-in
// that speaks the chat-completions API). The whole turn is bounded by the
// context's deadline, not by an HTTP timeout.
func ExampleModel_Stream() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, piece := range []string{"Order A-1024 ", "has shipped."} {
			b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": piece}}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	m := openai.New(openai.Config{APIKey: "sk-test", BaseURL: srv.URL + "/v1", Model: "gpt-4o-mini"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := m.Stream(ctx, &model.Request{
		System:   "You are a customer-service assistant.",
		Messages: []model.Message{{Role: model.RoleUser, Content: "Where is A-1024?"}},
	}, func(delta string) { fmt.Printf("delta: %q\n", delta) })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("answer:", resp.Message.Content)
	// Output:
	// delta: "Order A-1024 "
	// delta: "has shipped."
	// answer: Order A-1024 has shipped.
}

// The provider's own message and code, and what to check.
func ExampleAPIError() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"code":"1113","message":"您的账户已欠费，请充值后重试。"}}`)
	}))
	defer srv.Close()

	m := openai.New(openai.Config{APIKey: "k", BaseURL: srv.URL})
	_, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	fmt.Println(err)
	// Output:
	// model provider error: HTTP 429 Too Many Requests: 您的账户已欠费，请充值后重试。 (code 1113) — the account's balance or resource package is exhausted: top it up at the provider, or switch OPENAI_MODEL to a free model (not retried)
}

// What a provider receives for a schema generated with definitions.
func ExampleSanitize() {
	schema := json.RawMessage(`{
	  "$schema": "https://json-schema.org/draft/2020-12/schema",
	  "type": "object",
	  "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
	  "required": ["items"],
	  "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": null}}
	}`)
	fmt.Println(string(openai.Sanitize(schema)))
	// Output:
	// {"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"}}}}},"required":["items"]}
}
