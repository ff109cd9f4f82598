package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/fence"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/model"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// printPrompts is /prompts: every prompt of every server, as the command
// that runs it.
func (c *Chat) printPrompts(ctx context.Context, w io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, catalogTimeout)
	defer cancel()
	cats := c.catalogs(true)
	if len(cats) == 0 {
		fmt.Fprintln(w, "No connected MCP server offers prompts.")
		return
	}
	for _, cat := range cats {
		ps, err := cat.Prompts(ctx)
		name := textsafe.Escape(cat.Name())
		if err != nil {
			fmt.Fprintf(w, "MCP server %s: listing its prompts failed: %s\n", name, escapeLines(err.Error()))
			continue
		}
		fmt.Fprintf(w, "MCP server %s: %d %s\n", name, len(ps), plural(len(ps), "prompt", "prompts"))
		for i, p := range ps {
			if i == maxListed {
				fmt.Fprintf(w, "  … and %d more\n", len(ps)-maxListed)
				break
			}
			line := "  /" + cat.Name() + ":" + p.Name
			for _, a := range p.Arguments {
				if a.Required {
					line += " " + a.Name + "=…"
				} else {
					line += " [" + a.Name + "=…]"
				}
			}
			if p.Description != "" {
				line += "  — " + p.Description
			}
			fmt.Fprintln(w, textsafe.Preview(line, 300))
		}
	}
	fmt.Fprintln(w, "Run one as /SERVER:PROMPT name=value …; its messages are sent to the model.")
}

// promptCommand runs /SERVER:PROMPT arg=value … when the line names a
// connected server's prompt, and reports whether it did.
func (c *Chat) promptCommand(ctx context.Context, line string) bool {
	word, rest, _ := strings.Cut(line, " ")
	server, name, ok := strings.Cut(strings.TrimPrefix(word, "/"), ":")
	if !ok || name == "" {
		return false
	}
	cat, ok := c.catalog(server)
	if !ok || !cat.OffersPrompts() {
		return false
	}
	args, err := promptArgs(rest)
	if err != nil {
		fmt.Fprintln(c.cfg.Err, "agentapp: error:", err)
		return true
	}
	pctx, cancel := context.WithTimeout(ctx, catalogTimeout)
	defer cancel()
	if err := checkPromptArgs(pctx, cat, name, args); err != nil {
		fmt.Fprintln(c.cfg.Err, "agentapp: error:", textsafe.Escape(err.Error()))
		return true
	}
	res, err := cat.GetPrompt(pctx, name, args)
	if err != nil {
		fmt.Fprintln(c.cfg.Err, "agentapp: error:", escapeLines(err.Error()))
		return true
	}
	msgs, err := promptMessages(res)
	if err != nil {
		fmt.Fprintln(c.cfg.Err, "agentapp: error:", textsafe.Escape(err.Error()))
		return true
	}
	fmt.Fprintln(c.cfg.Err, textsafe.Escape(fmt.Sprintf("Sending prompt %s of MCP server %s (%d %s) to the model.", name, server, len(msgs), plural(len(msgs), "message", "messages"))))
	c.replRun(ctx, func(obs *turnObserver) (turnResult, error) {
		return c.turnMessages(ctx, host.Turn{Messages: msgs}, obs, true)
	})
	return true
}

// promptArgs reads name=value words; a value may be quoted with double
// quotes to hold spaces.
func promptArgs(s string) (map[string]string, error) {
	args := map[string]string{}
	s = strings.TrimSpace(s)
	for s != "" {
		name, rest, ok := strings.Cut(s, "=")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("prompt arguments are name=value (quote a value with spaces: name=\"a b\"); got %q", textsafe.Preview(s, 60))
		}
		var value string
		if strings.HasPrefix(rest, `"`) {
			end := strings.Index(rest[1:], `"`)
			if end < 0 {
				return nil, fmt.Errorf("argument %s: the quote is not closed", name)
			}
			value, rest = rest[1:1+end], rest[2+end:]
		} else {
			value, rest, _ = strings.Cut(rest, " ")
		}
		args[name] = value
		s = strings.TrimSpace(rest)
	}
	return args, nil
}

// promptMessages turns a prompt's messages into the model's. Embedded
// resources are attached as data, like @-references; images and audio
// cannot be passed to a text model and are refused.
func promptMessages(res *mcp.GetPromptResult) ([]model.Message, error) {
	var out []model.Message
	for i, m := range res.Messages {
		if m == nil {
			continue
		}
		var text string
		switch ct := m.Content.(type) {
		case *mcp.TextContent:
			text = ct.Text
		case *mcp.EmbeddedResource:
			if ct.Resource == nil {
				continue
			}
			text = "Embedded resource " + ct.Resource.URI + ". " + host.ResourceNotice + "\n" + fence.Text(host.CutText(ct.Resource.Text, host.MaxResourceText))
		case *mcp.ResourceLink:
			text = "Resource link: " + ct.URI
		default:
			return nil, fmt.Errorf("message %d of the prompt is not text (%T); this chat's model reads text only", i+1, m.Content)
		}
		role := model.RoleUser
		if m.Role == "assistant" {
			role = model.RoleAssistant
		}
		out = append(out, model.Message{Role: role, Content: text})
	}
	if len(out) == 0 {
		return nil, errors.New("the prompt has no messages to send")
	}
	return out, nil
}

// checkPromptArgs says, before the server is asked, that a prompt does not
// exist or lacks a required argument, naming what to type instead. When
// the list cannot be read the server decides.
func checkPromptArgs(ctx context.Context, cat host.Catalog, name string, args map[string]string) error {
	ps, err := cat.Prompts(ctx)
	if err != nil {
		return nil
	}
	for _, p := range ps {
		if p.Name != name {
			continue
		}
		var missing []string
		for _, a := range p.Arguments {
			if _, ok := args[a.Name]; a.Required && !ok {
				missing = append(missing, a.Name+"=…")
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("prompt %s of MCP server %s needs %s", name, cat.Name(), strings.Join(missing, " "))
		}
		return nil
	}
	return fmt.Errorf("MCP server %s has no prompt %s; /prompts lists them", cat.Name(), name)
}
