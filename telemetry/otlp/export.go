package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// httpExporter sends spans to an OTLP/HTTP endpoint as protobuf
// (ExportTraceServiceRequest), encoded here field by field.
//
// The official exporters link the OTLP protobuf definitions and gRPC,
// whose package initialisation cost every start of agentapp (serve
// included) about 6 ms of CPU and 7 MiB of memory with tracing off: that
// is why this one exists. The message is small and stable (OTLP 1.x), and
// the tests decode what it sends with the official definitions.
type httpExporter struct {
	client  *http.Client
	url     string
	headers map[string]string
	gzip    bool
	timeout time.Duration

	mu     sync.Mutex
	closed bool
}

// defaultExportTimeout is OTEL_EXPORTER_OTLP_TIMEOUT's default.
const defaultExportTimeout = 10 * time.Second

// maxResponseBody bounds what is read of a collector's answer.
const maxResponseBody = 64 << 10

// maxAttempts bounds the sends of one batch: a collector that answers 429,
// 502, 503 or 504 is tried again after 0.5 s, then 1 s.
const maxAttempts = 3

func newHTTPExporter(c *config) *httpExporter {
	timeout := c.timeout
	if timeout <= 0 {
		timeout = defaultExportTimeout
	}
	return &httpExporter{
		client:  &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		url:     c.endpoint,
		headers: c.headers,
		gzip:    c.compression == "gzip",
		timeout: timeout,
	}
}

// ExportSpans implements sdktrace.SpanExporter.
func (e *httpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil
	}
	body := encodeRequest(spans)
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = buf.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	var err error
	for attempt := range maxAttempts {
		if attempt > 0 {
			t := time.NewTimer(time.Duration(attempt) * 500 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("%w (last attempt: %v)", ctx.Err(), err)
			case <-t.C:
			}
		}
		var retry bool
		if retry, err = e.send(ctx, body); err == nil || !retry {
			return err
		}
	}
	return err
}

// send posts one request; retry says whether a failure may pass on a
// second try.
func (e *httpExporter) send(ctx context.Context, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "agentapp-otlp")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// A collector that cannot be reached is not retried: the next
		// batch tries again, and the exit of a command must not wait.
		return false, err
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBody))
	resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	retry = resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusBadGateway ||
		resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout
	return retry, fmt.Errorf("the collector answered %s: %s", resp.Status, printable(msg))
}

// printable keeps the start of a collector's answer when it is text (a
// protobuf Status is not worth quoting).
func printable(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return "(a binary body)"
		}
	}
	return strconv.Quote(string(b))
}

// Shutdown implements sdktrace.SpanExporter.
func (e *httpExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.client.CloseIdleConnections()
	return nil
}

// The protobuf encoding of opentelemetry/proto/collector/trace/v1
// ExportTraceServiceRequest, with the field numbers of OTLP 1.x.

