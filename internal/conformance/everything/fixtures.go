package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 1×1 PNG and a WAV of silence: the smallest valid files of each kind.
var (
	pngPixel = mustB64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	wavQuiet = wavSilence(8)
)

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// wavSilence is a mono 8-bit 8 kHz WAV file of n silent samples.
func wavSilence(n int) []byte {
	le32 := func(v int) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }
	var b []byte
	b = append(b, "RIFF"...)
	b = append(b, le32(36+n)...)
	b = append(b, "WAVEfmt "...)
	b = append(b, le32(16)...)
	b = append(b, 1, 0, 1, 0) // PCM, mono
	b = append(b, le32(8000)...)
	b = append(b, le32(8000)...)
	b = append(b, 1, 0, 8, 0) // block align 1, 8 bits
	b = append(b, "data"...)
	b = append(b, le32(n)...)
	for range n {
		b = append(b, 0x80)
	}
	return b
}

// addFixtures adds the suite's features to agentapp serve's options.
// Tools whose answer is plain text are agent tools, so that they take the
// direct path as agentapp's own do; the rest are served by the SDK.
func addFixtures(opts *mcpserver.Options) {
	opts.Tools = append(opts.Tools, jobToolList()...)
	opts.Tasks = &jobs{inner: opts.Tasks}
	opts.Tools = append(opts.Tools,
		&agent.Tool{
			Name: "test_simple_text", Description: "Returns a fixed text.", ReadOnly: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
			Execute: func(context.Context, json.RawMessage) (any, error) {
				return "This is a simple text response for testing.", nil
			},
		},
		&agent.Tool{
			Name: "test_error_handling", Description: "Always fails, as a tool error.", ReadOnly: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
			Execute: func(context.Context, json.RawMessage) (any, error) {
				return nil, errors.New("this tool intentionally returns an error for testing")
			},
		},
	)
	opts.Resources = append(opts.Resources,
		mcpserver.StaticResource{URI: "test://static-text", Name: "static-text", Description: "A fixed text resource.", MIMEType: "text/plain",
			Text: "This is the content of the static text resource."},
		mcpserver.StaticResource{URI: "test://static-binary", Name: "static-binary", Description: "A fixed binary resource (a PNG).", MIMEType: "image/png",
			Blob: pngPixel},
		mcpserver.StaticResource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource clients may subscribe to.", MIMEType: "text/plain",
			Text: "Watched resource content."},
	)
	key := make([]byte, 32)
	rand.Read(key)
	f := &fixtures{stateKey: key}
	opts.SDK = &mcpserver.SDKFeatures{
		Configure: func(o *mcp.ServerOptions) {
			o.CompletionHandler = f.complete
			o.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
			o.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
		},
		Register: f.register,
	}
}

type fixtures struct {
	stateKey []byte // signs requestState
}

