package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The input-required tools (SEP-2322): a call without the answers it needs
// returns the requests for them (resultType "input_required"), and the
// client calls again with inputResponses and, where given, requestState.
// On a 2025-11-25 session the SDK asks the client itself and calls again.

// answer returns the response to key of the right kind, if the call has it.
func answer[T mcp.InputResponse](req *mcp.CallToolRequest, key string) (T, bool) {
	v, ok := req.Params.InputResponses[key].(T)
	return v, ok
}

func elicited(req *mcp.CallToolRequest, key, field string) (string, bool) {
	r, ok := answer[*mcp.ElicitResult](req, key)
	if !ok || r.Action != "accept" {
		return "", false
	}
	v, ok := r.Content[field]
	return fmt.Sprint(v), ok
}

func sampled(req *mcp.CallToolRequest, key string) (string, bool) {
	r, ok := answer[*mcp.CreateMessageWithToolsResult](req, key)
	if !ok {
		return "", false
	}
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, contentText(c))
	}
	return strings.Join(parts, " "), true
}

func rootsOf(req *mcp.CallToolRequest, key string) ([]string, bool) {
	r, ok := answer[*mcp.ListRootsResult](req, key)
	if !ok {
		return nil, false
	}
	uris := []string{}
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	return uris, true
}

func askSample(text string, maxTokens int64) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}, MaxTokens: maxTokens}
}

func needs(reqs mcp.InputRequestMap, state string) *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}
}

// roundState is what the stateful tools keep in requestState.
type roundState struct {
	Tool  string `json:"tool"`
	Round int    `json:"round"`
	Name  string `json:"name,omitempty"`
}

// state checks a call's requestState: none (the first round), or one this
// server signed for tool.
func (f *fixtures) state(req *mcp.CallToolRequest, tool string) (roundState, error) {
	var st roundState
	if req.Params.RequestState == "" {
		return st, nil
	}
	if err := f.verify(req.Params.RequestState, &st); err != nil || st.Tool != tool {
		return roundState{}, errBadState
	}
	return st, nil
}

func (f *fixtures) registerInputRequired(s *mcp.Server, tool func(string, string, json.RawMessage, mcp.ToolHandler)) {
	tool("test_input_required_result_elicitation", "Asks the user's name, then greets them.", emptyObject,
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if name, ok := elicited(req, "user_name", "name"); ok {
				return text("Hello, " + name + "!"), nil
			}
			return needs(mcp.InputRequestMap{"user_name": askText("What is your name?", "name")}, ""), nil
		})
	tool("test_streaming_elicitation", "Asks the user's name, then greets them.", emptyObject,
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if name, ok := elicited(req, "user_name", "name"); ok {
				return text("Hello, " + name + "!"), nil
			}
			return needs(mcp.InputRequestMap{"user_name": askText("What is your name?", "name")}, ""), nil
		})
	tool("test_input_required_result_sampling", "Asks the client's model a question.", emptyObject,
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if a, ok := sampled(req, "capital_question"); ok {
				return text("The model answered: " + a), nil
			}
			return needs(mcp.InputRequestMap{"capital_question": askSample("What is the capital of France?", 100)}, ""), nil
		})
	tool("test_input_required_result_list_roots", "Asks the client's roots.", emptyObject,
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if uris, ok := rootsOf(req, "client_roots"); ok {
				return text("Client roots: " + strings.Join(uris, ", ")), nil
			}
			return needs(mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}}, ""), nil
		})
	tool("test_input_required_result_capabilities", "Asks only what the client can answer.", emptyObject,
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if _, ok := sampled(req, "question"); ok {
				return text("Answered."), nil
			}
			if _, ok := elicited(req, "user_name", "name"); ok {
				return text("Answered."), nil
			}
			caps := req.ClientCapabilities()
			switch {
			case caps != nil && caps.Elicitation != nil:
				return needs(mcp.InputRequestMap{"user_name": askText("What is your name?", "name")}, ""), nil
			case caps != nil && caps.Sampling != nil:
				return needs(mcp.InputRequestMap{"question": askSample("What is the capital of France?", 100)}, ""), nil
			}
			return text("The client declared neither elicitation nor sampling, so nothing was asked."), nil
		})
	for _, name := range []string{"test_input_required_result_request_state", "test_input_required_result_tampered_state"} {
		tool(name, "Asks for a confirmation, keeping its state in requestState.", emptyObject,
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				st, err := f.state(req, name)
				if err != nil {
					return nil, err
				}
				if _, ok := answer[*mcp.ElicitResult](req, "confirm"); ok && st.Round == 1 {
					return text("Confirmed; state-ok."), nil
				}
				ask := &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}
				return needs(mcp.InputRequestMap{"confirm": ask}, f.sign(roundState{Tool: name, Round: 1})), nil
			})
	}
	const multi = "test_input_required_result_multiple_inputs"
	tool(multi, "Asks for a name, a greeting and the roots at once.", emptyObject,
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			st, err := f.state(req, multi)
			if err != nil {
				return nil, err
			}
			name, okName := elicited(req, "user_name", "name")
			greeting, okGreeting := sampled(req, "greeting")
			roots, okRoots := rootsOf(req, "client_roots")
			if okName && okGreeting && okRoots && st.Round == 1 {
				return text(fmt.Sprintf("Name: %s; greeting: %s; roots: %s", name, greeting, strings.Join(roots, ", "))), nil
			}
			return needs(mcp.InputRequestMap{
				"user_name":    askText("What is your name?", "name"),
				"greeting":     askSample("Generate a greeting", 50),
				"client_roots": &mcp.ListRootsParams{},
			}, f.sign(roundState{Tool: multi, Round: 1})), nil
		})
	const rounds = "test_input_required_result_multi_round"
	tool(rounds, "Asks a name, then a colour, one round each.", emptyObject,
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			st, err := f.state(req, rounds)
			if err != nil {
				return nil, err
			}
			if st.Round == 2 {
				if color, ok := elicited(req, "step2", "color"); ok {
					return text(fmt.Sprintf("%s likes %s.", st.Name, color)), nil
				}
			}
			if name, ok := elicited(req, "step1", "name"); ok && st.Round == 1 {
				return needs(mcp.InputRequestMap{"step2": askText("Step 2: What is your favorite color?", "color")},
					f.sign(roundState{Tool: rounds, Round: 2, Name: name})), nil
			}
			return needs(mcp.InputRequestMap{"step1": askText("Step 1: What is your name?", "name")}, f.sign(roundState{Tool: rounds, Round: 1})), nil
		})
}
