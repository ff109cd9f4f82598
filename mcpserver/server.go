package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/skills"
	"github.com/agentapp/agentapp/telemetry"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultName is the serverInfo name when Options.Name is empty.
const DefaultName = "agentapp"

// DefaultResourcePageSize is how many documents one resources/list page
// holds when Options.PageSize is 0.
const DefaultResourcePageSize = 100

// maxWorkers bounds the warm workers that run tool calls (see warmWorkers).
// Clients keep up to about 16 calls in flight; a call beyond the bound runs
// on a fresh goroutine, whose stack then regrows through the SQLite
// engine's deep frames. Idle workers end after warmIdleTimeout, so the
// bound costs nothing at rest.
const maxWorkers = 16

// Options configure New. A nil *Options, and every zero field, means the
// default.
type Options struct {
	// Name and Title are the serverInfo name (default DefaultName) and
	// human-readable title; Version is its version, normally the binary's.
	Name, Title, Version string
	// Instructions are sent to clients at initialization; empty sends none.
	Instructions string
	// Tools are published in order, each from the very value the local loop
	// uses: its InputSchema bytes go out unchanged and unconverted, so there
	// is one schema for local validation and for MCP clients.
	Tools []*agent.Tool
	// Docs, when set, is published as the resource template docs://kb/{docId}
	// and listed afresh on every resources/list.
	Docs DocStore
	// Logger receives server activity (recovered panics, failed reads). It
	// must not write to stdout, which belongs to the stdio protocol. Nil
	// discards.
	Logger *slog.Logger
	// PageSize bounds one page of resources/list (the page that ends the
	// skill files also carries the first page after them), skills/list
	// and resources/directory/read; 0 means DefaultResourcePageSize.
	PageSize int
	// DocsChange promises clients resources/list_changed notifications:
	// set it when something calls Server.DocsChanged whenever documents
	// are ingested or removed (serve on PostgreSQL does, for the ingests of
	// every process; see notify.go).
	DocsChange bool
	// Tasks, when set, runs its tools as tasks for callers that ask
	// (tasks.go).
	Tasks TaskBackend
	// Skills, when it holds any skill, is published through the Skills
	// extension (skills.go): skills/list, skills/get,
	// resources/directory/read, and every file as a resource. Nil or a
	// folder without skills publishes none and declares nothing.
	Skills *skills.Folder
	// Middleware is added to the server's receiving middleware, inside the
	// panic recovery. Any middleware turns the stdio fast path off (see
	// Server), so that every request passes through it.
	Middleware []mcp.Middleware
	// Tracing, when set, gives every request a server span that continues
	// the trace in its _meta (tracing.go); nil traces nothing.
	Tracing *telemetry.Tracing
	// Resources are published besides the documents, listed first
	// (static.go): an MCP Apps view is one.
	Resources []StaticResource
	// ToolMeta is the _meta tools/list sends with a tool, by tool name:
	// an MCP Apps view is linked to its tool through _meta.ui.resourceUri.
	ToolMeta map[string]map[string]any

	// Questions names, by tool, the argument a published tool asks the
	// user for when a call leaves it out (question.go).
	Questions map[string]Question
	// StateKey signs the requestState of those questions. Give every
	// replica the same key (the store keeps one) so that any of them
	// accepts the state another made; nil means a key of this process.
	StateKey []byte

	// SDK registers what the SDK serves as it is, beside the agent tools:
	// tools whose results are not an agent tool's output (images, progress,
	// requests to the client), prompts, resource templates, completion and
	// subscriptions. The conformance fixture (internal/conformance) uses it;
	// `agentapp serve` does not. Nil registers nothing.
	SDK *SDKFeatures

	// NoDirectCalls turns the direct tools/call path off (see Server):
	// every request then goes through the SDK's request path, also on the
	// server's own line transport. It is the switch to reach for when the
	// direct path is suspected of answering differently; the answers are
	// the same bytes either way, only slower without it.
	NoDirectCalls bool
}

// SDKFeatures are features the SDK serves as they are (Options.SDK).
type SDKFeatures struct {
	// Configure may set the SDK server's options (handlers for completion
	// and subscriptions, capabilities beyond the server's own) before it
	// is made; Capabilities holds the server's own already.
	Configure func(*mcp.ServerOptions)
	// Register adds tools, prompts, resources and templates to the SDK
	// server once the agent tools are on it, before any session starts.
	Register func(*mcp.Server)
}

