package web

import "github.com/agentapp/agentapp/host"

// Cut is the "cut" field of a step whose tool result was over its cap
// (--max-output-tokens, a server's maxOutputTokens): the model saw the
// first ShownBytes and can read the rest by ID with readToolResult.
type Cut struct {
	// ID is the stored whole's handle; empty when it could not be stored.
	ID         string `json:"id,omitempty"`
	Bytes      int    `json:"bytes"`
	Tokens     int    `json:"tokens"`
	ShownBytes int    `json:"shown_bytes"`
	// Notice says it in a sentence, for the page.
	Notice string `json:"notice"`
}

func cutOf(c *host.ResultCut) *Cut {
	if c == nil {
		return nil
	}
	return &Cut{ID: c.ID, Bytes: c.Bytes, Tokens: c.Tokens, ShownBytes: c.Shown, Notice: c.Notice}
}
