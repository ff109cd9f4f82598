// Package telemetry is agentapp's OpenTelemetry tracing: the spans the
// other packages start (a turn, a model call, a tool call, an MCP request on
// either side, a guard decision, a knowledge-base search), named and
// attributed after the semantic conventions for generative AI and MCP, and
// the trace context that crosses processes in an MCP request's _meta
// (SEP-414) or an HTTP request's traceparent header.
//
// It depends on the OpenTelemetry API only. The SDK and its exporters are
// set up by telemetry/otlp, from the OTEL_* variables cmd/agentapp reads;
// nothing here reads the environment or keeps global state.
//
// Tracing is off unless a *Tracing is made and a span started with it: a
// package below only continues the trace its context carries
// (FromContext), so with tracing off each of these helpers costs one
// context lookup and allocates nothing.
package telemetry

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every span agentapp starts.
const ScopeName = "github.com/agentapp/agentapp"

// Options configure New. A nil *Options means the defaults.
type Options struct {
	// RecordContent records tool arguments and results, and search
	// queries, on the spans. They can hold personal data, so they are
	// left out unless asked for.
	RecordContent bool
}

// Tracing starts the spans of one process. A nil *Tracing is valid and
// starts nothing: it is what a process without tracing has.
type Tracing struct {
	tracer  trace.Tracer
	content bool
}

// New returns the Tracing that starts spans with tp, or nil when tp is nil.
func New(tp trace.TracerProvider, opts *Options) *Tracing {
	if tp == nil {
		return nil
	}
	t := &Tracing{tracer: tp.Tracer(ScopeName)}
	if opts != nil {
		t.content = opts.RecordContent
	}
	return t
}

// RecordsContent reports whether spans carry arguments, results and
// queries (Options.RecordContent).
func (t *Tracing) RecordsContent() bool { return t != nil && t.content }

type spanKey struct{}

// FromContext returns the Tracing of the trace ctx carries, or nil when
// ctx carries none: a span started here puts itself in its context, so
// that the packages below continue the trace without being handed a
// tracer.
func FromContext(ctx context.Context) *Tracing {
	if sp := spanFrom(ctx); sp != nil {
		return sp.t
	}
	return nil
}

// spanFrom returns the innermost span started here that ctx carries.
func spanFrom(ctx context.Context) *Span {
	sp, _ := ctx.Value(spanKey{}).(*Span)
	return sp
}

// Span is one span agentapp started. A nil *Span is valid: every method
// does nothing, which is what tracing off gets.
type Span struct {
	span    trace.Span
	t       *Tracing
	content bool
	denied  atomic.Bool // a guard refused the call (GuardDecision)
}

// start starts a span named name under ctx's span (or the remote parent
// ctx carries) and puts t in the returned context.
func (t *Tracing) start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, *Span) {
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	sp := &Span{span: span, t: t, content: t.content}
	return context.WithValue(ctx, spanKey{}, sp), sp
}

// Start starts a span named name as a child of ctx's span, or as the root
// of a new trace when ctx has none. It is for the places that begin work
// of their own (a command, a turn); nil t returns ctx and a nil *Span.
func (t *Tracing) Start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	return t.start(ctx, name, kind, attrs...)
}

// child starts an internal span under ctx's trace, or returns nil when
// ctx carries no trace.
func child(ctx context.Context, name string, kind trace.SpanKind) (context.Context, *Span) {
	t := FromContext(ctx)
	if t == nil {
		return ctx, nil
	}
	return t.start(ctx, name, kind)
}

// SetAttributes sets attributes on s. Callers that build attributes check
// s != nil first, so that tracing off builds none.
func (s *Span) SetAttributes(kv ...attribute.KeyValue) {
	if s != nil {
		s.span.SetAttributes(kv...)
	}
}

// RecordsContent reports whether s may carry arguments, results and
// queries.
func (s *Span) RecordsContent() bool { return s != nil && s.content }

// AddEvent adds a named event to s.
func (s *Span) AddEvent(name string, kv ...attribute.KeyValue) {
	if s != nil {
		s.span.AddEvent(name, trace.WithAttributes(kv...))
	}
}

// Fail marks s as failed with err: the span's status, error.type and an
// exception event, as the conventions record errors. A nil err does
// nothing.
func (s *Span) Fail(err error) {
	if s == nil || err == nil {
		return
	}
	s.span.SetStatus(codes.Error, err.Error())
	s.span.SetAttributes(AttrErrorType.String(errorType(err)))
	s.span.RecordError(err)
}

// FailWith marks s as failed with a type and a description of the
// failure, for an outcome that is not a Go error (a tool's isError
// result, an answer that is a JSON-RPC error).
func (s *Span) FailWith(errType, description string) {
	if s == nil {
		return
	}
	s.span.SetStatus(codes.Error, description)
	s.span.SetAttributes(AttrErrorType.String(errType))
}

// End ends s.
func (s *Span) End() {
	if s != nil {
		s.span.End()
	}
}

// SpanContext returns s's span context (the zero one for a nil s).
func (s *Span) SpanContext() trace.SpanContext {
	if s == nil {
		return trace.SpanContext{}
	}
	return s.span.SpanContext()
}

// errorType names err for error.type: its Go type, which is low in
// cardinality, unlike its message.
func errorType(err error) string {
	if err == context.DeadlineExceeded {
		return "timeout"
	}
	if err == context.Canceled {
		return "cancelled"
	}
	return typeName(err)
}

// Event adds an event to the span ctx carries, when it is recording; with
// tracing off it costs a context lookup.
func Event(ctx context.Context, name string, kv ...attribute.KeyValue) {
	if FromContext(ctx) == nil {
		return
	}
	if sp := trace.SpanFromContext(ctx); sp.IsRecording() {
		sp.AddEvent(name, trace.WithAttributes(kv...))
	}
}

// Enabled reports whether ctx carries a trace that agentapp's spans
// continue. Call sites that would build attributes for Event check it
// first.
func Enabled(ctx context.Context) bool { return FromContext(ctx) != nil }

// ms is d in milliseconds, for attributes that record a wait.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