// Server is an MCP server that publishes agent tools and, optionally, a
// store of documents. Connect it to a transport (Connect, ServeStdio,
// NewIOTransport) or serve it over HTTP (NewHTTPHandler).
//
// On its own line-delimited transport (IOTransport, what ServeStdio uses)
// the server answers a plain tools/call for one of its tools itself, past
// the SDK's request path: a call through the SDK's path costs about twice
// the CPU of the tool itself (its params are decoded three times, its result
// marshalled twice, a goroutine started per request), and the direct path
// decodes once, runs the same runTool on the same warm workers and writes
// the same bytes. Only the plain case is taken: a request alone on its
// line, after the session's initialize has been answered, whose params hold
// nothing but "name" (one of these tools) and "arguments" (an object, or
// absent). Anything else (_meta, a batch, an unknown tool, a call before
// initialize) goes to the SDK, so every protocol rule it enforces still
// holds. The direct path steps aside entirely once the server has
// receiving middleware beyond its own (Options.Middleware or
// AddReceivingMiddleware), because middleware must see every request, and
// Options.NoDirectCalls turns it off outright.
//
// Over streamable HTTP (NewHTTPHandler) the same direct path answers a
// POST that holds one such call on an open session, with the headers the
// SDK would accept, writing the SDK's status, headers and bytes
// (httpdirect.go).
type Server struct {
	mcp      *mcp.Server
	docs     DocStore
	logger   *slog.Logger
	tools    map[string]*agent.Tool
	workers  *warmWorkers
	sessions *sessionIDs
	tracing  *telemetry.Tracing // Options.Tracing
	// direct is cleared when middleware is added; IOTransport reads it
	// for every line, so a change applies to sessions already connected.
	direct atomic.Bool
	taken  atomic.Int64 // calls answered on the direct path, for tests

	// caller is the caller's middleware (Options.Middleware,
	// AddReceivingMiddleware) around the server's inner handlers. It sits
	// inside the server's own recovery and error guard; middleware added
	// to the SDK's server directly would wrap them instead.
	callerMu sync.Mutex
	caller   atomic.Pointer[mcp.MethodHandler]

	tasks         TaskBackend  // tasks.go; nil: none
	taskNotes     taskNotifier // tasks_notify.go: status notifications
	taskTools     map[string]bool
	requiredTasks map[string]bool // RequiredTaskBackend's

	static []*mcp.Resource // Options.Resources as listed (static.go)

	questions map[string]Question // Options.Questions
	signer    *stateSigner

	// serverInfoMeta is the _meta member the SDK puts in a result at
	// 2026-07-28 (httpdirectnext.go).
	serverInfoMeta []byte
}

// New returns an unconnected server that publishes opts.Tools and, if
// opts.Docs is set, the documents.
//
// Tools are registered with the SDK's raw AddTool so the SDK neither infers
// nor re-encodes their schemas; this package validates arguments itself
// with agent.Tool.CheckArgs, the same check the local loop uses.
//
// New panics if a tool is nil, has no Execute function, shares its name
// with another, or has an input schema that is not a JSON object schema:
// the tools are compiled into the binary, so that is a programming error
// that every test of the server catches.
func New(opts *Options) *Server { return newServer(opts, addTool) }

