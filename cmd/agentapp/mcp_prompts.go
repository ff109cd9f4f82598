package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mcpelicit "github.com/agentapp/agentapp/mcpclient/elicit"
	"log/slog"

	"github.com/agentapp/agentapp/chat"
	"github.com/agentapp/agentapp/internal/term"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

// mcpClientFlags are the client half's flags of `agentapp mcp`: what to
// answer when the server asks for a completion or for input, which roots
// to offer, which server logs to show.
type mcpClientFlags struct {
	sampling string
	elicit   string
	roots    []string
	logLevel string
}

func (c *mcpClientFlags) register(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&c.sampling, "sampling", mcpconfig.SamplingDeny, `the server's sampling requests: "deny" (default), "ask" (approve each on the terminal) or "allow"; answered by the chat's model (OPENAI_* or the offline demo)`)
	pf.StringVar(&c.elicit, "elicit", "", `the server's requests for input: "ask" (a form on the terminal; the default on a terminal), "defaults" (accept with the schema's defaults) or "decline" (the default otherwise)`)
	pf.StringArrayVar(&c.roots, "root", nil, "a directory offered to the server as a root (repeatable; default: the config's \"roots\", else the working directory)")
	pf.StringVar(&c.logLevel, "mcp-log-level", defaultMCPLogLevel, "least severe server log message shown on stderr: "+mcpLogLevelUsage())
}

// options checks the flags and returns the connect options they ask for,
// with the server's config adjusted (sampling policy, roots).
func (c *mcpClientFlags) options(cmd *cobra.Command, cfg *mcpconfig.Server) ([]mcpclient.ConnectOption, error) {
	if c.sampling != mcpconfig.SamplingDeny && c.sampling != mcpconfig.SamplingAsk && c.sampling != mcpconfig.SamplingAllow {
		return nil, mcpUsageError(cmd, "--sampling %q: want deny, ask or allow", c.sampling)
	}
	level, err := parseMCPLogLevel(c.logLevel)
	if err != nil {
		return nil, mcpUsageError(cmd, "%v", err)
	}
	stdin, stderr := cmd.InOrStdin(), cmd.ErrOrStderr()
	interactive := term.IsTerminal(stdin)
	elicit := c.elicit
	if elicit == "" {
		elicit = "decline"
		if interactive {
			elicit = "ask"
		}
	}
	logger := cmdLogger(cmd, stderr, slog.LevelInfo)
	var m model.Model
	if c.sampling != mcpconfig.SamplingDeny {
		if m, _, _, err = chooseModel(""); err != nil {
			return nil, err
		}
	}
	sampler, asker := chat.NewTerminalHandlers(m, stdin, stderr, interactive)
	var elicitor mcpclient.Elicitor
	switch elicit {
	case "ask":
		elicitor = asker
	case "defaults":
		elicitor = mcpelicit.DefaultsElicitor{Logger: logger}
	case "decline":
		elicitor = mcpelicit.DecliningElicitor{Logger: logger}
	default:
		return nil, mcpUsageError(cmd, "--elicit %q: want ask, defaults or decline", c.elicit)
	}
	cfg.Sampling = c.sampling
	if len(c.roots) > 0 {
		cfg.Roots = c.roots
	}
	logs := &serverLogPrinter{w: stderr, min: level}
	opts := []mcpclient.ConnectOption{
		mcpclient.WithElicitor(elicitor),
		mcpclient.WithRoots(workingDirRoots()),
		mcpclient.WithServerLogs(level, logs.print),
		// Progress is for the person watching; stdout stays the result.
		mcpclient.WithProgress(func(p mcpclient.Progress) {
			fmt.Fprintf(stderr, "agentapp: MCP server %s: %s\n", textsafe.Escape(p.Server), textsafe.Escape(p.String()))
		}),
	}
	if sampler != nil {
		opts = append(opts, mcpclient.WithSampler(sampler, 0))
	} else {
		// Advertised and refused: the server is told sampling is denied,
		// instead of hiding what it offers.
		opts = append(opts, mcpclient.WithSampler(deniedSampler{}, 0))
	}
	return opts, nil
}

// deniedSampler stands in for a model under --sampling deny; the bridge
// refuses such requests before they reach it.
type deniedSampler struct{}

func (deniedSampler) CreateMessage(context.Context, *mcpclient.SamplingRequest) (*mcp.CreateMessageResult, error) {
	return nil, errors.New("sampling is denied (agentapp mcp --sampling deny)")
}

func newMCPPromptsCmd(f *mcpFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "prompts [--server S] [-- COMMAND ARGS…]",
		Short: "List the server's prompts with their arguments",
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBridge(cmd, f, args, 0, func(ctx context.Context, b *mcpclient.Bridge, _ []string) error {
				ps, err := b.ListPrompts(ctx)
				if err != nil {
					return &exitError{mcpExitConnection, err}
				}
				if ps == nil {
					ps = []*mcp.Prompt{}
				}
				return mcpWriteJSON(cmd.OutOrStdout(), map[string]any{"server": b.Name(), "prompts": ps})
			})
		},
	}
}

func newMCPPromptCmd(f *mcpFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "prompt NAME [JSON-ARGS] [--server S] [-- COMMAND ARGS…]",
		Short: `Get one prompt's messages; JSON-ARGS is an object of strings, like '{"city":"Paris"}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			own := args
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				own = args[:at]
			}
			var promptArgs map[string]string
			if len(own) == 2 {
				var err error
				if promptArgs, err = parsePromptArgs(own[1]); err != nil {
					return mcpUsageError(cmd, "JSON-ARGS: %v", err)
				}
			}
			return withBridge(cmd, f, args, 2, func(ctx context.Context, b *mcpclient.Bridge, own []string) error {
				if len(own) == 0 {
					return mcpUsageError(cmd, "prompt needs the prompt's name (agentapp mcp prompts lists them)")
				}
				res, err := b.GetPrompt(ctx, own[0], promptArgs)
				if err != nil {
					return requestError(err)
				}
				return mcpWriteJSON(cmd.OutOrStdout(), res)
			})
		},
	}
}

// parsePromptArgs reads prompt arguments: a JSON object whose values are
// strings (prompts/get takes nothing else).
func parsePromptArgs(s string) (map[string]string, error) {
	var raw map[string]any
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("want a JSON object like '{\"city\":\"Paris\"}': %v", err)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("argument %q is %s; prompt arguments are strings", k, jsonKindOf(v))
		}
		out[k] = str
	}
	return out, nil
}

func jsonKindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "not a string"
}
