package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentapp/agentapp/assistant/toolnames"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/chat"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/offline"
	"github.com/agentapp/agentapp/model/openai"
	"github.com/agentapp/agentapp/trace"
	"github.com/spf13/cobra"
)

// defaultConfigFile is read from the working directory when --config is
// not given and the file exists.
const defaultConfigFile = "agentapp.json"

const mcpExample = `--mcp "npx -y @modelcontextprotocol/server-memory" or --mcp "agentapp serve"`

type chatFlags struct {
	// contextWindow is --context-window (context.go).
	contextWindow int
	model         string
	trace         bool
	prompt        string
	json          bool
	format        string
	mcp           []string
	config        string
	session       string
	cont          bool
	maxSteps      int
	turnTimeout   time.Duration
	strictMCP     bool
	perms         permFlags
	// The client half (mcp_clientside.go).
	mcpLogLevel       string
	samplingMaxTokens int64
	limits            limitFlags // limits.go
}

func newChatCmd() *cobra.Command {
	var f chatFlags
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Chat with the customer-service assistant (local tools plus any MCP servers)",
		Long: `Chat with the customer-service assistant. It looks up orders, opens after-sales
tickets, hands you over to a human and answers from the company knowledge base,
with the local tools plus the tools of any MCP servers you plug in.

Input: on a terminal you get line editing and history. When stdin is a pipe or a
file, each line is one message and the /commands work the same. With -p the
question is asked once and the answer printed; -p - reads the question from the
whole of stdin.

Model: without an API key the offline demo model is used. Set OPENAI_API_KEY
(and optionally OPENAI_BASE_URL, OPENAI_MODEL) in the environment or a .env file
to use an OpenAI-compatible provider (default: Zhipu GLM, glm-4-flash).

MCP servers come from your file ($XDG_CONFIG_HOME/agentapp/mcp.json), the
project's ./.mcp.json (each of its servers approved once, on a terminal), the
mcpServers file (--config, default ./agentapp.json when present; the Claude
Desktop / Cursor format) and --mcp (repeatable), a later one winning a name;
manage them with agentapp mcp add|list|get|remove. A server that fails to
connect is listed as failed and the chat starts without it (--strict-mcp to
refuse instead).
A server may ask for a model completion (sampling: you approve each on the
terminal unless its "sampling" is "allow" or "deny"), for input (a form built
from its schema) and for the roots (the working directory, or its "roots").
/resources, /read, @SERVER:URI, /prompts and /SERVER:PROMPT use what servers
offer besides tools.

With -p, --output-format json or stream-json gives machine-readable output.
Exit status: 0 answered, 1 failed, 2 usage, 3 answered, but a configured MCP
server failed to connect, 4 answered but a tool call was refused, 130 Ctrl-C.

Permissions: an MCP tool its server does not declare read-only asks before it
runs (on a pipe nobody can answer, so it is refused); a read-only one runs.
--allow, --ask and --deny take SERVER:TOOL, SERVER:*, TOOL or * (a deny wins,
then an ask, then an allow); --permission-mode allow-all runs what no deny
names, for scripts. Config files may hold "permissions": {"allow": [...],
"ask": [...], "deny": [...]}; a project's .mcp.json may only ask and deny.

Guards for the MCP servers' tools (all off by default, shown in the banner):
  AGENT_GUARD_ALLOWLIST=a,b   only these MCP tools may run
  AGENT_GUARD_CONFIRM=a,b     ask on the terminal before each call to these
                              (MCP or local tools; an unknown name is an error)
  AGENT_GUARD_PII=1           mask phone numbers, ids and cards in MCP output
                              and knowledge-base hits
  AGENT_GUARD_INPUT=1         refuse user messages with prompt-injection phrases
  AGENT_GUARD_MCP_STRICT=1    local tools win name clashes with MCP tools
With any guard on, MCP tool arguments are scanned for prompt injection.
Refusals and confirmations go to AGENT_AUDIT_LOG (default audit.log in the
data directory), one JSON line each.`,
		Example: `  agentapp chat
  agentapp chat -p "订单 A-1024 到哪了？"
  agentapp chat -p "where is order A-1024?" --output-format json
  echo "差旅住宿标准是多少？" | agentapp chat -p -
  agentapp chat --mcp "npx -y @modelcontextprotocol/server-memory" --trace
  agentapp chat --mcp "files=npx -y @modelcontextprotocol/server-filesystem ." --deny files:move_file
  agentapp chat --config ~/Library/Application\ Support/Claude/claude_desktop_config.json
  agentapp chat --continue`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChat(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", `"offline" for the offline demo model, or a model name for the OpenAI-compatible provider (default: offline without an API key, else $OPENAI_MODEL or glm-4-flash)`)
	fl.BoolVar(&f.trace, "trace", false, "trace think/act/observe/done on stderr (also AGENT_TRACE=1)")
	fl.StringVarP(&f.prompt, "prompt", "p", "", `ask one question, print the answer and exit ("-" reads it from stdin)`)
	fl.BoolVar(&f.json, "json", false, "with -p: the same as --output-format json")
	fl.StringVar(&f.format, "output-format", "text", "with -p: text, json (one object: answer, steps, sources, model, session, error) or stream-json (one JSON event per line)")
	fl.StringArrayVar(&f.mcp, "mcp", nil, `connect an MCP server started by this command line (repeatable); quote paths with spaces as in a shell, $VAR and ${VAR:-default} are expanded, no shell is run; NAME=COMMAND names the server, e.g. --mcp 'files=npx -y @modelcontextprotocol/server-filesystem /tmp'`)
	fl.StringVar(&f.config, "config", "", "mcpServers config file (default ./"+defaultConfigFile+" when it exists)")
	fl.StringVar(&f.session, "session", "", "resume the chat session with this id")
	fl.BoolVar(&f.cont, "continue", false, "resume the most recent chat session")
	fl.BoolVar(&f.strictMCP, "strict-mcp", false, "fail the start when any MCP server fails to connect (by default the chat starts with the others and lists the failed one in the banner and /mcp)")
	fl.IntVar(&f.maxSteps, "max-steps", agent.DefaultMaxSteps, "most tool rounds per answer")
	fl.DurationVar(&f.turnTimeout, "turn-timeout", chat.DefaultTurnTimeout, "time limit for one whole answer, tool calls included")
	fl.StringVar(&f.mcpLogLevel, "mcp-log-level", defaultMCPLogLevel, "least severe MCP server log message shown on stderr: "+mcpLogLevelUsage())
	f.perms.register(fl)
	fl.Int64Var(&f.samplingMaxTokens, "sampling-max-tokens", mcpclient.DefaultSamplingMaxTokens, "cap on the maxTokens of an MCP server's sampling request")
	addLimitFlags(fl, &f.limits)
	addContextWindowFlag(fl, &f)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "--mcp") && !strings.HasPrefix(err.Error(), "unknown flag") {
			err = fmt.Errorf("%v; give the MCP server's command line, e.g. %s", err, mcpExample)
		}
		return &exitError{code: 2, err: err}
	})
	return cmd
}