// newServer is New with the function that registers each tool with the
// SDK: addTool, or in the differential test the SDK's own AddTool.
func newServer(opts *Options, add func(*mcp.Server, *mcp.Tool, mcp.ToolHandler)) *Server {
	if opts == nil {
		opts = &Options{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pageSize := opts.PageSize
	if pageSize <= 0 {
		pageSize = DefaultResourcePageSize
	}
	name := opts.Name
	if name == "" {
		name = DefaultName
	}
	caps := &mcp.ServerCapabilities{
		// logging/setLevel is accepted (the SDK records the level per
		// session); the tools list is fixed for the server's life.
		Logging: &mcp.LoggingCapabilities{},
		Tools:   &mcp.ToolCapabilities{},
		// The SDK answers prompts/list (and prompts/get) whatever the
		// server declares; 2026-07-28 requires that what answers be
		// declared in server/discover.
		Prompts: &mcp.PromptCapabilities{},
	}
	hasSkills := opts.Skills != nil && len(opts.Skills.Entries()) > 0
	if opts.Docs != nil || len(opts.Resources) > 0 || hasSkills {
		// listChanged only with DocsChange: documents can be ingested by
		// another process (`agentapp kb ingest`), which this server hears
		// of only when something calls DocsChanged for it; without that it
		// promises only that every resources/list is current.
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: opts.DocsChange}
	}
	if opts.Tasks != nil {
		// The tasks extension of protocol 2026-07-28 (tasks_ext.go), in
		// the capabilities server/discover and initialize report.
		caps.AddExtension(ExtTasks, map[string]any{})
	}
	if hasSkills {
		// Skill files are resources, so the extension needs the
		// resources capability (above) too.
		caps.AddExtension(skills.ExtensionID, map[string]any{"directoryRead": true})
	}
	sdkOpts := &mcp.ServerOptions{
		Instructions: opts.Instructions,
		Logger:       logger,
		Capabilities: caps,
	}
	if opts.SDK != nil && opts.SDK.Configure != nil {
		opts.SDK.Configure(sdkOpts)
	}
	impl := &mcp.Implementation{Name: name, Title: opts.Title, Version: opts.Version}
	s := &Server{
		mcp:            mcp.NewServer(impl, sdkOpts),
		serverInfoMeta: serverInfoMeta(impl),
		logger:         logger,
		tools:          make(map[string]*agent.Tool, len(opts.Tools)),
		workers:        newWarmWorkers(maxWorkers),
		sessions:       &sessionIDs{},
		tracing:        opts.Tracing,

		questions: opts.Questions,
		signer:    newStateSigner(opts.StateKey),
	}
	for name, q := range opts.Questions {
		if q.Arg == "" || q.Message == "" {
			panic(fmt.Sprintf("mcpserver.New: the question of tool %q has no argument or no message", name))
		}
	}
	for _, t := range opts.Tools {
		if t == nil || t.Execute == nil {
			panic("mcpserver.New: a tool is nil or has no Execute function")
		}
		if s.tools[t.Name] != nil {
			panic(fmt.Sprintf("mcpserver.New: tool %q is listed twice", t.Name))
		}
		s.tools[t.Name] = t
		mt := mcpTool(t)
		if m := opts.ToolMeta[t.Name]; m != nil {
			mt.Meta = m
		}
		add(s.mcp, mt, s.toolHandler(t))
	}
	s.addStatic(opts)
	if opts.SDK != nil && opts.SDK.Register != nil {
		opts.SDK.Register(s.mcp)
	}

	// Middleware order: the first runs outermost, so recovery also covers
	// the caller's middleware and the resources/list answer below it, and
	// every error from below, the SDK's own included, is made sendable
	// (wireSafeMiddleware) before it leaves.
	mw := []mcp.Middleware{recoverMiddleware(logger), wireSafeMiddleware, s.callerMiddleware}
	if opts.Tracing != nil {
		mw = append([]mcp.Middleware{tracingMiddleware(opts.Tracing)}, mw...)
	}
	if hasSkills {
		// Outside the documents' listing, so that the skill files head
		// resources/list with cursors of their own.
		mw = append(mw, s.installSkills(newSkillServer(opts.Skills, pageSize)))
	}
	if opts.Docs != nil {
		s.docs = opts.Docs
		s.mcp.AddResourceTemplate(docTemplate(), readDocHandler(opts.Docs))
		mw = append(mw, listDocsMiddleware(opts.Docs, s.static, pageSize))
	}
	if opts.Tasks != nil {
		mw = append(mw, s.installTasks(opts.Tasks)...)
	}
	s.mcp.AddReceivingMiddleware(mw...)
	s.direct.Store(!opts.NoDirectCalls)
	s.AddReceivingMiddleware(opts.Middleware...)
	return s
}

// DirectCalls is how many tools/call requests the direct path has
// answered: a figure for tests and benchmarks that must know which path
// served them.
func (s *Server) DirectCalls() int64 { return s.taken.Load() }

// AddReceivingMiddleware adds middleware to the server, as
// mcp.Server.AddReceivingMiddleware does. Adding any turns the direct
// tools/call path off, for this and for sessions already connected, so
// that the middleware sees every request.
//
// The middleware runs inside the server's panic recovery and its guard
// that keeps every error sendable, so neither a panic nor an error of its
// own can end a session. As with the SDK, the first of mw runs outermost,
// and middleware added later wraps middleware added before.
func (s *Server) AddReceivingMiddleware(mw ...mcp.Middleware) {
	if len(mw) == 0 {
		return
	}
	s.direct.Store(false)
	s.callerMu.Lock()
	defer s.callerMu.Unlock()
	h := *s.caller.Load()
	for _, m := range slices.Backward(mw) {
		h = m(h)
	}
	s.caller.Store(&h)
}

// callerMiddleware is where the caller's middleware goes in the server's
// chain (see AddReceivingMiddleware). The SDK calls it once, when New
// installs it, with the handler the caller's middleware wraps.
func (s *Server) callerMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	s.caller.Store(&next)
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		return (*s.caller.Load())(ctx, method, req)
	}
}

