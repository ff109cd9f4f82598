//go:build otlpgrpc

package otlp

import (
	"context"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OTLP/gRPC exporter, for builds with -tags otlpgrpc: the official
// one, whose dependencies (gRPC, the OTLP protobuf definitions) every
// start of the binary then pays for.
func init() { newGRPCExporter = grpcExporter }

func grpcExporter(ctx context.Context, c *config) (sdktrace.SpanExporter, error) {
	o := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(c.endpoint)}
	if c.insecure {
		o = append(o, otlptracegrpc.WithInsecure())
	}
	if c.headers != nil {
		o = append(o, otlptracegrpc.WithHeaders(c.headers))
	}
	if c.timeout > 0 {
		o = append(o, otlptracegrpc.WithTimeout(c.timeout))
	}
	if c.compression == "gzip" {
		o = append(o, otlptracegrpc.WithCompressor("gzip"))
	}
	return otlptracegrpc.New(ctx, o...)
}
