// Package otlp sets up OpenTelemetry tracing with the SDK and an OTLP
// exporter (HTTP with protobuf; gRPC in builds with the otlpgrpc tag),
// configured by the standard
// OTEL_* variables. It reads them through Options.Lookup, which
// cmd/agentapp gives it: the package reads no environment itself.
//
// With none of the exporter's variables set, tracing is off: Setup
// returns a Provider whose Tracing is nil, and no SDK object is made.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentapp/agentapp/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// newGRPCExporter makes the OTLP/gRPC exporter. Only builds with the
// otlpgrpc tag have it (otlp_grpc.go): see httpExporter for why.
var newGRPCExporter func(context.Context, *config) (sdktrace.SpanExporter, error)

// Options configure Setup.
type Options struct {
	// Lookup reads one variable, as os.LookupEnv does. Nil reads none, so
	// tracing stays off.
	Lookup func(string) (string, bool)
	// ServiceName is service.name when OTEL_SERVICE_NAME does not set it;
	// ServiceVersion is service.version.
	ServiceName, ServiceVersion string
	// RecordContent records tool arguments and results on the spans
	// (telemetry.Options.RecordContent).
	RecordContent bool
}

// Provider is the tracing of one process.
type Provider struct {
	tp      *sdktrace.TracerProvider
	tracing *telemetry.Tracing
	// Endpoint and Protocol say where spans go, for the log line that
	// says tracing is on.
	Endpoint, Protocol string
}

// Tracing returns what the process's packages start spans with; nil when
// tracing is off (and for a nil p).
func (p *Provider) Tracing() *telemetry.Tracing {
	if p == nil {
		return nil
	}
	return p.tracing
}

// DefaultShutdownTimeout bounds the flush of the spans still queued at exit
// when the caller's context has no deadline.
const DefaultShutdownTimeout = 5 * time.Second

// Shutdown sends the spans still queued and stops the exporter, within
// ctx's deadline or DefaultShutdownTimeout: a collector that does not
// answer must not hold the process's exit. A nil or off p does nothing.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil || p.tp == nil {
		return nil
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultShutdownTimeout)
		defer cancel()
	}
	if err := p.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("sending the last spans to %s: %w", p.Endpoint, err)
	}
	return nil
}

// ForceFlush sends the spans queued so far, within ctx.
func (p *Provider) ForceFlush(ctx context.Context) error {
	if p == nil || p.tp == nil {
		return nil
	}
	return p.tp.ForceFlush(ctx)
}

// config is what the variables say.
type config struct {
	on          bool
	protocol    string // "http/protobuf" or "grpc"
	endpoint    string // a URL: for HTTP the full traces URL
	headers     map[string]string
	timeout     time.Duration
	compression string
	insecure    bool
	sampler     sdktrace.Sampler
	service     string
	attrs       []attribute.KeyValue
}

// ErrConfig is matched by the errors of a variable that cannot be used.
var ErrConfig = errors.New("invalid OpenTelemetry configuration")

func configError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
}

