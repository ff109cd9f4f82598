package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/editdist"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

// Exit codes of `agentapp mcp`, for scripts.
const (
	mcpExitToolError  = 1 // the tool returned an error; the result is still printed
	mcpExitUsage      = 2
	mcpExitConnection = 3 // connection or protocol failure; message on stderr
	// mcpExitNotFound: the server has no such tool, or refused the request
	// (a resource it does not have, a prompt's arguments): the connection
	// is fine, the request is not.
	mcpExitNotFound = 4
)

// mcpFlags are the connection flags shared by the mcp subcommands.
type mcpFlags struct {
	server         string
	config         string
	token          string
	headers        []string
	callTimeout    time.Duration
	connectTimeout time.Duration
	verbose        bool
	auth           authFlags      // remote servers: transport and OAuth (mcp_auth.go)
	client         mcpClientFlags // mcp_prompts.go
}

func newMCPCmd() *cobra.Command {
	f := &mcpFlags{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage the chat's MCP servers (add, list, get…) and call any MCP server's tools",
		Long: `mcp manages the MCP servers the chat starts, and is a scriptable MCP client.

add, add-json, add-from-claude-desktop, list, get, remove, approve and
reset-project-choices manage the servers the chat starts: yours for this
project (--scope local, the default), the project's ./.mcp.json (--scope
project) or yours for every project (--scope user); see agentapp mcp add
--help. They print text; list and get print JSON with --json.

tools, call, resources, read, prompts, prompt and skills connect to one MCP server
per invocation and print JSON on stdout.

The server is either --server (an http(s) URL of a streamable HTTP server, or
of a legacy SSE one, see --transport; or the name of a server in the --config
file, else of one mcp list shows here, e.g. added with mcp add) or a stdio
command after "--":

  agentapp mcp tools -- npx -y @modelcontextprotocol/server-memory
  agentapp mcp call get-sum '{"a":1,"b":2}' -- mcp-server-everything
  agentapp mcp resources --server http://127.0.0.1:8080/mcp --token T
  agentapp mcp read docs://kb/faq-1a2b3c4d --server kb --config mcp.json
  agentapp mcp prompt args-prompt '{"city":"Paris"}' -- mcp-server-everything

When the server asks for something in return: sampling is refused unless
--sampling ask|allow; input (elicitation) is asked on a terminal, declined
otherwise (--elicit ask|defaults|decline); the roots offered are --root, the
config's "roots", or the working directory.

Exit codes: 0 ok, 1 the tool returned an error (the result is still
printed), 2 usage, 3 connection or protocol failure (message on stderr;
mcp list: a server failed), 4 no such tool, or the server refused the
request (a resource it does not have).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			names := subcommandNames(cmd)
			if len(args) > 0 {
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					return mcpUsageError(cmd, "unknown subcommand %q; did you mean %s?", args[0], strings.Join(s, " or "))
				}
				return mcpUsageError(cmd, "unknown subcommand %q; use %s", args[0], names)
			}
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Help()
			return &exitError{mcpExitUsage, errors.New("missing subcommand: " + names)}
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.server, "server", "", "server URL (http/https), or the name of a server in --config, else of one the chat here would start (mcp list)")
	pf.StringVar(&f.config, "config", "", "mcpServers config file to look --server NAME up in")
	pf.StringVar(&f.token, "token", "", "bearer token for an HTTP server (default $AGENTAPP_MCP_TOKEN)")
	pf.StringArrayVarP(&f.headers, "header", "H", nil, "extra HTTP header as Name: value (repeatable)")
	pf.DurationVar(&f.callTimeout, "timeout", 0, "timeout of each request: call, resources, read (default the config's \"timeout\", else 60s)")
	pf.DurationVar(&f.connectTimeout, "connect-timeout", 0, "connect timeout (default 30s, or the config's)")
	pf.BoolVarP(&f.verbose, "verbose", "v", false, "echo the stdio server's stderr on our stderr")
	f.auth.register(pf)
	cmd.AddCommand(newMCPLoginCmd(f), newMCPLogoutCmd(f))
	f.client.register(cmd)
	cmd.AddCommand(
		newMCPPromptsCmd(f),
		newMCPPromptCmd(f),
		newMCPToolsCmd(f),
		newMCPSkillsCmd(f),
		&cobra.Command{
			Use:   "call TOOL [JSON-ARGS] [--server S] [-- COMMAND ARGS…]",
			Short: "Call a tool and print what the model would see plus the raw result",
			RunE: func(cmd *cobra.Command, args []string) error {
				own := args
				if at := cmd.ArgsLenAtDash(); at >= 0 {
					own = args[:at]
				}
				if len(own) == 2 {
					if _, err := agent.DecodeArgs(json.RawMessage(own[1])); err != nil {
						return mcpUsageError(cmd, "JSON-ARGS: %v", err)
					}
				}
				return withBridge(cmd, f, args, 2, func(ctx context.Context, b *mcpclient.Bridge, own []string) error {
					if len(own) == 0 {
						return mcpUsageError(cmd, "call needs the tool name")
					}
					var raw json.RawMessage
					if len(own) == 2 {
						raw = json.RawMessage(own[1])
					}
					return mcpCall(ctx, cmd.OutOrStdout(), b, own[0], raw)
				})
			},
		},
		&cobra.Command{
			Use:   "resources [--server S] [-- COMMAND ARGS…]",
			Short: "List the server's resources",
			RunE: func(cmd *cobra.Command, args []string) error {
				return withBridge(cmd, f, args, 0, func(ctx context.Context, b *mcpclient.Bridge, _ []string) error {
					rs, err := b.ListResources(ctx)
					if err != nil {
						return &exitError{mcpExitConnection, err}
					}
					if rs == nil {
						rs = []*mcp.Resource{}
					}
					return mcpWriteJSON(cmd.OutOrStdout(), map[string]any{"server": b.Name(), "resources": rs})
				})
			},
		},
		newMCPReadCmd(f),
	)
	cmd.AddCommand(newMCPManageCmds(f)...)
	addMCPTaskCmds(cmd, f)
	return cmd
}

// subcommandNames lists cmd's subcommands for an error message.
func subcommandNames(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() && c.Name() != "help" {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

// requestError is the exit of a failed request other than a tool call:
// the server refusing it (an unknown resource, say) is mcpExitNotFound,
// anything else a connection failure.
func requestError(err error) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code != codeRejectedByTransport {
		return &exitError{mcpExitNotFound, &safeError{err}}
	}
	return &exitError{mcpExitConnection, err}
}

// codeRejectedByTransport is the JSON-RPC code mcpclient gives a request
// the transport refused (not the server); see mcpclient's adapter.
const codeRejectedByTransport = -32005

func mcpUsageError(cmd *cobra.Command, format string, a ...any) error {
	return &exitError{mcpExitUsage, fmt.Errorf("%s (see agentapp %s --help)", fmt.Sprintf(format, a...), cmd.CommandPath()[len("agentapp "):])}
}

// withBridge splits args into the subcommand's own (at most maxOwn) and the
// stdio command after "--", resolves the server, connects, runs fn and
// closes the connection, also on Ctrl-C.
//
// Every request is bounded: connecting (initialize and tools/list) by the
// connect timeout, and each request fn sends by the call timeout
// (--timeout, else the config's "timeout", else the default), which the
// bridge applies to a request without a deadline and mcpCall passes to the
// adapter; closing by the bridge's grace periods.
func withBridge(cmd *cobra.Command, f *mcpFlags, args []string, maxOwn int, fn func(context.Context, *mcpclient.Bridge, []string) error) error {
	own, command := args, []string(nil)
	if at := cmd.ArgsLenAtDash(); at >= 0 {
		own, command = args[:at], args[at:]
	}
	if len(own) > maxOwn {
		return mcpUsageError(cmd, "unexpected argument %q (a stdio command goes after --)", own[maxOwn])
	}
	logger := cmdLogger(cmd, cmd.ErrOrStderr(), slog.LevelInfo)
	cfg, err := resolveServer(cmd, f, command, logger)
	if err != nil {
		return mcpUsageError(cmd, "%v", err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tr, stopTracing, err := startTracing(cmd, os.LookupEnv, logger)
	if err != nil {
		return err
	}
	defer stopTracing()
	ctx, span := traceCommand(ctx, tr, cmd)
	defer span.End()
	opts := []mcpclient.ConnectOption{mcpclient.WithLogger(logger)}
	clientOpts, err := f.client.options(cmd, &cfg)
	if err != nil {
		return err
	}
	opts = append(opts, clientOpts...)
	if f.verbose {
		opts = append(opts, mcpclient.WithStderrEcho(cmd.ErrOrStderr()))
	}
	if cfg.IsHTTP() {
		oauth, err := f.auth.oauthOption(cmd, f)
		if err != nil {
			return err
		}
		opts = append(opts, oauth)
	}
	b, err := mcpclient.Connect(ctx, cfg, opts...)
	if err != nil {
		return &exitError{mcpExitConnection, err}
	}
	err = fn(ctx, b, own)
	if cerr := b.Close(); cerr != nil && err == nil {
		err = &exitError{mcpExitConnection, cerr}
	}
	span.Fail(err)
	return err
}

// scopedServer finds the server named name in the scopes the chat reads
// here (agentapp.json, your servers for this project, the project's
// .mcp.json, yours for every project), so a server added with `mcp add` is
// used by its name. A project server runs only once approved, as in the
// chat: its command comes with the project, not from you.
func scopedServer(cmd *cobra.Command, name string, logger *slog.Logger) (mcpconfig.Server, error) {
	wd, err := os.Getwd()
	if err != nil {
		return mcpconfig.Server{}, err
	}
	res, err := mcpconfig.LoadScopes(mcpconfig.ScopesOptions{
		Dir: wd, DefaultFile: defaultConfigFile, Getenv: os.Getenv,
		Load:       &mcpconfig.LoadOptions{Logger: logger, LookupEnv: os.LookupEnv},
		SkipBroken: true,
	})
	if err != nil {
		return mcpconfig.Server{}, err
	}
	names := make([]string, 0, len(res.Servers))
	for _, s := range res.Servers {
		names = append(names, s.Server.Name)
	}
	i := slices.IndexFunc(res.Servers, func(s mcpconfig.ScopedServer) bool { return s.Server.Name == name })
	if i < 0 {
		known := "none is configured here"
		if len(names) > 0 {
			known = "configured here: " + strings.Join(names, ", ")
		}
		hint := ""
		if n := mcpconfig.Nearest(name, names); n != "" {
			hint = fmt.Sprintf("did you mean %q? ", n)
		}
		return mcpconfig.Server{}, fmt.Errorf("--server %q is neither an http(s) URL nor a configured server's name (%s); %sagentapp mcp list shows them, or give --config FILE", name, known, hint)
	}
	s := res.Servers[i]
	switch {
	case s.Err != nil:
		return mcpconfig.Server{}, fmt.Errorf("server %q in %s: %v", name, s.File, s.Err)
	case s.Disabled:
		return mcpconfig.Server{}, fmt.Errorf("server %q is disabled in %s", name, s.File)
	case s.Scope == mcpconfig.ScopeProject:
		approvals, err := openApprovals(cmd)
		if err != nil {
			return mcpconfig.Server{}, err
		}
		if !approvals.Approved(wd, name, s.Entry) {
			return mcpconfig.Server{}, fmt.Errorf("server %q comes with the project (%s) and is not approved to run; agentapp mcp approve %s allows it", name, s.File, name)
		}
	}
	return s.Server, nil
}

// resolveServer turns the flags and the command after "--" into exactly one
// server config.
func resolveServer(cmd *cobra.Command, f *mcpFlags, command []string, logger *slog.Logger) (mcpconfig.Server, error) {
	var cfg mcpconfig.Server
	switch {
	case f.server != "" && len(command) > 0:
		return cfg, errors.New("give either --server or a stdio command after --, not both")
	case f.server == "" && len(command) == 0:
		return cfg, errors.New("no server: give --server URL|NAME or a stdio command after --")
	case len(command) > 0:
		cfg = mcpconfig.Server{
			Name:    mcpconfig.CommandName(command[0], command[1:]),
			Command: command[0],
			Args:    command[1:],
		}
	case strings.HasPrefix(f.server, "http://") || strings.HasPrefix(f.server, "https://"):
		cfg = mcpconfig.Server{Name: f.server, URL: f.server}
	case f.config == "":
		var err error
		if cfg, err = scopedServer(cmd, f.server, logger); err != nil {
			return cfg, err
		}
	default:
		servers, err := mcpconfig.Load(f.config, &mcpconfig.LoadOptions{Logger: logger, LookupEnv: os.LookupEnv})
		if err != nil {
			return cfg, err
		}
		i := slices.IndexFunc(servers, func(s mcpconfig.Server) bool { return s.Name == f.server })
		if i < 0 {
			names := make([]string, len(servers))
			for j, s := range servers {
				names[j] = s.Name
			}
			return cfg, fmt.Errorf("no server named %q in %s (enabled servers: %s)", f.server, f.config, strings.Join(names, ", "))
		}
		cfg = servers[i]
	}
	if cfg.IsHTTP() {
		if f.token != "" {
			cfg.Token = f.token
		} else if cfg.Token == "" {
			cfg.Token = os.Getenv("AGENTAPP_MCP_TOKEN")
		}
		for _, h := range f.headers {
			name, value, ok := strings.Cut(h, ":")
			if !ok || strings.TrimSpace(name) == "" {
				return cfg, fmt.Errorf("--header %q: write it as Name: value", h)
			}
			if cfg.Headers == nil {
				cfg.Headers = map[string]string{}
			}
			cfg.Headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
		}
	} else if f.token != "" || len(f.headers) > 0 {
		return cfg, errors.New("--token and --header apply to HTTP servers only")
	}
	if err := f.auth.apply(&cfg); err != nil {
		return cfg, err
	}
	if f.callTimeout > 0 {
		cfg.CallTimeout = f.callTimeout
	}
	if f.connectTimeout > 0 {
		cfg.ConnectTimeout = f.connectTimeout
	}
	return cfg, nil
}

func newMCPReadCmd(f *mcpFlags) *cobra.Command {
	var raw bool
	cmd := &cobra.Command{
		Use:   "read URI [--raw] [--server S] [-- COMMAND ARGS…]",
		Short: "Read one resource (--raw: its content itself, e.g. a view's HTML)",
		Long: `read prints the resource as the server returned it, as JSON. --raw prints
its content itself instead: the text as written (a view's HTML with its line
breaks), or a blob's bytes; a resource of several contents is refused with
--raw.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBridge(cmd, f, args, 1, func(ctx context.Context, b *mcpclient.Bridge, own []string) error {
				if len(own) != 1 {
					return mcpUsageError(cmd, "read needs the resource URI")
				}
				res, err := b.ReadResource(ctx, own[0])
				if err != nil {
					return requestError(err)
				}
				if !raw {
					return mcpWriteJSON(cmd.OutOrStdout(), res)
				}
				if len(res.Contents) != 1 || res.Contents[0] == nil {
					return &exitError{code: 1, err: fmt.Errorf("%s has %d contents; --raw prints one (leave it out for the JSON)", own[0], len(res.Contents))}
				}
				c := res.Contents[0]
				if c.Blob != nil {
					_, err = cmd.OutOrStdout().Write(c.Blob)
					return err
				}
				_, err = io.WriteString(cmd.OutOrStdout(), c.Text)
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&raw, "raw", false, "print the content itself (text as written, a blob's bytes), not JSON")
	return cmd
}

func newMCPToolsCmd(f *mcpFlags) *cobra.Command {
	var brief bool
	cmd := &cobra.Command{
		Use:   "tools [--brief] [--server S] [-- COMMAND ARGS…]",
		Short: "List the server's tools as it sent them (--brief: a summary)",
		Long: `tools prints each tool the server lists, byte for byte as it sent it
(annotations, execution.taskSupport, _meta, the schemas), with "calledAs"
added when the chat calls it by another name (a toolPrefix, or a name
mapped to one model providers accept); mcp call takes either name.
--brief prints a summary instead: name, title, description, whether the
server declares it read-only or idempotent, and its taskSupport.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withBridge(cmd, f, args, 0, func(ctx context.Context, b *mcpclient.Bridge, _ []string) error {
				if brief {
					return mcpToolsBrief(cmd.OutOrStdout(), b)
				}
				return mcpTools(cmd.OutOrStdout(), b)
			})
		},
	}
	cmd.Flags().BoolVar(&brief, "brief", false, "a summary of each tool instead of the tool as sent")
	return cmd
}

// mcpTools prints the tools as the server listed them.
func mcpTools(w io.Writer, b *mcpclient.Bridge) error {
	tools := []json.RawMessage{}
	for _, t := range b.Tools() {
		raw := bytes.TrimSpace(b.ListedTool(t.Name))
		if len(raw) < 2 || raw[len(raw)-1] != '}' {
			continue // not listed on this connection (cannot happen: the table comes from the listing)
		}
		if remote, _ := b.RemoteName(t.Name); remote != t.Name {
			name, _ := json.Marshal(t.Name)
			sep := ","
			if len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0 {
				sep = ""
			}
			raw = append(append(slices.Clone(raw[:len(raw)-1]), sep+`"calledAs":`...), append(name, '}')...)
		}
		tools = append(tools, raw)
	}
	return mcpWriteJSON(w, map[string]any{"server": b.Name(), "tools": tools})
}

// mcpToolBrief is one tool as `mcp tools --brief` prints it. RemoteName
// is the server's own name for the tool when it differs from Name.
type mcpToolBrief struct {
	Name        string `json:"name"`
	RemoteName  string `json:"remoteName,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	ReadOnly    bool   `json:"readOnly,omitempty"`
	Idempotent  bool   `json:"idempotent,omitempty"`
	// TaskSupport is execution.taskSupport: forbidden (also when the
	// server said nothing), optional or required.
	TaskSupport string `json:"taskSupport"`
	// View is the MCP Apps view the tool links (_meta.ui.resourceUri).
	View string `json:"view,omitempty"`
}

func mcpToolsBrief(w io.Writer, b *mcpclient.Bridge) error {
	tools := []mcpToolBrief{}
	for _, t := range b.Tools() {
		remote, _ := b.RemoteName(t.Name)
		tb := mcpToolBrief{Name: t.Name, Title: t.Title, Description: t.Description,
			ReadOnly: t.ReadOnly, Idempotent: t.Idempotent, TaskSupport: b.TaskSupport(remote)}
		if remote != t.Name {
			tb.RemoteName = remote
		}
		if ui, ok := b.ToolMeta(t.Name)["ui"].(map[string]any); ok {
			tb.View, _ = ui["resourceUri"].(string)
		}
		tools = append(tools, tb)
	}
	return mcpWriteJSON(w, map[string]any{"server": b.Name(), "tools": tools})
}

// recordingCaller keeps the raw result of the call it forwards, so `call`
// can print it next to what the adapter made of it.
type recordingCaller struct {
	next mcpclient.ToolCaller
	res  *mcp.CallToolResult
}

func (r *recordingCaller) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	res, err := r.next.CallTool(ctx, p)
	r.res = res
	return res, err
}

// mcpCall calls one tool through the same adapter the chat uses and prints
// {"output": what the model sees, "error": …, "result": the raw result}.
// The tool is named as `mcp tools` lists it or as the server names it. The
// call is bounded by the bridge's call timeout.
func mcpCall(ctx context.Context, w io.Writer, b *mcpclient.Bridge, name string, args json.RawMessage) error {
	rec := &recordingCaller{next: b}
	remote := name
	if r, ok := b.RemoteName(name); ok {
		remote = r
	}
	if err := checkToolExists(b, name, remote); err != nil {
		return err
	}
	tool := mcpclient.AdaptTool(rec, b.Name(), &mcp.Tool{Name: remote}, nil, b.ToolTimeout(remote))
	out, err := tool.Execute(ctx, args)
	var doc struct {
		Output *string             `json:"output"`
		Error  *string             `json:"error"`
		Result *mcp.CallToolResult `json:"result"`
	}
	doc.Result = rec.res
	if err == nil {
		s, ferr := agent.FormatOutput(out)
		if ferr != nil {
			err = ferr
		} else {
			doc.Output = &s
		}
	}
	if err != nil {
		msg := err.Error()
		doc.Error = &msg
	}
	if werr := mcpWriteJSON(w, doc); werr != nil {
		return werr
	}
	if err == nil {
		return nil
	}
	// The message, as printed on stderr, may quote the server (a tool's
	// error text); stdout has it as it is, JSON-encoded.
	err = &safeError{err}
	var ce *mcpclient.CallError
	if errors.As(err, &ce) && ce.Kind == mcpclient.KindConnection {
		return &exitError{mcpExitConnection, err}
	}
	if ctx.Err() != nil {
		return &exitError{mcpExitConnection, err}
	}
	return &exitError{mcpExitToolError, err}
}

// checkToolExists refuses a call of a tool the server did not list, naming
// the nearest names it has, rather than sending it and passing on the
// server's "invalid arguments" (which sends the user to fix the wrong
// thing).
func checkToolExists(b *mcpclient.Bridge, name, remote string) error {
	var names []string
	for _, t := range b.Tools() {
		if t.Name == name || t.Name == remote {
			return nil
		}
		if r, ok := b.RemoteName(t.Name); ok && (r == name || r == remote) {
			return nil
		}
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return &exitError{mcpExitNotFound, fmt.Errorf("MCP server %s has no tools, so no tool %q", textsafe.Escape(b.Name()), name)}
	}
	near := nearNames(name, names, 5)
	hint := "its tools: " + strings.Join(names[:min(len(names), 12)], ", ")
	if len(names) > 12 {
		hint += fmt.Sprintf(", … (%d in all; agentapp mcp tools lists them)", len(names))
	}
	if len(near) > 0 {
		hint = "did you mean " + strings.Join(near, ", ") + "?"
	}
	return &exitError{mcpExitNotFound, fmt.Errorf("MCP server %s has no tool %q; %s", textsafe.Escape(b.Name()), name, textsafe.Escape(hint))}
}

// nearNames returns up to n of names that look like name: within a third
// of its length in edits (at least two), or containing it, or contained in
// it, case aside.
func nearNames(name string, names []string, n int) []string {
	l := strings.ToLower(name)
	var out []string
	for _, c := range names {
		cl := strings.ToLower(c)
		d := editdist.Distance(l, cl)
		if d <= max(2, len([]rune(l))/3) || strings.Contains(cl, l) || (len(cl) >= 3 && strings.Contains(l, cl)) {
			out = append(out, c)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

// safeError is an error whose message quotes a server, escaped for the
// terminal (textsafe) while errors.As still sees the original.
type safeError struct{ err error }

func (e *safeError) Error() string { return textsafe.Preview(e.err.Error(), 2000) }
func (e *safeError) Unwrap() error { return e.err }

func mcpWriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