// Connect connects the server to one client over t, as mcp.Server.Connect
// does. On an IOTransport made by NewIOTransport the direct path answers
// plain tools/call requests; on any other transport the SDK answers all.
func (s *Server) Connect(ctx context.Context, t mcp.Transport, opts *mcp.ServerSessionOptions) (*mcp.ServerSession, error) {
	return s.mcp.Connect(ctx, t, opts)
}

// mcpTool describes t for tools/list. InputSchema and OutputSchema are t's
// own json.RawMessage values: the same backing arrays, never a copy, so the
// bytes a client sees are exactly the local schema.
func mcpTool(t *agent.Tool) *mcp.Tool {
	mt := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Title,
			ReadOnlyHint:    t.ReadOnly,
			IdempotentHint:  t.Idempotent,
			DestructiveHint: t.Destructive,
			OpenWorldHint:   t.OpenWorld,
		},
	}
	if len(t.InputSchema) == 0 {
		// The SDK requires an input schema; an argument-less tool takes an
		// empty object.
		mt.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if len(t.OutputSchema) > 0 {
		mt.OutputSchema = t.OutputSchema
	}
	return mt
}

// objectSchema stands in for a tool's schemas while the SDK registers it
// (see addTool). The SDK checks a *jsonschema.Schema by its Type alone.
var objectSchema = &jsonschema.Schema{Type: "object"}

// addTool registers mt as the SDK's AddTool does, without the SDK's
// re-marshalling of each schema: AddTool marshals a json.RawMessage schema
// and decodes it into a map[string]any to read its "type", and decodes the
// input schema once more for x-mcp-header annotations, which was most of
// New's time and a tenth of serve's start. Here the input schema's type is
// read with one small decode, the SDK is given stand-in schemas, and the
// tool it keeps (the same *mcp.Tool) gets the raw schemas back before any
// session can list it, so tools/list sends the bytes unchanged
// (TestToolsListBytesUnchanged holds this to the SDK's own path).
//
// A schema that uses x-mcp-header, or that is not a json.RawMessage, goes
// through the SDK's AddTool unchanged, so its checks still apply.
func addTool(srv *mcp.Server, mt *mcp.Tool, h mcp.ToolHandler) {
	in, ok := mt.InputSchema.(json.RawMessage)
	out, outOK := mt.OutputSchema.(json.RawMessage)
	if !ok || (mt.OutputSchema != nil && !outOK) || bytes.Contains(in, []byte("x-mcp-header")) {
		srv.AddTool(mt, h)
		return
	}
	var head struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(in, &head); err != nil {
		panic(fmt.Errorf("mcpserver.New: tool %q: the input schema is not a JSON object: %v", mt.Name, err))
	}
	if head.Type != "object" {
		panic(fmt.Errorf(`mcpserver.New: tool %q: the input schema must have type "object" (got %v)`, mt.Name, head.Type))
	}
	if outOK && !json.Valid(out) {
		panic(fmt.Errorf("mcpserver.New: tool %q: the output schema is not valid JSON", mt.Name))
	}
	mt.InputSchema, mt.OutputSchema = objectSchema, nil
	srv.AddTool(mt, h)
	mt.InputSchema = in
	if outOK {
		mt.OutputSchema = out
	}
}