// Enabled reports whether the variables turn tracing on, without setting
// anything up: an OTLP endpoint is set, or OTEL_TRACES_EXPORTER names an
// exporter (otlp; Setup refuses others), and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none turns it
// off.
func Enabled(lookup func(string) (string, bool)) bool {
	if lookup == nil {
		return false
	}
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch exp := strings.ToLower(get("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false
	case "":
	default:
		return true // otlp, or one Setup refuses with a clear error
	}
	return get("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// supportedProtocols names the protocols this build exports with: gRPC
// only in builds with the otlpgrpc tag, so that an error does not suggest
// what the next start refuses.
func supportedProtocols() string {
	if newGRPCExporter == nil {
		return "http/protobuf (the default, to the collector's OTLP/HTTP port, 4318)"
	}
	return "http/protobuf (the default) or grpc"
}

// readConfig reads the variables.
func readConfig(lookup func(string) (string, bool)) (*config, error) {
	c := &config{on: Enabled(lookup)}
	if !c.on {
		return c, nil
	}
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	// Per-signal variables win over the general ones.
	pick := func(k string) string {
		if v := get("OTEL_EXPORTER_OTLP_TRACES_" + k); v != "" {
			return v
		}
		return get("OTEL_EXPORTER_OTLP_" + k)
	}
	if exp := strings.ToLower(get("OTEL_TRACES_EXPORTER")); exp != "" && exp != "otlp" {
		return nil, configError("OTEL_TRACES_EXPORTER=%q is not supported; use otlp or none", exp)
	}
	c.protocol = strings.ToLower(pick("PROTOCOL"))
	switch c.protocol {
	case "":
		c.protocol = "http/protobuf"
	case "http/protobuf", "grpc":
	case "http/json":
		return nil, configError("OTEL_EXPORTER_OTLP_PROTOCOL=http/json is not supported: agentapp sends OTLP as protobuf; use %s", supportedProtocols())
	default:
		return nil, configError("OTEL_EXPORTER_OTLP_PROTOCOL=%q is not a protocol; use %s", c.protocol, supportedProtocols())
	}
	if err := c.readEndpoint(get); err != nil {
		return nil, err
	}
	headersVar := "OTEL_EXPORTER_OTLP_HEADERS"
	if get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") != "" {
		headersVar = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	}
	h, err := parseList(pick("HEADERS"), headersVar)
	if err != nil {
		return nil, err
	}
	if err := checkHeaders(h, headersVar); err != nil {
		return nil, err
	}
	if len(h) > 0 {
		c.headers = make(map[string]string, len(h))
		for _, kv := range h {
			c.headers[kv[0]] = kv[1]
		}
	}
	if v := pick("TIMEOUT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, configError("OTEL_EXPORTER_OTLP_TIMEOUT=%q is not a positive number of milliseconds", v)
		}
		c.timeout = time.Duration(n) * time.Millisecond
	}
	switch v := strings.ToLower(pick("COMPRESSION")); v {
	case "", "none", "gzip":
		c.compression = v
	default:
		return nil, configError("OTEL_EXPORTER_OTLP_COMPRESSION=%q is not supported; use gzip or none", v)
	}
	if v := strings.ToLower(pick("INSECURE")); v == "true" {
		c.insecure = true
	}
	if c.sampler, err = readSampler(get("OTEL_TRACES_SAMPLER"), get("OTEL_TRACES_SAMPLER_ARG")); err != nil {
		return nil, err
	}
	ra, err := parseList(get("OTEL_RESOURCE_ATTRIBUTES"), "OTEL_RESOURCE_ATTRIBUTES")
	if err != nil {
		return nil, err
	}
	for _, kv := range ra {
		if kv[0] == "service.name" {
			c.service = kv[1]
			continue
		}
		c.attrs = append(c.attrs, attribute.String(kv[0], kv[1]))
	}
	if v := get("OTEL_SERVICE_NAME"); v != "" {
		c.service = v
	}
	return c, nil
}

// readEndpoint sets c.endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is,
// or OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces added for HTTP, or the
// protocol's default on localhost.
func (c *config) readEndpoint(get func(string) string) error {
	name, v := "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	signal := v != ""
	if !signal {
		name, v = "OTEL_EXPORTER_OTLP_ENDPOINT", get("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if v == "" {
		if c.protocol == "grpc" {
			v = "http://localhost:4317"
		} else {
			v = "http://localhost:4318"
		}
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return configError("%s=%q is not an http:// or https:// URL", name, v)
	}
	if c.protocol == "http/protobuf" && !signal {
		u.Path = strings.TrimRight(u.Path, "/") + "/v1/traces"
	}
	c.endpoint = u.String()
	return nil
}

// maxListEntries bounds the entries of OTEL_RESOURCE_ATTRIBUTES and
// OTEL_EXPORTER_OTLP_HEADERS.
const maxListEntries = 128

// parseList reads a W3C-baggage-like list, key=value pairs separated by
// commas, with percent-encoded values.
func parseList(s, name string) ([][2]string, error) {
	if s == "" {
		return nil, nil
	}
	var out [][2]string
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if len(out) == maxListEntries {
			return nil, configError("%s has more than %d entries", name, maxListEntries)
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, configError("%s: %q is not key=value", name, part)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, configError("%s: the value of %q is not percent-encoded correctly", name, k)
		}
		out = append(out, [2]string{k, dv})
	}
	return out, nil
}

// checkHeaders refuses headers no request can carry: a name that is not
// an HTTP token, a value with a control character (a CR or LF decoded
// from %0D%0A). Go refuses such a header on every export, so the command
// would start and every span would be lost. The value is never quoted:
// it is often a credential.
func checkHeaders(h [][2]string, name string) error {
	for _, kv := range h {
		for i := 0; i < len(kv[0]); i++ {
			if !isTokenByte(kv[0][i]) {
				return configError("%s: %q is not a header name (letters, digits and !#$%%&'*+-.^_`|~ only)", name, kv[0])
			}
		}
		for i := 0; i < len(kv[1]); i++ {
			if b := kv[1][i]; b < 0x20 && b != '\t' || b == 0x7f {
				return configError("%s: the value of header %q has a control character (such as CR or LF), which no request can carry", name, kv[0])
			}
		}
	}
	return nil
}

// isTokenByte reports whether b may appear in an HTTP header name (RFC
// 9110's tchar).
func isTokenByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// readSampler reads OTEL_TRACES_SAMPLER and its argument; the default, as
// the specification's, follows the parent's decision and samples roots.
func readSampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := func() (float64, error) {
		if arg == "" {
			return 1, nil
		}
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f < 0 || f > 1 {
			return 0, configError("OTEL_TRACES_SAMPLER_ARG=%q is not a ratio between 0 and 1", arg)
		}
		return f, nil
	}
	switch strings.ToLower(name) {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio":
		f, err := ratio()
		return sdktrace.TraceIDRatioBased(f), err
	case "parentbased_traceidratio":
		f, err := ratio()
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(f)), err
	}
	return nil, configError("OTEL_TRACES_SAMPLER=%q is not supported; use parentbased_always_on, always_on, always_off, traceidratio or parentbased_traceidratio", name)
}

