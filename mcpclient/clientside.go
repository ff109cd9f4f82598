package mcpclient

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient/internal/listing"
	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client half of the protocol: what a server may ask of us (a model
// completion, an answer from the user, the workspace roots) and what it
// reports (progress, log messages, changed lists). The bridge advertises a
// capability only when the host supplied what it takes to honour it, so a
// server never offers a feature that would fail every time.

// codeUserRejected is the JSON-RPC error code the specification gives to
// a sampling request the user (or the policy standing in for the user)
// refused.
const codeUserRejected = -1

// maxServerLogText bounds what one notifications/message from a server
// carries to the host; a server decides how much it logs, not how much of
// it reaches the terminal.
const maxServerLogText = 2000

// SamplingRequest is a server's sampling/createMessage request as the host
// gets it.
type SamplingRequest struct {
	// Server is the name of the server asking.
	Server string
	// Ask reports whether the user must approve the request first: the
	// server's "sampling" setting is "ask" (the default); false for
	// "allow". A denied request never reaches the Sampler.
	Ask bool
	// Params is the request. MaxTokens is already cut to the
	// WithSampler cap.
	Params *mcp.CreateMessageParams
}

// Sampler answers sampling requests with the host's model. The chat
// implements it with its own model, after the user approved.
type Sampler interface {
	// CreateMessage returns the completion, with Model naming the model
	// that produced it, or an error that the server receives (the user
	// refused, the model failed).
	CreateMessage(ctx context.Context, req *SamplingRequest) (*mcp.CreateMessageResult, error)
}

// Elicitor asks the user what a server wants to know (elicitation/create),
// as a form built from the requested schema or, in URL mode, by showing a
// URL to open.
type Elicitor interface {
	// Elicit returns the user's answer: accept (with the content, for a
	// form), decline or cancel.
	Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// Progress is one notifications/progress of a running tool call.
type Progress struct {
	Server string
	// Tool is the server's name of the tool whose call reports it.
	Tool     string
	Progress float64
	// Total is 0 when the server does not know it.
	Total   float64
	Message string
	// Task and Status are set for the status reports of a call that runs
	// as a task (tasks.go): its id and status; Progress counts them.
	Task   string
	Status string
}

// String renders p the way a status line shows it: "tool 3/5", or "tool
// 3" without a total, followed by the server's message when it sent one.
func (p Progress) String() string {
	if p.Status != "" {
		s := p.Tool + " ⋯ " + p.Status
		if p.Progress == 1 {
			// The first report names the task, for agentapp mcp tasks.
			s = p.Tool + " ⋯ task " + textsafe.Preview(p.Task, 80) + " " + p.Status
		}
		if p.Message != "" {
			s += ": " + textsafe.Preview(p.Message, 80)
		}
		return s
	}
	s := p.Tool + " " + strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		s += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		s += " " + textsafe.Preview(p.Message, 80)
	}
	return s
}

// ServerLog is one notifications/message a server sent.
type ServerLog struct {
	Server string
	Level  mcp.LoggingLevel
	// Logger is the server's name for the part of it that logged, if any.
	Logger string
	// Text is the message's data as text (JSON unless it was a string),
	// escaped for a terminal and cut to a preview.
	Text string
}

// progressLinger is how long a call's progress token is honoured after
// the call returned.
const progressLinger = time.Second

// DefaultSamplingMaxTokens is the cap on the maxTokens of a sampling
// request when WithSampler is given 0.
const DefaultSamplingMaxTokens = 4096

// WithSampler lets servers ask for model completions through s, under each
// server's mcpconfig.Server.Sampling policy. A request's maxTokens is cut
// to maxTokens (0 means DefaultSamplingMaxTokens). Without it the sampling
// capability is not advertised.
func WithSampler(s Sampler, maxTokens int64) ConnectOption {
	return func(o *connectOptions) {
		if maxTokens <= 0 {
			maxTokens = DefaultSamplingMaxTokens
		}
		o.sampler, o.samplingMax = s, maxTokens
	}
}

// WithElicitor lets servers ask the user through e (form and URL mode).
// Without it the elicitation capability is not advertised.
func WithElicitor(e Elicitor) ConnectOption {
	return func(o *connectOptions) { o.elicitor = e }
}

// WithRoots advertises the roots capability and offers dirs (directories,
// made absolute) as the roots of every server whose config names none
// (mcpconfig.Server.Roots). An empty dirs advertises the capability with
// no roots. Without it, roots are advertised only for servers whose config
// names some.
func WithRoots(dirs []string) ConnectOption {
	return func(o *connectOptions) {
		o.roots = append([]string{}, dirs...)
	}
}

// WithProgress sends a progress token with every tool call and passes the
// server's notifications/progress for it to f. f runs on the session's
// reading goroutine and must return quickly.
func WithProgress(f func(Progress)) ConnectOption {
	return func(o *connectOptions) { o.progress = f }
}

// WithServerLogs asks each server that offers logging to send its log
// messages from level on (logging/setLevel), and passes each
// notifications/message to f. f runs on the session's reading goroutine
// and must return quickly.
func WithServerLogs(level mcp.LoggingLevel, f func(ServerLog)) ConnectOption {
	return func(o *connectOptions) { o.logLevel, o.serverLog = level, f }
}

// LoggingLevels are the levels of notifications/message, least severe
// first, as logging/setLevel takes them.
var LoggingLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// clientSide is the per-bridge state of the client half: the roots on
// offer and the progress tokens of calls in flight.
type clientSide struct {
	rootsMu sync.Mutex
	roots   []*mcp.Root // nil: no roots capability

	nextToken atomic.Int64
	tokens    sync.Map // progress token (string) → tool name

	resources listing.Cache[mcp.Resource]
	prompts   listing.Cache[mcp.Prompt]
}

// rootURIs turns directories into file:// roots, made absolute.
func rootURIs(dirs []string) ([]*mcp.Root, error) {
	roots := make([]*mcp.Root, 0, len(dirs))
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("root %q: %w", d, err)
		}
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
		roots = append(roots, &mcp.Root{URI: u.String(), Name: filepath.Base(abs)})
	}
	return roots, nil
}