func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// Exit statuses of -p besides 0, 1 (failed), 2 (usage) and 130 (Ctrl-C).
const (
	// exitServerFailed: answered, but a configured MCP server did not
	// connect, so the answer may lack its tools.
	exitServerFailed = 3
	// exitRefused: answered, but a guard refused a tool call (a
	// confirmation answered no or not at all, a tool outside the
	// allowlist).
	exitRefused = 4
)

func runChat(cmd *cobra.Command, f *chatFlags) error {
	format, ferr := chat.ParseOutputFormat(f.format)
	if f.json {
		if cmd.Flags().Changed("output-format") && format != chat.OutputJSON {
			return usageError("--json is --output-format json; give one of them")
		}
		format = chat.OutputJSON
	}
	if ferr != nil {
		return usageError("--output-format: %v", ferr)
	}
	reported := false
	err := runChatAs(cmd, f, format, &reported)
	if err != nil && !reported && format != chat.OutputText && cmd.Flags().Changed("prompt") {
		// A script asked for JSON: the failure is JSON too, on stdout,
		// whatever stage it came from.
		writeJSONError(cmd.OutOrStdout(), format, err)
	}
	return err
}

// writeJSONError writes err as the output of format: an Answer with only
// its error, or an error event.
func writeJSONError(w io.Writer, format chat.OutputFormat, err error) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if format == chat.OutputStreamJSON {
		_ = enc.Encode(chat.Event{Type: "error", Error: err.Error()})
		return
	}
	enc.SetIndent("", "  ")
	_ = enc.Encode(chat.Answer{Steps: []chat.Step{}, Sources: []chat.Source{}, Error: err.Error()})
}

