package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"

	mcpskills "github.com/agentapp/agentapp/mcpclient/skills"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Skills extension: package mcpclient/skills lists and loads a
// server's skills through these two.

// DeclaresSkills reports whether the server declared the Skills extension.
func (b *Bridge) DeclaresSkills() bool { return mcpskills.Declared(b.session()) }

// SkillsRequest sends skills/list or skills/get and returns the answer as
// sent; it is tracked, bounded and worded like every request.
func (b *Bridge) SkillsRequest(ctx context.Context, method string, p *mcpskills.Params) (json.RawMessage, error) {
	what := fmt.Sprintf("%s on MCP server %s", method, b.name)
	res, err := request(ctx, b, what, func(ctx context.Context, s *mcp.ClientSession) (*mcpskills.Raw, error) {
		return mcp.CallCustomMethod[*mcpskills.Params, *mcpskills.Raw](ctx, s, method, p)
	})
	if err != nil {
		return nil, err
	}
	return res.JSON, nil
}