// initRoots decides the bridge's roots from its config and the options.
func (b *Bridge) initRoots() error {
	dirs := b.cfg.Roots
	if dirs == nil {
		dirs = b.opts.roots
	}
	if dirs == nil {
		return nil
	}
	roots, err := rootURIs(dirs)
	if err != nil {
		return fmt.Errorf("MCP server %s: %w", b.name, err)
	}
	b.side.roots = roots
	return nil
}

// Roots returns the roots the bridge offers its server (nil: none, and no
// roots capability).
func (b *Bridge) Roots() []*mcp.Root {
	b.side.rootsMu.Lock()
	defer b.side.rootsMu.Unlock()
	return append([]*mcp.Root(nil), b.side.roots...)
}

// SetRoots replaces the roots offered to the server with dirs and sends it
// notifications/roots/list_changed. It is an error when the bridge was
// connected without roots: the server was told there are none to ask for.
func (b *Bridge) SetRoots(dirs []string) error {
	roots, err := rootURIs(dirs)
	if err != nil {
		return err
	}
	b.side.rootsMu.Lock()
	if b.side.roots == nil {
		b.side.rootsMu.Unlock()
		return fmt.Errorf("MCP server %s was connected without the roots capability; give it roots in the config (\"roots\") to change them later", b.name)
	}
	old := b.side.roots
	b.side.roots = roots
	b.mu.Lock()
	c := b.cur
	b.mu.Unlock()
	if c != nil && c.client != nil {
		// Under rootsMu, so two changes reach the client in order.
		syncRoots(c.client, old, roots)
	}
	b.side.rootsMu.Unlock()
	return nil
}

// syncRoots changes the client's roots from old to roots; the SDK sends
// notifications/roots/list_changed to the session when they differ.
func syncRoots(client *mcp.Client, old, roots []*mcp.Root) {
	keep := map[string]bool{}
	for _, r := range roots {
		keep[r.URI] = true
	}
	var stale []string
	for _, r := range old {
		if !keep[r.URI] {
			stale = append(stale, r.URI)
		}
	}
	// Adding first: a server that fetches the list between the two
	// notifications sees the old and the new roots, never none.
	client.AddRoots(roots...)
	if len(stale) > 0 {
		client.RemoveRoots(stale...)
	}
}

// clientOptions builds the SDK client's options for the connection c.
func (b *Bridge) clientOptions(c *conn) *mcp.ClientOptions {
	caps := &mcp.ClientCapabilities{}
	if b.Roots() != nil {
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	o := &mcp.ClientOptions{
		Logger:       b.opts.logger,
		Capabilities: caps,
		// Only a flag is set here: the handler runs on the session's
		// reading goroutine, which must not wait for a tools/list answer.
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { b.onListChanged(c) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { b.side.resources.MarkStale() },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { b.side.prompts.MarkStale() },
	}
	if b.opts.apps {
		caps.AddExtension(AppsExtension, map[string]any{"mimeTypes": []any{AppMIMEType}})
	}
	if b.opts.sampler != nil {
		o.CreateMessageHandler = b.onCreateMessage
	}
	if b.opts.elicitor != nil {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
		o.ElicitationHandler = b.onElicit
	}
	b.declareExtTasks(c, caps)
	if b.opts.progress != nil {
		o.ProgressNotificationHandler = b.onProgress
	}
	if b.opts.serverLog != nil {
		o.LoggingMessageHandler = b.onServerLog
	}
	return o
}

// afterOpen finishes a new session: the roots go on the client, and a
// server that offers logging is told the level wanted. A failed setLevel
// only costs the server's logs, so it is a warning.
func (b *Bridge) afterOpen(ctx context.Context, c *conn) {
	if roots := b.Roots(); len(roots) > 0 {
		c.client.AddRoots(roots...)
	}
	if b.opts.serverLog == nil || b.opts.logLevel == "" {
		return
	}
	if ir := c.session.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Logging == nil {
		return
	}
	if !stdiofast.DirectAllowed(c.session) {
		// Protocol 2026-07-28 has no logging/setLevel: the level goes
		// in each request's _meta (nextgen.LogLevel).
		return
	}
	if err := c.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: b.opts.logLevel}); err != nil {
		b.opts.logger.Warn(fmt.Sprintf("MCP server %s offers logging but refused the log level %s (%s); its log messages may not arrive", b.name, b.opts.logLevel, safeText(err)))
	}
}

