package host

import (
	"errors"
	"fmt"

	"github.com/agentapp/agentapp/internal/fence"
	"github.com/agentapp/agentapp/model"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxPromptMessages caps the messages of one server prompt a turn sends.
const maxPromptMessages = 200

// promptMessages turns a server prompt's messages (Turn.Prompt) into the
// model's. Text goes as the prompt wrote it, held to the input guard; an
// embedded resource is fenced as data in a user message whatever role the
// prompt gave it, so a server's resource never reaches the model as its own
// words or unfenced; images, audio and binary resources are refused, as the
// model reads text.
func (h *Host) promptMessages(pm []*mcp.PromptMessage) ([]model.Message, error) {
	if len(pm) > maxPromptMessages {
		return nil, fmt.Errorf("the prompt has %d messages, more than the %d a turn sends", len(pm), maxPromptMessages)
	}
	var out []model.Message
	for i, m := range pm {
		if m == nil {
			continue
		}
		role := model.RoleUser
		if m.Role == "assistant" {
			role = model.RoleAssistant
		}
		var text string
		switch ct := m.Content.(type) {
		case *mcp.TextContent:
			text = ct.Text
			src := fmt.Sprintf("message %d of the prompt", i+1)
			if err := h.guards.CheckSuppliedMessage(src, "a server prompt's message", text); err != nil {
				return nil, &InputRefusedError{Err: err, Hint: h.cfg.Hints.InputRefused}
			}
		case *mcp.EmbeddedResource:
			r := ct.Resource
			if r == nil {
				continue
			}
			if r.Text == "" && len(r.Blob) > 0 {
				return nil, fmt.Errorf("message %d of the prompt embeds binary resource %q; the model reads text only", i+1, r.URI)
			}
			role = model.RoleUser
			text = "Embedded resource " + r.URI + " of the prompt. " + attachmentNotice + "\n" + fence.Text(CutText(r.Text, MaxResourceText))
		case *mcp.ResourceLink:
			text = "Resource link: " + ct.URI
		default:
			return nil, fmt.Errorf("message %d of the prompt is not text (%T); the model reads text only", i+1, m.Content)
		}
		out = append(out, model.Message{Role: role, Content: text})
	}
	if len(out) == 0 {
		return nil, errors.New("the prompt has no messages to send")
	}
	return out, nil
}
