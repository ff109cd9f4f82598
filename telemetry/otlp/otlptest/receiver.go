// Package otlptest is an in-process OTLP/HTTP trace receiver for tests: an
// httptest server that decodes each ExportTraceServiceRequest with the
// official protobuf definitions and keeps the spans.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span with its resource's attributes.
type Span struct {
	*tracepb.Span
	Resource map[string]string
}

// TraceID, SpanID and ParentID are the ids in hex ("" for none).
func (s Span) TraceID() string  { return hex.EncodeToString(s.Span.TraceId) }
func (s Span) SpanID() string   { return hex.EncodeToString(s.Span.SpanId) }
func (s Span) ParentID() string { return hex.EncodeToString(s.Span.ParentSpanId) }

// Attr returns the attribute key as a string (a slice as its elements
// joined by commas), and whether the span has it.
func (s Span) Attr(key string) (string, bool) { return attr(s.Attributes, key) }

func attr(kvs []*commonpb.KeyValue, key string) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return valueString(kv.Value), true
		}
	}
	return "", false
}

func valueString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_ArrayValue:
		var b bytes.Buffer
		for i, e := range x.ArrayValue.Values {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(valueString(e))
		}
		return b.String()
	}
	return fmt.Sprint(v)
}

// Receiver is the receiver; URL is its base URL, for
// OTEL_EXPORTER_OTLP_ENDPOINT.
type Receiver struct {
	URL string

	mu       sync.Mutex
	spans    []Span
	requests int
	problems []string
	changed  chan struct{}
}

// Start starts a receiver that stops when t ends.
func Start(t testing.TB) *Receiver {
	r := &Receiver{changed: make(chan struct{}, 1)}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// ServeHTTP receives one export request.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	problem := func(msg string) {
		r.mu.Lock()
		r.problems = append(r.problems, msg)
		r.mu.Unlock()
		http.Error(w, msg, http.StatusBadRequest)
	}
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		problem(fmt.Sprintf("%s %s: want POST /v1/traces", req.Method, req.URL.Path))
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		problem("Content-Type " + ct)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			problem("gzip: " + err.Error())
			return
		}
		body = zr
	}
	data, err := io.ReadAll(io.LimitReader(body, 16<<20))
	if err != nil {
		problem("read: " + err.Error())
		return
	}
	var msg collectorpb.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &msg); err != nil {
		problem("decode: " + err.Error())
		return
	}
	r.mu.Lock()
	r.requests++
	for _, rs := range msg.ResourceSpans {
		res := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			res[kv.Key] = valueString(kv.Value)
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, Span{Span: s, Resource: res})
			}
		}
	}
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Requests returns how many export requests arrived.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Problems returns what was wrong with requests that were refused.
func (r *Receiver) Problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.problems...)
}

// WaitFor waits, at most timeout, until ok holds for the spans received,
// and returns them; after timeout it fails t with what arrived.
func (r *Receiver) WaitFor(t testing.TB, timeout time.Duration, what string, ok func([]Span) bool) []Span {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		spans := r.Spans()
		if ok(spans) {
			return spans
		}
		select {
		case <-r.changed:
		case <-deadline.C:
			var names []string
			for _, s := range spans {
				names = append(names, s.Name+" ("+s.Resource["process.pid"]+")")
			}
			t.Fatalf("after %v the receiver still lacks %s; it has %d spans: %v; refused requests: %v",
				timeout, what, len(spans), names, r.Problems())
			return nil
		}
	}
}