// handlerTimeout bounds what a server's request may make us wait for: no
// longer than the call that caused it may take.
func (b *Bridge) handlerTimeout() time.Duration { return b.callTimeout() }

func (b *Bridge) onCreateMessage(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	policy := b.cfg.Sampling
	if policy == "" {
		policy = mcpconfig.SamplingAsk
	}
	if policy == mcpconfig.SamplingDeny {
		return nil, &jsonrpc.Error{Code: codeUserRejected, Message: "the client denies sampling to this server (its \"sampling\" setting is \"deny\"; agentapp mcp denies it unless given --sampling ask or allow)"}
	}
	if req.Params == nil || len(req.Params.Messages) == 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sampling/createMessage needs at least one message"}
	}
	p := *req.Params
	if p.MaxTokens <= 0 || p.MaxTokens > b.opts.samplingMax {
		p.MaxTokens = b.opts.samplingMax
	}
	ctx, cancel := context.WithTimeout(ctx, b.handlerTimeout())
	defer cancel()
	res, err := b.opts.sampler.CreateMessage(ctx, &SamplingRequest{Server: b.name, Ask: policy == mcpconfig.SamplingAsk, Params: &p})
	if err != nil {
		return nil, &jsonrpc.Error{Code: codeUserRejected, Message: err.Error()}
	}
	return res, nil
}

func (b *Bridge) onElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if req.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "elicitation/create needs params"}
	}
	ctx, cancel := context.WithTimeout(ctx, b.handlerTimeout())
	defer cancel()
	return b.opts.elicitor.Elicit(ctx, b.name, req.Params)
}

func (b *Bridge) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	key, ok := p.ProgressToken.(string)
	if !ok {
		return // not a token of ours
	}
	tool, ok := b.side.tokens.Load(key)
	if !ok {
		return // the call ended, or a token we never sent
	}
	b.opts.progress(Progress{Server: b.name, Tool: tool.(string), Progress: p.Progress, Total: p.Total, Message: p.Message})
}

func (b *Bridge) onServerLog(_ context.Context, req *mcp.LoggingMessageRequest) {
	p := req.Params
	if p == nil {
		return
	}
	var text string
	switch d := p.Data.(type) {
	case string:
		text = d
	default:
		text = jsonText(d)
	}
	b.opts.serverLog(ServerLog{
		Server: b.name,
		Level:  p.Level,
		Logger: textsafe.Preview(p.Logger, 100),
		Text:   textsafe.Preview(text, maxServerLogText),
	})
}

// withProgressToken returns a copy of p carrying a fresh progress token,
// and the function that retires the token when the call ends. Without a
// progress handler p is returned as it is.
func (b *Bridge) withProgressToken(p *mcp.CallToolParams) (*mcp.CallToolParams, func()) {
	if b.opts.progress == nil || p == nil {
		return p, func() {}
	}
	token := "agentapp-" + strconv.FormatInt(b.side.nextToken.Add(1), 10)
	cp := *p
	if p.Meta != nil {
		cp.Meta = make(mcp.Meta, len(p.Meta)+1)
		for k, v := range p.Meta {
			cp.Meta[k] = v
		}
	}
	cp.SetProgressToken(token)
	b.side.tokens.Store(token, p.Name)
	// Over HTTP the last notifications of a call may be handled after its
	// result; the token stays valid a moment longer so they still count.
	return &cp, func() { time.AfterFunc(progressLinger, func() { b.side.tokens.Delete(token) }) }
}

// serverLogLevel is the level of the server's log messages wanted, "" for
// none.
func (b *Bridge) serverLogLevel() mcp.LoggingLevel {
	if b.opts.serverLog == nil {
		return ""
	}
	return b.opts.logLevel
}