func runChatAs(cmd *cobra.Command, f *chatFlags, format chat.OutputFormat, reported *bool) error {
	stdin, stdout, stderr := cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	// One logger for everything the packages report (config warnings, the
	// knowledge base's seeding, the MCP bridges, audit-log failures).
	logger := cmdLogger(cmd, stderr, slog.LevelInfo)
	oneShot := cmd.Flags().Changed("prompt")
	switch {
	case (f.json || cmd.Flags().Changed("output-format")) && !oneShot:
		return usageError("--json and --output-format need a question: use them with -p \"...\"")
	case oneShot && strings.TrimSpace(f.prompt) == "":
		return usageError(`-p needs a question, e.g. -p "where is order A-1024?" (or -p - to read it from stdin)`)
	case f.session != "" && f.cont:
		return usageError("use either --session ID or --continue, not both")
	case f.maxSteps < 1:
		return usageError("--max-steps must be at least 1")
	case f.turnTimeout <= 0:
		return usageError("--turn-timeout must be positive, e.g. 2m")
	case f.samplingMaxTokens < 1:
		return usageError("--sampling-max-tokens must be at least 1")
	}
	logLevel, err := parseMCPLogLevel(f.mcpLogLevel)
	if err != nil {
		return usageError("%v (see agentapp chat --help)", err)
	}
	question := f.prompt
	if oneShot && f.prompt == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("read the question from stdin: %w", err)
		}
		if question = strings.TrimSpace(string(b)); question == "" {
			return usageError("-p - read an empty question from stdin")
		}
	}

	// SIGTERM and SIGHUP end the chat cleanly (servers closed); SIGINT is
	// relayed to the chat, where it cancels a turn or leaves the prompt.
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	intr := make(chan os.Signal, 1)
	signal.Notify(intr, os.Interrupt)
	defer signal.Stop(intr)

	setup, err := readHostSetup(cmd, f) // startup.go, shared with runWeb
	if err != nil {
		return err
	}
	m, info, hint, extra, dir := setup.m, setup.info, setup.hint, setup.extra, setup.dir
	// Deferred before the host opens, the flush of the spans runs after
	// the servers closed (a Ctrl-C or -p included), within its own bound.
	tr, stopTracing, err := startTracing(cmd, os.LookupEnv, logger)
	if err != nil {
		return err
	}
	defer stopTracing()

	var observer agent.Observer
	connectOpts := []mcpclient.ConnectOption{mcpclient.WithLogger(logger), chatOAuth(dir, chatConfigPath(f))}
	// What the servers ask of the chat: its model (sampling), the user
	// (elicitation), the roots; their progress and logs.
	clientSide := &chat.ClientSide{}
	logs := &serverLogPrinter{w: stderr, min: logLevel}
	if trace.Enabled(f.trace, os.Getenv) {
		observer = trace.New(stderr)
		connectOpts = append(connectOpts, mcpclient.WithStderrEcho(stderr))
		clientSide.OnProgress = traceProgress(stderr)
		logs.traceTo = stderr
	}
	connectOpts = append(connectOpts, clientSide.ConnectOptions(f.samplingMaxTokens)...)
	connectOpts = append(connectOpts, mcpclient.WithRoots(workingDirRoots()), mcpclient.WithServerLogs(logLevel, logs.print))
	if logs.traceTo != nil {
		// The trace shows every message; the server is asked for all.
		connectOpts = append(connectOpts, mcpclient.WithServerLogs("debug", logs.print))
	}
	h, err := setup.startHost(ctx, cmd, f, intr, frontEnd{
		approve: func(project []mcpconfig.ScopedServer) ([]mcpconfig.Server, error) {
			return approveProjectServers(dir, project, stdin, stderr)
		},
		connect: connectOpts,
		notify:  chatNotice(stderr),
		hints:   hostHints(),
		logger:  logger,
		tracing: tr,
	})
	if err != nil {
		return err
	}
	inactive := h.Tools().Inactive()
	for _, in := range inactive {
		switch {
		case in.Disabled:
		case in.State() == host.StateNeedsLogin:
			logger.Warn(fmt.Sprintf("MCP server %s needs a login (%s); the chat starts without it", in.Name, host.LoginHint(in.Err)))
		case isConnectFailure(in.Err):
			// One-shot mode has no /mcp: it names the command that shows why.
			see := "see /mcp"
			if oneShot {
				see = "see why with " + whyCommand(in.Name, extra, f.config)
			}
			logger.Warn(fmt.Sprintf("MCP server %s failed to connect (%s); the chat starts without it (%s, or use --strict-mcp to make this an error)", in.Name, failureSummary(in.Err), see))
		}
	}

	c, err := chat.New(ctx, chat.Config{
		Host:           h,
		ModelInfo:      info,
		In:             stdin,
		Out:            stdout,
		Err:            stderr,
		Interrupt:      intr,
		Observer:       observer,
		SessionID:      f.session,
		Continue:       f.cont,
		HistoryFile:    filepath.Join(dir, "chat_history"),
		NoColor:        os.Getenv("NO_COLOR") != "",
		ErrorHint:      hint,
		Hints:          chatHints(),
		ClientSide:     clientSide,
		AllowInProject: allowInProject,
	})
	if err != nil {
		if errors.Is(err, chat.ErrNoSession) {
			return &exitError{code: 1, err: fmt.Errorf("%w; %s", err, noSessionHint)}
		}
		return err
	}
	defer func() {
		if cerr := c.Close(); cerr != nil {
			logger.Warn(cerr.Error())
		}
	}()

	if !oneShot {
		return c.Run(ctx)
	}
	if info != "" && (m.Name() == "offline-demo" || baseURLNoted(info)) {
		logger.Info(info)
	}
	*reported = true // AskAs writes its own errors in the JSON formats
	if err := c.AskAs(ctx, question, format); err != nil {
		var refused *chat.RefusedError
		switch {
		case errors.Is(err, chat.ErrInterrupted):
			return &exitError{code: 130, err: errors.New("interrupted")}
		case errors.As(err, &refused):
			return &exitError{code: exitRefused, err: err}
		}
		return err
	}
	return failedServersError(inactive, extra, f.config)
}

