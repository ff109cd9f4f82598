package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol 2026-07-28 has no initialize and no session: each request says
// its version in the MCP-Protocol-Version header and in its _meta. The Go
// SDK serves it only on a Stateless streamable handler, so the session
// handler of `serve --http` hands such requests to a second, stateless one
// on the same *mcp.Server (NewHTTPHandler). server/discover goes there too:
// only that handler lists both generations.

// nextProtocolVersion is the first protocol version without sessions.
const nextProtocolVersion = "2026-07-28"

// methodDiscover is the request with which a client of 2026-07-28 asks
// what the server speaks.
const methodDiscover = "server/discover"

// isNextGeneration reports whether an HTTP request belongs to protocol
// 2026-07-28 or later: its MCP-Protocol-Version header names such a
// version, or a message of its body (valid JSON, else nil) carries the
// version in _meta, or is server/discover.
func isNextGeneration(r *http.Request, body []byte) bool {
	if v := r.Header.Get("Mcp-Protocol-Version"); v >= nextProtocolVersion {
		return true
	}
	// Most requests are of 2025-11-25 and have neither marker: two scans
	// of the body spare them a decode.
	if body == nil || (!bytes.Contains(body, []byte(mcp.MetaKeyProtocolVersion)) && !bytes.Contains(body, []byte(methodDiscover))) {
		return false
	}
	type message struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	isNext := func(m message) bool {
		_, ok := m.Params.Meta[mcp.MetaKeyProtocolVersion]
		return ok || m.Method == methodDiscover
	}
	t := bytes.TrimSpace(body)
	if len(t) > 0 && t[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(t, &batch) != nil {
			return false
		}
		for _, raw := range batch {
			var m message
			if json.Unmarshal(raw, &m) == nil && isNext(m) {
				return true
			}
		}
		return false
	}
	var m message
	return json.Unmarshal(t, &m) == nil && isNext(m)
}

// wantsStream reports whether a session-less request (its body, valid JSON,
// else nil) asks for messages before its answer: progress (a
// progressToken) or logs (a log level in _meta). Those can only go on the
// request's own event stream. A false positive (the words inside an
// argument) costs only the event-stream framing.
func wantsStream(body []byte) bool {
	return bytes.Contains(body, []byte(`"progressToken"`)) || bytes.Contains(body, []byte(mcp.MetaKeyLogLevel))
}

// taskNameMismatch checks the Mcp-Name header of a session-less tasks/get,
// tasks/update or tasks/cancel (body valid JSON, else nil): when present it
// must name the task of params.taskId (SEP-2243; the SDK checks the header
// for tools, prompts and resources only). It returns the request's raw id
// and true for a mismatch.
func taskNameMismatch(r *http.Request, body []byte) (json.RawMessage, bool) {
	name, ok := r.Header["Mcp-Name"]
	if !ok || body == nil || !bytes.Contains(body, []byte(`"tasks/`)) {
		return nil, false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil, false
	}
	switch m.Method {
	case "tasks/get", "tasks/update", "tasks/cancel":
		return m.ID, len(name) != 1 || strings.TrimSpace(name[0]) != m.Params.TaskID
	}
	return nil, false
}

// askingSession reports whether body (valid JSON, else nil) is an
// initialize whose client declares a capability a call may use to ask it:
// elicitation or sampling. Such a session's answers are event streams, so
// that what a call asks goes out on its own response. (Roots are left out:
// clients declare them by default, and a tool that lists them can do so
// on the GET stream; the others keep JSON answers and the direct path.)
func askingSession(body []byte) bool {
	if body == nil || !bytes.Contains(body, []byte(`"initialize"`)) {
		return false
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "initialize" {
		return false
	}
	for _, k := range []string{"elicitation", "sampling"} {
		if v, ok := m.Params.Capabilities[k]; ok && string(v) != "null" {
			return true
		}
	}
	return false
}
