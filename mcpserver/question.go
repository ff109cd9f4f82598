package mcpserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Question is what a published tool asks the user when a call leaves out
// an argument its schema lets the caller omit but the tool cannot do
// without (requestRefund's reason). Where the client can ask its user, the
// server asks through it instead of failing the call:
//
//   - protocol 2026-07-28 and later, with elicitation declared: the call
//     answers with resultType "input_required", an elicitation keyed by
//     the argument's name and a signed requestState; the client calls
//     again with the answer (SEP-2322);
//   - a 2025-11-25 session whose client declared elicitation: the SDK
//     asks the client (elicitation/create) during the call and runs the
//     handler again with the answer;
//   - anywhere else (a stateless 2025-11-25 request, a client without
//     elicitation): the tool runs without it and fails as it would for
//     the local loop ("reason is required").
//
// The direct paths hand such a call to the SDK's path (matchDirect).
type Question struct {
	// Arg is the argument, a string property of the tool's input schema.
	Arg string
	// Message is put to the user; Description describes the form's field.
	Message, Description string
}

// stateTTL bounds how long a requestState stays valid: long enough for a
// person to answer, short enough that old state cannot be replayed later.
const stateTTL = time.Hour

// questionState is what a requestState carries: the tool, the SHA-256 of
// the call's arguments (so the retry must be the same call) and when it
// expires.
type questionState struct {
	Tool    string `json:"t"`
	ArgsSum string `json:"a"`
	Expires int64  `json:"e"` // Unix seconds
}

// stateSigner signs and checks requestState with an HMAC-SHA256 key. With
// the store's key (Options.StateKey) every replica accepts the state any
// other made.
type stateSigner struct{ key []byte }

func newStateSigner(key []byte) *stateSigner {
	if len(key) == 0 {
		// A key of this process only: state made here is refused by any
		// other, which is right for a server that has no shared store.
		key = make([]byte, 32)
		rand.Read(key)
	}
	return &stateSigner{key: key}
}

func (s *stateSigner) sign(st questionState) string {
	body, _ := json.Marshal(st)
	m := hmac.New(sha256.New, s.key)
	m.Write(body)
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (s *stateSigner) verify(token string) (questionState, bool) {
	var st questionState
	b64, mac, ok := strings.Cut(token, ".")
	body, err1 := base64.RawURLEncoding.DecodeString(b64)
	sum, err2 := base64.RawURLEncoding.DecodeString(mac)
	if !ok || err1 != nil || err2 != nil {
		return st, false
	}
	m := hmac.New(sha256.New, s.key)
	m.Write(body)
	if !hmac.Equal(sum, m.Sum(nil)) || json.Unmarshal(body, &st) != nil {
		return questionState{}, false
	}
	return st, true
}

func argsSum(args json.RawMessage) string {
	sum := sha256.Sum256(args)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// lacksArg reports whether args, a JSON object, leaves arg out, null or
// blank. Arguments that are not an object are left to the tool's checks.
func lacksArg(args json.RawMessage, arg string) bool {
	if len(args) == 0 {
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return false
	}
	v, ok := m[arg]
	if !ok || string(v) == "null" {
		return true
	}
	var s string
	return json.Unmarshal(v, &s) == nil && strings.TrimSpace(s) == ""
}

// withArg returns args with arg set to value.
func withArg(args json.RawMessage, arg, value string) json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(args) > 0 {
		_ = json.Unmarshal(args, &m)
	}
	m[arg], _ = json.Marshal(value)
	out, _ := json.Marshal(m)
	return out
}

var errBadState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
	Message: "invalid requestState: it was altered, has expired, or belongs to another call; call the tool again without inputResponses"}

// ask handles a call of t that lacks q.Arg (see Question). It returns the
// arguments to run t with, or the result to answer with instead.
func (s *Server) ask(req *mcp.CallToolRequest, t *agent.Tool, q Question, args json.RawMessage) (json.RawMessage, *mcp.CallToolResult, error) {
	if resp, ok := req.Params.InputResponses[q.Arg]; ok {
		st, valid := s.signer.verify(req.Params.RequestState)
		if !valid || st.Tool != t.Name || st.ArgsSum != argsSum(args) || time.Now().Unix() > st.Expires {
			return nil, nil, errBadState
		}
		if r, ok := resp.(*mcp.ElicitResult); ok {
			if r.Action != "accept" {
				return nil, errorResult(q.Arg + " is required, and the user did not give it (" + r.Action + "); the call was not made"), nil
			}
			if v, ok := r.Content[q.Arg].(string); ok && strings.TrimSpace(v) != "" {
				return withArg(args, q.Arg, v), nil, nil
			}
		}
		// An answer of the wrong kind or without the value: ask again.
	}
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return args, nil, nil
	}
	schema, _ := json.Marshal(map[string]any{
		"type":       "object",
		"properties": map[string]any{q.Arg: map[string]any{"type": "string", "description": q.Description}},
		"required":   []string{q.Arg},
	})
	return nil, &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{q.Arg: &mcp.ElicitParams{Message: q.Message, RequestedSchema: json.RawMessage(schema)}},
		RequestState:  s.signer.sign(questionState{Tool: t.Name, ArgsSum: argsSum(args), Expires: time.Now().Add(stateTTL).Unix()}),
	}, nil
}