var emptyObject = json.RawMessage(`{"type":"object","properties":{}}`)

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func (f *fixtures) register(s *mcp.Server) {
	tool := func(name, desc string, schema json.RawMessage, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: schema}, h)
	}
	tool("test_image_content", "Returns an image.", emptyObject, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: pngPixel, MIMEType: "image/png"}}}, nil
	})
	tool("test_audio_content", "Returns audio.", emptyObject, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: wavQuiet, MIMEType: "audio/wav"}}}, nil
	})
	tool("test_embedded_resource", "Returns an embedded resource.", emptyObject, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}}}, nil
	})
	tool("test_multiple_content_types", "Returns text, an image and a resource.", emptyObject, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: pngPixel, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
		}}, nil
	})
	logSteps := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: msg})
		}
		return text("Logging tool completed."), nil
	}
	tool("test_tool_with_logging", "Logs three messages while it runs.", emptyObject, logSteps)
	tool("test_logging_tool", "Logs while it runs, where the client asked for logs.", emptyObject, logSteps)
	tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.", emptyObject, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		token := req.Params.GetProgressToken()
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			if token != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100})
			}
		}
		return text("Progress tool completed."), nil
	})
	tool("test_sampling", "Asks the client's model.", json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Prompt string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: args.Prompt}}}, MaxTokens: 100})
			if err != nil {
				return nil, err
			}
			return text("LLM response: " + contentText(res.Content)), nil
		})
	tool("test_elicitation", "Asks the user.", json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Message string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: args.Message, RequestedSchema: json.RawMessage(
				`{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`)})
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("User response: action=%s, content=%s", res.Action, jsonText(res.Content))), nil
		})
	elicitWith := func(schema string) mcp.ToolHandler {
		return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Please review the form.", RequestedSchema: json.RawMessage(schema)})
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, jsonText(res.Content))), nil
		}
	}
	tool("test_elicitation_sep1034_defaults", "Asks the user with a form whose fields have defaults.", emptyObject, elicitWith(
		`{"type":"object","properties":{"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},`+
			`"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},"verified":{"type":"boolean","default":true}}}`))
	tool("test_elicitation_sep1330_enums", "Asks the user with every kind of enum.", emptyObject, elicitWith(
		`{"type":"object","properties":{`+
			`"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},`+
			`"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},`+
			`"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},`+
			`"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},`+
			`"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`))
	tool("test_missing_capability", "Needs the client's sampling capability.", emptyObject, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if caps := req.ClientCapabilities(); caps == nil || caps.Sampling == nil {
			data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}})
			return nil, &jsonrpc.Error{Code: -32021, Message: "this tool needs the client's sampling capability", Data: data}
		}
		return text("The client can sample."), nil
	})
	f.registerInputRequired(s, tool)
	f.registerPrompts(s)
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template-data", Description: "Data for an id.", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id, ok := strings.CutPrefix(req.Params.URI, "test://template/")
			id, ok2 := strings.CutSuffix(id, "/data")
			if !ok || !ok2 || id == "" || strings.Contains(id, "/") {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			body, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)}}}, nil
		})
}

func (f *fixtures) complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var values []string
	for _, v := range []string{"paris", "park", "party"} {
		if strings.HasPrefix(v, req.Params.Argument.Value) {
			values = append(values, v)
		}
	}
	if values == nil {
		values = []string{}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}

func (f *fixtures) registerPrompts(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A prompt without arguments."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "This is a simple prompt for testing."}}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two arguments.", Arguments: []*mcp.PromptArgument{
		{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{
				Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])}}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt that embeds a resource.", Arguments: []*mcp.PromptArgument{
		{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			uri := req.Params.Arguments["resourceUri"]
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing."}}},
				{Role: "user", Content: &mcp.TextContent{Text: "Please process the embedded resource above."}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.ImageContent{Data: pngPixel, MIMEType: "image/png"}},
				{Role: "user", Content: &mcp.TextContent{Text: "Please analyze the image above."}},
			}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that first asks the user for context."},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if r, ok := req.Params.InputResponses["user_context"].(*mcp.ElicitResult); ok && r.Action == "accept" {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{
					Text: "Context: " + fmt.Sprint(r.Content["context"])}}}}, nil
			}
			return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"user_context": askText("What context should the prompt use?", "context")}}, nil
		})
}

// askText is an elicitation of one required string field.
func askText(message, field string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: message, RequestedSchema: json.RawMessage(
		`{"type":"object","properties":{"` + field + `":{"type":"string"}},"required":["` + field + `"]}`)}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func contentText(c mcp.Content) string {
	if t, ok := c.(*mcp.TextContent); ok {
		return t.Text
	}
	return fmt.Sprintf("%T", c)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

// sign and verify keep requestState tamper-proof: the state's JSON,
// base64url, a dot, and its HMAC-SHA256 under a key of this process.
func (f *fixtures) sign(state any) string {
	body, _ := json.Marshal(state)
	m := hmac.New(sha256.New, f.stateKey)
	m.Write(body)
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (f *fixtures) verify(token string, state any) error {
	b64, mac, ok := strings.Cut(token, ".")
	body, err1 := base64.RawURLEncoding.DecodeString(b64)
	sum, err2 := base64.RawURLEncoding.DecodeString(mac)
	if !ok || err1 != nil || err2 != nil {
		return errBadState
	}
	m := hmac.New(sha256.New, f.stateKey)
	m.Write(body)
	if !hmac.Equal(sum, m.Sum(nil)) || json.Unmarshal(body, state) != nil {
		return errBadState
	}
	return nil
}

var errBadState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: it was altered or is not this server's"}
