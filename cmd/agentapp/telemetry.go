package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentapp/agentapp/telemetry"
	"github.com/agentapp/agentapp/telemetry/otlp"
	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// envCaptureContent is the OpenTelemetry GenAI instrumentations' switch
// for recording content: with it true, spans carry tool arguments and
// results and knowledge-base queries.
const envCaptureContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// startTracing sets up OpenTelemetry tracing from the OTEL_* variables
// (telemetry/otlp). With none set it returns a nil Tracing and a stop that
// does nothing, having made nothing. The stop flushes the spans still
// queued, within otlp.DefaultShutdownTimeout, and is meant to be deferred.
//
// It is the one call a front end needs:
//
//	tr, stopTracing, err := startTracing(cmd, os.LookupEnv, logger)
func startTracing(cmd *cobra.Command, lookup func(string) (string, bool), logger *slog.Logger) (*telemetry.Tracing, func(), error) {
	err := otlp.Check(lookup)
	if err == nil && !otlp.Enabled(lookup) {
		return nil, func() {}, nil
	}
	var p *otlp.Provider
	if err == nil {
		v, _ := lookup(envCaptureContent)
		p, err = otlp.Setup(cmd.Context(), &otlp.Options{
			Lookup:         lookup,
			ServiceName:    "agentapp",
			ServiceVersion: readBuildInfo().Short(),
			RecordContent:  strings.EqualFold(strings.TrimSpace(v), "true"),
		})
	}
	if err != nil {
		if errors.Is(err, otlp.ErrConfig) {
			return nil, nil, fmt.Errorf("%w (see the OTEL_* variables in docs/tracing.md, or unset them to trace nothing)", err)
		}
		return nil, nil, err
	}
	// The SDK reports export failures (a collector that is down) through
	// its process-wide handler; they go to the command's log, once per
	// failed batch, and never stop the command.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("tracing: cannot export spans", "endpoint", p.Endpoint, "error", err)
	}))
	logger.Debug("tracing on", "endpoint", p.Endpoint, "protocol", p.Protocol)
	return p.Tracing(), func() {
		if err := p.Shutdown(context.WithoutCancel(cmd.Context())); err != nil {
			logger.Warn("tracing: "+err.Error()+"; the spans still queued are lost", "endpoint", p.Endpoint)
		}
	}, nil
}

// traceCommand starts the root span of a command that is a unit of work of
// its own (agentapp mcp call, …), named after the command path; nil tr
// returns ctx and a nil span.
func traceCommand(ctx context.Context, tr *telemetry.Tracing, cmd *cobra.Command) (context.Context, *telemetry.Span) {
	return tr.Start(ctx, cmd.CommandPath(), trace.SpanKindInternal)
}
