package telemetry

import (
	"context"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The keys of an MCP request's _meta that carry the W3C trace context and
// baggage (SEP-414: the header names, without a DNS prefix).
const (
	MetaTraceparent = "traceparent"
	MetaTracestate  = "tracestate"
	MetaBaggage     = "baggage"
)

// propagator reads and writes the W3C trace context and baggage. It is a
// value without state, the same in every process.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// IsTraceKey reports whether key is one of the _meta keys of the trace
// context.
func IsTraceKey(key string) bool {
	return key == MetaTraceparent || key == MetaTracestate || key == MetaBaggage
}

// metaCarrier is an MCP _meta object as a propagation carrier: only its
// string values are read.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// InjectMeta writes the trace context of ctx's span into meta (a
// request's _meta), making meta when it is nil, and returns it. A context
// without a valid span leaves meta as it is.
func InjectMeta(ctx context.Context, meta map[string]any) map[string]any {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return meta
	}
	if meta == nil {
		meta = make(map[string]any, 3)
	}
	propagator.Inject(ctx, metaCarrier(meta))
	return meta
}

// ExtractMeta returns ctx with the remote trace context (and baggage) of
// meta, a request's _meta; without one it returns ctx.
func ExtractMeta(ctx context.Context, meta map[string]any) context.Context {
	if meta == nil {
		return ctx
	}
	if _, ok := meta[MetaTraceparent].(string); !ok {
		return ctx
	}
	return propagator.Extract(ctx, metaCarrier(meta))
}

// ExtractStrings is ExtractMeta for a trace context already read as
// strings (the direct paths read _meta without decoding it into a map).
func ExtractStrings(ctx context.Context, fields map[string]string) context.Context {
	if fields[MetaTraceparent] == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.MapCarrier(fields))
}

// StartMCPClient starts the client span of one MCP request under ctx's
// trace: "{method} {target}" (target is the tool's name for tools/call,
// empty for none). server is the configuration's name for the server,
// transport "pipe" for stdio or "tcp" for HTTP. With tracing off it
// returns ctx and a nil *Span.
func StartMCPClient(ctx context.Context, method, target, server, transport string) (context.Context, *Span) {
	t := FromContext(ctx)
	if t == nil {
		return ctx, nil
	}
	name := method
	if target != "" {
		name += " " + target
	}
	ctx, sp := t.start(ctx, name, trace.SpanKindClient, mcpAttrs(method, target, transport)...)
	if server != "" {
		sp.span.SetAttributes(AttrMCPServer.String(ServerName(server)))
	}
	return ctx, sp
}

// StartMCPServer starts the server span of one MCP request a client sent:
// a child of the trace context in the request's _meta when it has one,
// else of ctx's span, else a new trace. session is the MCP session's id;
// requestID the JSON-RPC id (nil for a notification). nil t returns ctx
// and a nil *Span.
func (t *Tracing) StartMCPServer(ctx context.Context, method, target, session, transport string, requestID any, meta map[string]any) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	return t.startServer(ExtractMeta(ctx, meta), method, target, session, transport, requestID)
}

// StartMCPServerStrings is StartMCPServer with the trace context already
// read as strings (see ExtractStrings).
func (t *Tracing) StartMCPServerStrings(ctx context.Context, method, target, session, transport string, requestID any, fields map[string]string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	return t.startServer(ExtractStrings(ctx, fields), method, target, session, transport, requestID)
}

func (t *Tracing) startServer(ctx context.Context, method, target, session, transport string, requestID any) (context.Context, *Span) {
	name := method
	if target != "" {
		name += " " + target
	}
	attrs := mcpAttrs(method, target, transport)
	if session != "" {
		attrs = append(attrs, AttrMCPSessionID.String(session))
	}
	if id := idString(requestID); id != "" {
		attrs = append(attrs, AttrJSONRPCRequestID.String(id))
	}
	return t.start(ctx, name, trace.SpanKindServer, attrs...)
}

// mcpAttrs are the attributes every MCP span has.
func mcpAttrs(method, target, transport string) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, AttrMCPMethod.String(method))
	if method == "tools/call" {
		attrs = append(attrs, AttrGenAIOperation.String("execute_tool"))
		if target != "" {
			attrs = append(attrs, AttrGenAIToolName.String(target))
		}
	}
	if transport != "" {
		attrs = append(attrs, AttrNetworkTransport.String(transport))
	}
	return attrs
}

// idString formats a JSON-RPC id (int64 or string) for jsonrpc.request.id.
func idString(id any) string {
	switch v := id.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// SetSession records the MCP session's id on an MCP span once it is known.
func (s *Span) SetSession(id string) {
	if s != nil && id != "" {
		s.span.SetAttributes(AttrMCPSessionID.String(id))
	}
}

// EndMCP records the outcome of an MCP request and ends s: err (the
// request failed, or its answer was a JSON-RPC error with code, when code
// is not 0) or, for tools/call, toolError (the tool's result has isError).
func (s *Span) EndMCP(err error, code int64, toolError bool) {
	if s == nil {
		return
	}
	switch {
	case code != 0:
		c := strconv.FormatInt(code, 10)
		s.span.SetAttributes(AttrRPCStatusCode.String(c))
		msg := c
		if err != nil {
			msg = err.Error()
		}
		s.FailWith(c, msg)
	case err != nil:
		s.Fail(err)
	case toolError:
		s.FailWith("tool_error", "the tool reported an error")
	}
	s.span.End()
}

// ExtractHTTP returns ctx with the remote trace context of an incoming
// HTTP request's traceparent, tracestate and baggage headers.
func ExtractHTTP(ctx context.Context, h http.Header) context.Context {
	if h.Get(MetaTraceparent) == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// InjectHTTP writes ctx's trace context into outgoing HTTP headers.
func InjectHTTP(ctx context.Context, h http.Header) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		propagator.Inject(ctx, propagation.HeaderCarrier(h))
	}
}

// Handler returns next with one server span per request ("{METHOD}
// {route}", route being a fixed name the caller gives, not the path,
// which can be anything), continuing the trace of the request's
// traceparent header. The span's context is the request's, so a turn
// started under it (StartTurn) joins the caller's trace. nil t returns
// next itself.
func (t *Tracing) Handler(route string, next http.Handler) http.Handler {
	if t == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := ExtractHTTP(r.Context(), r.Header)
		ctx, sp := t.start(ctx, r.Method+" "+route, trace.SpanKindServer,
			attribute.String("http.request.method", r.Method), attribute.String("http.route", route))
		defer sp.End()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r.WithContext(ctx))
		sp.span.SetAttributes(attribute.Int("http.response.status_code", sw.code))
		if sw.code >= 500 {
			sp.FailWith(strconv.Itoa(sw.code), http.StatusText(sw.code))
		}
	})
}

// statusWriter notes the status code a handler writes.
type statusWriter struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.code, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the writer's Flush and
// deadlines (the web streams its answers).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes a flush on, for handlers that test for http.Flusher.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
