// Package skills is the host side of MCP's Skills extension (SEP-2640,
// io.modelcontextprotocol/skills) over one connected server: it lists the
// server's skills, checks each entry, and loads a skill's SKILL.md and
// supporting files only when asked, verifying every byte against the
// entry it holds before giving anything out.
//
// The format and its checks are package github.com/agentapp/agentapp/skills;
// this package adds the protocol: skills/list (every page, within bounds),
// skills/get, resources/read, and a cache of verified content keyed by
// (server, uri). Nothing is read ahead of need: not on connect, not on
// listing.
package skills

import (
	"encoding/json"

	spec "github.com/agentapp/agentapp/skills"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Params are the params of skills/list (Cursor) and skills/get (URI).
type Params struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
	URI    string `json:"uri,omitempty"`
}

// Raw keeps an answer as the server sent it; entries are decoded one by
// one so that a malformed one costs only itself.
type Raw struct {
	mcp.ResultBase
	JSON json.RawMessage
}

func (r *Raw) UnmarshalJSON(b []byte) error {
	r.JSON = append(json.RawMessage(nil), b...)
	return nil
}

func (r *Raw) MarshalJSON() ([]byte, error) {
	if len(r.JSON) == 0 {
		return []byte("{}"), nil
	}
	return r.JSON, nil
}

// Register lets client send the extension's methods; mcpclient calls it
// on every client it builds.
func Register(client *mcp.Client) {
	_ = mcp.AddSendingCustomMethod[*Params, *Raw](client, spec.MethodList)
	_ = mcp.AddSendingCustomMethod[*Params, *Raw](client, spec.MethodGet)
}

// Declared reports whether the server of s declared the extension: in
// initialize's capabilities (2025-11-25) or server/discover's
// (2026-07-28), which the SDK presents the same way.
func Declared(s *mcp.ClientSession) bool {
	if s == nil {
		return false
	}
	ir := s.InitializeResult()
	if ir == nil || ir.Capabilities == nil {
		return false
	}
	_, ok := ir.Capabilities.Extensions[spec.ExtensionID]
	return ok
}