// toolHandler adapts t to a raw MCP tool handler that runs it on a warm
// worker (see runTool and warmWorkers).
func (s *Server) toolHandler(t *agent.Tool) mcp.ToolHandler {
	q, asks := s.questions[t.Name]
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		args := req.Params.Arguments
		if asks && lacksArg(args, q.Arg) {
			if args, res, err = s.ask(req, t, q, args); res != nil || err != nil {
				return res, err
			}
		}
		session := callSession(req, s.sessions)
		s.workers.run(func() { res = runTool(ctx, t, args, session) })
		return res, nil
	}
}

// runTool validates args, runs t and returns the output as both a text
// block and structuredContent. Everything that goes wrong in the tool
// becomes an isError result the client's model can read and act on; only
// protocol faults are JSON-RPC errors, and those are not raised here.
// session keys the tools' idempotency rules (agent.WithSession).
//
// Its execTool is the one place a published tool is run: the SDK's request
// path (toolHandler, through runTool) and the direct path (callDirect)
// both call it, so the two cannot run a tool differently; the direct path's
// own encoding of a json.RawMessage object is held to runTool's by
// TestDirectOrderAnswersMatchSDK.
func runTool(ctx context.Context, t *agent.Tool, args json.RawMessage, session string) *mcp.CallToolResult {
	out, failed := execTool(ctx, t, args, session)
	if failed != nil {
		return failed
	}
	return successResult(t.Name, out)
}

// execTool is runTool up to the tool's output: it returns the output, or
// the isError result when the arguments are rejected or the tool fails.
// The direct path encodes some outputs itself (see callDirect).
func execTool(ctx context.Context, t *agent.Tool, args json.RawMessage, session string) (out any, failed *mcp.CallToolResult) {
	if err := t.CheckArgs(args); err != nil {
		return nil, errorResult(err.Error())
	}
	if agent.SessionFrom(ctx) != session {
		// (The direct path's calls carry their session already.)
		ctx = agent.WithSession(ctx, session)
	}
	out, err := t.Execute(ctx, args)
	if err != nil {
		return nil, errorResult(fmt.Sprintf("%s failed: %v", t.Name, err))
	}
	return out, nil
}

// successResult encodes a tool's output once and uses the same bytes for
// the text block and for structuredContent, so both carry the keys in the
// same order. Output that is not a JSON object (a plain string, say) has no
// structured form and goes out as text only.
func successResult(name string, out any) *mcp.CallToolResult {
	text, err := agent.FormatOutput(out)
	if err != nil {
		return errorResult(fmt.Sprintf("%s produced output that cannot be sent: %v", name, err))
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	var object bool
	switch o := out.(type) {
	case json.RawMessage:
		// Text the tool made itself, often a result it keeps encoded:
		// it may be anything.
		object = rawObject(o)
	case string, []byte, nil:
		// Text the tool made itself: it may be anything.
		object = isJSONObject(text)
	default:
		// FormatOutput marshalled it, so it is valid JSON already, and an
		// object exactly when it starts with a brace.
		object = strings.HasPrefix(text, "{")
	}
	if object {
		res.StructuredContent = json.RawMessage(text)
	}
	return res
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: msg}},
	}
}

// isJSONObject reports whether s is one valid JSON object.
func isJSONObject(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return json.Valid([]byte(s))
		}
		return false
	}
	return false
}

// sessionIDs gives every MCP session a stable id for the tools'
// idempotency rules (agent.WithSession). Streamable HTTP sessions have
// their own Mcp-Session-Id, and ServerIOTransport gives each connection a
// random one (which DirectCalls uses too); sessions on other transports
// (the SDK's stdio and in-memory ones) have none, so each gets a random
// one for as long as it is connected.
type sessionIDs struct {
	mu  sync.Mutex
	ids map[*mcp.ServerSession]string
}

func (s *sessionIDs) of(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	if id := ss.ID(); id != "" {
		return "mcp:" + id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.ids[ss]; ok {
		return id
	}
	if s.ids == nil {
		s.ids = make(map[*mcp.ServerSession]string)
	}
	id := "mcp:" + rand.Text()
	s.ids[ss] = id
	go func() {
		// Forget the session when it ends, so a long-lived server does
		// not accumulate one entry per client that ever connected.
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.ids, ss)
		s.mu.Unlock()
	}()
	return id
}