// Setup reads the variables and, when they turn tracing on, makes the
// exporter and the tracer provider. The exporter connects lazily: a
// collector that is down costs failed exports (logged), not a failed
// start. Call Shutdown before exit.
func Setup(ctx context.Context, opts *Options) (*Provider, error) {
	if opts == nil {
		opts = &Options{}
	}
	c, err := readConfig(opts.Lookup)
	if err != nil || !c.on {
		return &Provider{}, err
	}
	var exp sdktrace.SpanExporter = newHTTPExporter(c)
	if c.protocol == "grpc" {
		if newGRPCExporter == nil {
			return &Provider{}, configError("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: this build sends traces over OTLP/HTTP only " +
				"(gRPC's client costs every start, traced or not; build with -tags otlpgrpc to have it); " +
				"use http/protobuf and the collector's OTLP/HTTP port, 4318 by default")
		}
		if exp, err = newGRPCExporter(ctx, c); err != nil {
			return &Provider{}, fmt.Errorf("starting the OTLP/gRPC exporter for %s: %w", c.endpoint, err)
		}
	}
	service := c.service
	if service == "" {
		service = opts.ServiceName
	}
	if service == "" {
		service = "agentapp"
	}
	attrs := append(c.attrs,
		attribute.String("service.name", service),
		attribute.Int("process.pid", os.Getpid()),
		attribute.String("telemetry.sdk.name", "opentelemetry"),
		attribute.String("telemetry.sdk.language", "go"))
	if opts.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", opts.ServiceVersion))
	}
	if exe, err := os.Executable(); err == nil {
		attrs = append(attrs, attribute.String("process.executable.name", filepath.Base(exe)))
	}
	if len(os.Args) > 0 {
		attrs = append(attrs, attribute.String("process.command", os.Args[0]))
		if len(os.Args) > 1 {
			// The subcommand says what the process is (serve, chat, web);
			// the other arguments can hold secrets and are left out.
			attrs = append(attrs, attribute.String("agentapp.command", os.Args[1]))
		}
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithSampler(c.sampler),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
	)
	return &Provider{
		tp:       tp,
		tracing:  telemetry.New(tp, &telemetry.Options{RecordContent: opts.RecordContent}),
		Endpoint: c.endpoint,
		Protocol: c.protocol,
	}, nil
}