const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendTag(b []byte, field int, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = appendTag(b, field, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendStringField(b []byte, field int, v string) []byte {
	b = appendTag(b, field, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	b = appendTag(b, field, wireVarint)
	return binary.AppendUvarint(b, v)
}

func appendFixed64Field(b []byte, field int, v uint64) []byte {
	b = appendTag(b, field, wireFixed64)
	return binary.LittleEndian.AppendUint64(b, v)
}

func appendFixed32Field(b []byte, field int, v uint32) []byte {
	b = appendTag(b, field, wireFixed32)
	return binary.LittleEndian.AppendUint32(b, v)
}

// message appends field as a length-delimited message that fill writes.
func message(b []byte, field int, fill func([]byte) []byte) []byte {
	return appendBytesField(b, field, fill(nil))
}

type scopeKey struct {
	res   *resource.Resource
	scope instrumentation.Scope
}

// encodeRequest encodes spans as one ExportTraceServiceRequest, grouped
// by resource and instrumentation scope.
func encodeRequest(spans []sdktrace.ReadOnlySpan) []byte {
	var order []scopeKey
	groups := map[scopeKey][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		k := scopeKey{s.Resource(), s.InstrumentationScope()}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	var out []byte
	for _, k := range order {
		// ResourceSpans (field 1): resource 1, scope_spans 2, schema_url 3.
		out = message(out, 1, func(b []byte) []byte {
			b = message(b, 1, func(b []byte) []byte {
				if k.res != nil {
					for _, kv := range k.res.Attributes() {
						b = message(b, 1, func(b []byte) []byte { return appendKeyValue(b, kv) })
					}
				}
				return b
			})
			b = message(b, 2, func(b []byte) []byte {
				// ScopeSpans: scope 1, spans 2, schema_url 3.
				b = message(b, 1, func(b []byte) []byte {
					b = appendStringField(b, 1, k.scope.Name)
					if k.scope.Version != "" {
						b = appendStringField(b, 2, k.scope.Version)
					}
					return b
				})
				for _, s := range groups[k] {
					b = message(b, 2, func(b []byte) []byte { return appendSpan(b, s) })
				}
				if k.scope.SchemaURL != "" {
					b = appendStringField(b, 3, k.scope.SchemaURL)
				}
				return b
			})
			if k.res != nil && k.res.SchemaURL() != "" {
				b = appendStringField(b, 3, k.res.SchemaURL())
			}
			return b
		})
	}
	return out
}

// Span flags (field 16): the W3C trace flags, and whether the parent is
// remote (SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK, _IS_REMOTE_MASK).
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytesField(b, 1, tid[:])
	b = appendBytesField(b, 2, sid[:])
	if ts := sc.TraceState().String(); ts != "" {
		b = appendStringField(b, 3, ts)
	}
	flags := uint32(sc.TraceFlags()) | flagHasIsRemote
	if p := s.Parent(); p.IsValid() {
		psid := p.SpanID()
		b = appendBytesField(b, 4, psid[:])
		if p.IsRemote() {
			flags |= flagIsRemote
		}
	}
	b = appendStringField(b, 5, s.Name())
	// trace.SpanKind and OTLP's SpanKind number the kinds alike.
	b = appendVarintField(b, 6, uint64(s.SpanKind()))
	b = appendFixed64Field(b, 7, unixNano(s.StartTime()))
	b = appendFixed64Field(b, 8, unixNano(s.EndTime()))
	for _, kv := range s.Attributes() {
		b = message(b, 9, func(b []byte) []byte { return appendKeyValue(b, kv) })
	}
	if n := s.DroppedAttributes(); n > 0 {
		b = appendVarintField(b, 10, uint64(n))
	}
	for _, ev := range s.Events() {
		b = message(b, 11, func(b []byte) []byte {
			b = appendFixed64Field(b, 1, unixNano(ev.Time))
			b = appendStringField(b, 2, ev.Name)
			for _, kv := range ev.Attributes {
				b = message(b, 3, func(b []byte) []byte { return appendKeyValue(b, kv) })
			}
			if ev.DroppedAttributeCount > 0 {
				b = appendVarintField(b, 4, uint64(ev.DroppedAttributeCount))
			}
			return b
		})
	}
	if n := s.DroppedEvents(); n > 0 {
		b = appendVarintField(b, 12, uint64(n))
	}
	for _, l := range s.Links() {
		b = message(b, 13, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = appendBytesField(b, 1, ltid[:])
			b = appendBytesField(b, 2, lsid[:])
			if ts := l.SpanContext.TraceState().String(); ts != "" {
				b = appendStringField(b, 3, ts)
			}
			for _, kv := range l.Attributes {
				b = message(b, 4, func(b []byte) []byte { return appendKeyValue(b, kv) })
			}
			return b
		})
	}
	if n := s.DroppedLinks(); n > 0 {
		b = appendVarintField(b, 14, uint64(n))
	}
	if st := s.Status(); st.Code != codes.Unset {
		b = message(b, 15, func(b []byte) []byte {
			if st.Description != "" {
				b = appendStringField(b, 2, st.Description)
			}
			code := uint64(1) // STATUS_CODE_OK
			if st.Code == codes.Error {
				code = 2 // STATUS_CODE_ERROR
			}
			return appendVarintField(b, 3, code)
		})
	}
	return appendFixed32Field(b, 16, flags)
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

// appendKeyValue encodes a KeyValue: key 1, value 2 (an AnyValue).
func appendKeyValue(b []byte, kv attribute.KeyValue) []byte {
	b = appendStringField(b, 1, string(kv.Key))
	return message(b, 2, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
}

// appendAnyValue encodes an AnyValue: string_value 1, bool_value 2,
// int_value 3, double_value 4, array_value 5.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		return appendVarintField(b, 2, boolInt(v.AsBool()))
	case attribute.INT64:
		return appendVarintField(b, 3, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return appendFixed64Field(b, 4, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		return appendStringField(b, 1, v.AsString())
	case attribute.BOOLSLICE:
		return array(b, len(v.AsBoolSlice()), func(b []byte, i int) []byte {
			return appendVarintField(b, 2, boolInt(v.AsBoolSlice()[i]))
		})
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return array(b, len(s), func(b []byte, i int) []byte { return appendVarintField(b, 3, uint64(s[i])) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return array(b, len(s), func(b []byte, i int) []byte { return appendFixed64Field(b, 4, math.Float64bits(s[i])) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return array(b, len(s), func(b []byte, i int) []byte { return appendStringField(b, 1, s[i]) })
	}
	return appendStringField(b, 1, v.Emit())
}

// array encodes an ArrayValue of n AnyValues (values 1).
func array(b []byte, n int, elem func([]byte, int) []byte) []byte {
	return message(b, 5, func(b []byte) []byte {
		for i := range n {
			b = message(b, 1, func(b []byte) []byte { return elem(b, i) })
		}
		return b
	})
}

func boolInt(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}
