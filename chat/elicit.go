package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentapp/agentapp/mcpclient/elicit"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineAsker is what a question to the user needs of the terminal: one
// answer line per prompt, and a place for notes that does not fight the
// line being edited. The chat's lineReader is one, so questions from
// servers, the guards' confirmations and the REPL never read stdin at the
// same time, whichever line editor is behind it.
type lineAsker interface {
	read(ctx context.Context, prompt string, intr <-chan os.Signal) (string, error)
	noteWriter() io.Writer
}

// fieldTries is how often a field is asked again after an invalid answer
// before the form is cancelled: a form must end even when nobody can fill
// it.
const fieldTries = 3

// TerminalElicitor is the mcpclient.Elicitor of a person at a terminal. A
// form is asked field by field, built from the requested schema: each
// field shows its title, description, choices (numbered) and default, and
// Enter keeps the default. Every answer is checked against the schema
// before it is sent, and an invalid one is asked again. Typing :decline or
// :cancel at any field ends the form with that action. In URL mode the URL
// is shown and Enter accepts once the user is done with it. End of input,
// a cancelled request and a non-interactive stdin end the request (cancel
// or, off a terminal, decline) without sending anything.
type TerminalElicitor struct {
	in          lineAsker
	out         io.Writer
	interactive bool
	turn        chan struct{} // one request at a time
	spin        *atomic.Pointer[spinner]
}

func newTerminalElicitor(in lineAsker, out io.Writer, interactive bool, spin *atomic.Pointer[spinner]) *TerminalElicitor {
	return &TerminalElicitor{in: in, out: out, interactive: interactive, turn: make(chan struct{}, 1), spin: spin}
}

// Elicit implements mcpclient.Elicitor.
func (e *TerminalElicitor) Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	who := "MCP server " + textsafe.Escape(server)
	if !e.interactive {
		fmt.Fprintf(e.out, "%s asks for input but stdin is not a terminal: declined\n", who)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	select {
	case e.turn <- struct{}{}:
		defer func() { <-e.turn }()
	case <-ctx.Done():
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	if e.spin != nil {
		// The spinner would repaint the form's lines; the turn restarts it
		// with its next step.
		e.spin.Load().halt()
	}
	note := e.in.noteWriter()
	if p.Mode == "url" || (p.Mode == "" && p.URL != "") {
		return e.url(ctx, who, note, p)
	}
	form, err := elicit.ParseForm(p.RequestedSchema)
	if err != nil {
		fmt.Fprintf(note, "%s asks for input with a form that cannot be shown (%v): declined\n", who, err)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	fmt.Fprintf(note, "%s asks: %s\n", who, textsafe.Preview(p.Message, 500))
	fmt.Fprintln(note, "  (Enter keeps the [default]; type :decline or :cancel at any field to stop)")
	content := map[string]any{}
	for _, f := range form.Fields {
		v, action := e.field(ctx, note, f)
		if action != "" {
			fmt.Fprintf(note, "  %s\n", action+"d: nothing was sent")
			return &mcp.ElicitResult{Action: action}, nil
		}
		if v != nil {
			content[f.Name] = v
		}
	}
	summary, _ := json.Marshal(content)
	answer, err := e.in.read(ctx, fmt.Sprintf("  Send %s to %s? [Y/n] ", textsafe.Preview(string(summary), 300), who), nil)
	if err != nil {
		fmt.Fprintln(note, "\n  cancelled: nothing was sent")
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	if a := strings.ToLower(strings.TrimSpace(answer)); a == "n" || a == "no" || a == ":decline" {
		fmt.Fprintln(note, "  declined: nothing was sent")
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// field asks for one field until the answer is valid; action is "decline"
// or "cancel" when the form ends there.
func (e *TerminalElicitor) field(ctx context.Context, note io.Writer, f elicit.FormField) (any, string) {
	label := textsafe.Escape(f.Label())
	if f.Required {
		label += " (required)"
	}
	if f.Description != "" {
		fmt.Fprintf(note, "  %s: %s\n", label, textsafe.Preview(f.Description, 200))
	}
	if len(f.Options) > 0 {
		parts := make([]string, len(f.Options))
		for i, o := range f.Options {
			parts[i] = fmt.Sprintf("%d) %s", i+1, textsafe.Preview(o.Title, 60))
		}
		how := "choose one by number or name"
		if f.Type == "array" {
			how = "choose any, separated by commas"
		}
		fmt.Fprintf(note, "    %s (%s)\n", strings.Join(parts, "  "), how)
	}
	prompt := "  " + label
	switch {
	case f.Type == "boolean":
		prompt += " [y/n]"
	case f.Format != "":
		prompt += " (" + textsafe.Escape(f.Format) + ")"
	}
	if f.Default != nil {
		prompt += " [" + textsafe.Preview(defaultText(f), 60) + "]"
	}
	prompt += ": "
	for try := 0; try < fieldTries; try++ {
		line, err := e.in.read(ctx, prompt, nil)
		if err != nil {
			return nil, "cancel"
		}
		switch strings.TrimSpace(line) {
		case ":decline":
			return nil, "decline"
		case ":cancel":
			return nil, "cancel"
		}
		v, err := f.Parse(line)
		if err == nil {
			return v, ""
		}
		fmt.Fprintf(note, "    not valid: %v\n", err)
	}
	return nil, "cancel"
}

// defaultText shows a field's default as the user would type it: the
// title of a chosen option, yes/no for a boolean.
func defaultText(f elicit.FormField) string {
	title := func(v any) string {
		for _, o := range f.Options {
			if o.Value == v {
				return o.Title
			}
		}
		return fmt.Sprint(v)
	}
	switch d := f.Default.(type) {
	case bool:
		if d {
			return "y"
		}
		return "n"
	case []any:
		parts := make([]string, len(d))
		for i, v := range d {
			parts[i] = title(v)
		}
		return strings.Join(parts, ", ")
	}
	return title(f.Default)
}

func (e *TerminalElicitor) url(ctx context.Context, who string, note io.Writer, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	fmt.Fprintf(note, "%s asks you to open this URL: %s\n  %s\n", who, textsafe.Preview(p.Message, 500), textsafe.Preview(p.URL, 2000))
	line, err := e.in.read(ctx, "  Press Enter when you are done there, or type decline or cancel: ", nil)
	if err != nil {
		fmt.Fprintln(note, "\n  cancelled")
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "decline", ":decline", "d":
		return &mcp.ElicitResult{Action: "decline"}, nil
	case "cancel", ":cancel", "c":
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	return &mcp.ElicitResult{Action: "accept"}, nil
}