// failedServersError is -p's error for the servers that did not connect
// (disabled ones are not failures), each with why (the decisive lines of
// its stderr) and the command that shows more; nil when all connected.
func failedServersError(inactive []host.Inactive, extra []host.ExtraServer, configFile string) error {
	var failed []string
	for _, in := range inactive {
		if in.Disabled {
			continue
		}
		why := "no reason given"
		if in.Err != nil {
			why, _, _ = strings.Cut(withoutHandCheck(in.Err).Error(), "\n")
			if lines := mcpclient.FailureReason(in.Err); len(lines) > 0 {
				why = "its stderr says: " + strings.Join(lines, " … ")
			}
		}
		failed = append(failed, fmt.Sprintf("%s (%s; see why with %s)", in.Name, why, whyCommand(in.Name, extra, configFile)))
	}
	if len(failed) == 0 {
		return nil
	}
	return &exitError{code: exitServerFailed, err: fmt.Errorf("answered without MCP %s %s, which did not connect (use --strict-mcp to refuse to answer without it)",
		plural(len(failed), "server", "servers"), textsafe.Escape(strings.Join(failed, ", ")))}
}

// whyCommand is the command that shows why the server called name failed:
// agentapp mcp get NAME for a configured one (with --config FILE when
// the chat was given one); for one given with --mcp, which no config
// holds, the command that connects it by hand.
func whyCommand(name string, extra []host.ExtraServer, configFile string) string {
	for _, e := range extra {
		if e.Server.Name != name {
			continue
		}
		if e.Server.IsHTTP() {
			return "agentapp mcp tools --server " + e.Server.URL
		}
		return "agentapp mcp tools -- " + e.Server.CommandLine()
	}
	cmd := "agentapp mcp get " + name
	if configFile != "" {
		if strings.ContainsAny(configFile, " \t'\"\\$") {
			configFile = strconv.Quote(configFile)
		}
		cmd += " --config " + configFile
	}
	return cmd
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// chooseModel picks the model from --model and the provider configuration,
// and says in the banner text which one it is and how to switch.
func chooseModel(flag string) (m model.Model, info string, hint func(error) string, err error) {
	wd, err := os.Getwd()
	if err != nil {
		wd = "."
	}
	cfg, err := openai.LoadConfig(wd, os.LookupEnv)
	if err != nil {
		return nil, "", nil, err
	}
	name := strings.TrimSpace(flag)
	switch {
	case strings.EqualFold(name, "offline"):
		info = "the offline demo model, chosen with --model offline"
		if cfg.HasKey() {
			info += "; leave --model out to use " + cfg.Model
		} else {
			info += "; set OPENAI_API_KEY (environment or .env) to use a real model"
		}
		return offline.New(offlineTools), info, nil, nil
	case name == "" && !cfg.HasKey():
		return offline.New(offlineTools), offline.Notice + "; --model NAME picks a model once a key is set", nil, nil
	case !cfg.HasKey():
		return nil, "", nil, usageError("--model %s needs an API key: set OPENAI_API_KEY (in the environment or a .env file), or use --model offline", name)
	}
	if name != "" {
		cfg.Model = name
	}
	info = fmt.Sprintf("OpenAI-compatible provider at %s, API key from %s; --model NAME for another model, --model offline for the offline demo", baseURLWithNote(cfg), cfg.Source.APIKey)
	hint = func(err error) string {
		var apiErr *openai.APIError
		var connErr *openai.ConnectionError
		if errors.As(err, &apiErr) || errors.As(err, &connErr) {
			return "" // their message already says what to check
		}
		return fmt.Sprintf("check the API key (OPENAI_API_KEY), the base URL %s (OPENAI_BASE_URL) and the model name %s (OPENAI_MODEL or --model); --model offline works without a provider", cfg.BaseURL, cfg.Model)
	}
	return openai.New(cfg), info, hint, nil
}

// extraServers reads the --mcp flags. A name given with NAME= must be
// free, since the user chose it to refer to the server (in /mcp restart
// NAME, say) and a silent rename would break that; the host checks it
// against the config files' names. A name derived from the command is made
// unique instead.
func extraServers(f *chatFlags) ([]host.ExtraServer, error) {
	var out []host.ExtraServer
	for _, line := range f.mcp {
		c, named, err := mcpconfig.ParseCommandLine(line, os.LookupEnv)
		if err != nil {
			return nil, usageError("%v", err)
		}
		out = append(out, host.ExtraServer{Server: c, Named: named, Source: fmt.Sprintf("--mcp %q", line)})
	}
	return out, nil
}

// openHost opens the host; Ctrl-C (intr) while the servers connect gives
// up. Its errors get the command line's exit codes and hints.
func openHost(ctx context.Context, intr <-chan os.Signal, opts *host.Options) (*host.Host, error) {
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	interrupted := make(chan bool, 1)
	go func() {
		select {
		case <-intr:
			cancel()
			interrupted <- true
		case <-done:
			interrupted <- false
		}
	}()
	h, err := host.Open(octx, opts)
	close(done)
	if <-interrupted {
		if h != nil {
			_ = h.Close()
		}
		return nil, &exitError{code: 130, err: errors.New("interrupted while connecting to the MCP servers")}
	}
	var nameErr *host.NameError
	var startErr *host.StartError
	switch {
	case errors.As(err, &nameErr):
		return nil, usageError("%v", nameErr)
	case errors.As(err, &startErr):
		return nil, connectFailure(errors.Join(startErr.Failures...), startErr.Configs)
	}
	return h, err
}

// chatNotice writes what the host's tool table reports on stderr.
func chatNotice(w io.Writer) func(host.Notice) {
	return func(n host.Notice) {
		if n.Warning {
			fmt.Fprintln(w, "agentapp: warning:", textsafe.Escape(n.Text))
			return
		}
		fmt.Fprintln(w, textsafe.Escape(n.Text))
	}
}

// isConnectFailure reports whether err is a connection failure (worded by
// connectReason) rather than a config error.
func isConnectFailure(err error) bool {
	var re *reasonError
	return errors.As(err, &re)
}

// connectReason is why a server did not connect, with the command that
// checks it by hand, as the banner and /mcp show it.
func connectReason(err error, c mcpconfig.Server) error {
	var ce *host.ConnectError
	if errors.As(err, &ce) {
		err = ce.Err
	}
	// The chat names the server already; the bridge's message does too.
	msg := err.Error()
	for _, p := range []string{"MCP server " + c.Name + ": ", "MCP server " + strconv.Quote(c.Name) + ": "} {
		if strings.HasPrefix(msg, p) {
			err = &prefixTrimmed{err: err, msg: strings.TrimPrefix(msg, p)}
			break
		}
	}
	hand := "agentapp mcp tools -- " + c.CommandLine()
	if c.IsHTTP() {
		hand = "agentapp mcp tools --server " + c.URL
	}
	return &reasonError{err: err, hint: hand}
}

// withoutHandCheck is err without the "(check it by hand: …)" a
// reasonError adds, for a message that names the command itself ("see why
// with …"): the same command twice in one line reads as two.
func withoutHandCheck(err error) error {
	var re *reasonError
	if errors.As(err, &re) {
		return re.err
	}
	return err
}

// reasonError is a connection failure with the command that retries it by
// hand; it keeps the cause for errors.As (a login hint, say).
type reasonError struct {
	err  error
	hint string
}

func (e *reasonError) Error() string {
	msg := e.err.Error()
	first, rest, more := strings.Cut(msg, "\n")
	s := first + " (check it by hand: " + e.hint + ")"
	if more {
		s += "\n" + rest
	}
	return s
}
func (e *reasonError) Unwrap() error { return e.err }

// prefixTrimmed is an error shown without the server name it starts with.
type prefixTrimmed struct {
	err error
	msg string
}

func (e *prefixTrimmed) Error() string { return e.msg }
func (e *prefixTrimmed) Unwrap() error { return e.err }

// connectFailure words a start-up connection failure: each failed server,
// why, and the command that checks it by hand.
func connectFailure(err error, cfgs []mcpconfig.Server) error {
	var failures []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		failures = j.Unwrap()
	} else {
		failures = []error{err}
	}
	var b strings.Builder
	b.WriteString("could not start the chat: ")
	if len(failures) == 1 {
		b.WriteString("an MCP server failed to connect")
	} else {
		fmt.Fprintf(&b, "%d MCP servers failed to connect", len(failures))
	}
	for _, e := range failures {
		var ce *host.ConnectError
		if !errors.As(e, &ce) {
			fmt.Fprintf(&b, "\n- %v", e)
			continue
		}
		msg := ce.Err.Error()
		if !strings.Contains(msg, ce.Server) {
			msg = fmt.Sprintf("MCP server %q: %s", ce.Server, msg)
		}
		fmt.Fprintf(&b, "\n- %s", strings.ReplaceAll(msg, "\n", "\n  "))
		for _, c := range cfgs {
			if c.Name != ce.Server {
				continue
			}
			if c.IsHTTP() {
				fmt.Fprintf(&b, "\n  check it by hand: agentapp mcp tools --server %s", c.URL)
			} else {
				fmt.Fprintf(&b, "\n  check it by hand: agentapp mcp tools -- %s", c.CommandLine())
			}
		}
	}
	return &exitError{code: 1, err: errors.New(b.String())}
}

// offlineTools are the assistant's tool names, which the offline demo model
// calls by: the command picks the model, so it names the tools for it.
var offlineTools = offline.Tools{
	Order:        toolnames.OrderStatus,
	Ticket:       toolnames.CreateTicket,
	Handoff:      toolnames.Escalate,
	Search:       toolnames.SearchKB,
	SearchRemote: toolnames.SearchKBRemote,
}
