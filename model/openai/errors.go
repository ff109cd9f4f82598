package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	secret "github.com/agentapp/agentapp/internal/redact"
)

// APIError is an error answer of the provider. Its Error() shows the
// provider's own message and code, and says what to check.
type APIError struct {
	// Status is the HTTP status; 0 for an error event inside a stream.
	Status int
	// Code is the provider's error code as text ("1113" for GLM's exhausted
	// balance, "invalid_api_key" for OpenAI), when it sent one.
	Code string
	// Message is the provider's own message, or the start of the response
	// body when it did not use the usual {"error":{"message":…}} shape.
	Message string
	// Type is the provider's error type, when it sent one.
	Type string
	// BaseURL and Model are those of the failed request, for the hint.
	BaseURL, Model string
	// Attempts is how many requests were made, retries included.
	Attempts int
	// RetryAfter is the delay the provider asked for (Retry-After), if any.
	RetryAfter time.Duration
}

// GLM's business codes that come with HTTP 429 but are not rate limits:
// retrying cannot help.
const (
	CodeGLMAccountLocked    = "1112"
	CodeGLMBalanceExhausted = "1113"
)

// Retryable reports whether the request may succeed if repeated: a 429 that
// is a real rate limit, or a 5xx server error.
func (e *APIError) Retryable() bool {
	if e.Status == http.StatusTooManyRequests {
		return e.Code != CodeGLMAccountLocked && e.Code != CodeGLMBalanceExhausted
	}
	return e.Status >= 500 && e.Status <= 599
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("model provider error")
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
		if t := http.StatusText(e.Status); t != "" {
			b.WriteString(" " + t)
		}
	} else {
		b.WriteString(" during streaming")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	var details []string
	if e.Code != "" {
		details = append(details, "code "+e.Code)
	}
	if e.Type != "" && e.Type != e.Code {
		details = append(details, "type "+e.Type)
	}
	if e.Attempts > 1 {
		details = append(details, fmt.Sprintf("after %d attempts", e.Attempts))
	}
	if len(details) > 0 {
		b.WriteString(" (" + strings.Join(details, ", ") + ")")
	}
	if h := e.Hint(); h != "" {
		b.WriteString(" — " + h)
	}
	return b.String()
}

// Hint says what the user should check for this error.
func (e *APIError) Hint() string {
	model := or(e.Model, "the model")
	base := or(e.BaseURL, "the base URL")
	switch {
	case e.Code == CodeGLMBalanceExhausted:
		return "the account's balance or resource package is exhausted: top it up at the provider, or switch OPENAI_MODEL to a free model (not retried)"
	case e.Code == CodeGLMAccountLocked:
		return "the account is locked or suspended: see the provider's console (not retried)"
	case e.Status == http.StatusUnauthorized:
		return fmt.Sprintf("check OPENAI_API_KEY: is it set, current, and a key for %s?", base)
	case e.Status == http.StatusForbidden:
		return fmt.Sprintf("check OPENAI_API_KEY and that the account may use model %q", e.Model)
	case e.Status == http.StatusNotFound:
		return fmt.Sprintf("check OPENAI_MODEL (%q exists at this provider?) and OPENAI_BASE_URL (%s should be the API root that /chat/completions is under, e.g. …/v1 or …/api/paas/v4)", e.Model, base)
	case e.Status == http.StatusTooManyRequests:
		return "rate limited: wait a moment and try again, or check the account's quota"
	case e.Status >= 500:
		return fmt.Sprintf("the provider at %s failed; try again later", base)
	case e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity:
		return fmt.Sprintf("the provider rejected the request: check OPENAI_MODEL (does %s support tool calling?) and OPENAI_BASE_URL (%s)", model, base)
	case e.Status == 0:
		return "the provider ended the stream with an error"
	}
	return fmt.Sprintf("check OPENAI_API_KEY, OPENAI_BASE_URL (%s) and OPENAI_MODEL (%q)", base, e.Model)
}

// ConnectionError is a request that got no HTTP answer at all.
type ConnectionError struct {
	BaseURL string
	Err     error
	// Midway is set when the connection broke after part of a streamed
	// answer had arrived.
	Midway bool
}

func (e *ConnectionError) Error() string {
	if e.Midway {
		return fmt.Sprintf("the connection to the model provider at %s broke during the answer: %v — try again", e.BaseURL, e.Err)
	}
	return fmt.Sprintf("cannot reach the model provider at %s: %v — check OPENAI_BASE_URL and the network (is the server running?)", e.BaseURL, e.Err)
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// httpFailure is a response with an error status: its status, headers and
// the start of its body, whatever shape the body has. It is an error only
// on its way from post to classify.
type httpFailure struct {
	status int
	header http.Header
	body   []byte
}

func (f *httpFailure) Error() string { return fmt.Sprintf("HTTP %d", f.status) }

// streamError is an event of a stream that carries an error instead of a
// chunk; data is the event's data. Like httpFailure it goes only from the
// stream reader to classify.
type streamError struct{ data []byte }

func (e *streamError) Error() string { return "error event in the stream" }

// maxErrorBody bounds how much of an error response is kept.
const maxErrorBody = 64 << 10

// classify turns what a request attempt returned into the error the caller
// sees: an *APIError for an error answer, a *ConnectionError when there was
// none, the context's error when the caller gave up.
func (m *Model) classify(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	// The provider's text is the provider's: one that echoes the key
	// ("Incorrect API key provided: sk-…") must not carry it into every
	// message, trace and log this error reaches.
	apiErr := &APIError{BaseURL: secret.Secrets(m.cfg.BaseURL), Model: m.cfg.Model}
	var failure *httpFailure
	var streamErr *streamError
	switch {
	case errors.As(err, &failure):
		apiErr.Status = failure.status
		apiErr.Code, apiErr.Message, apiErr.Type = parseErrorBody(failure.body)
		apiErr.RetryAfter = retryAfter(failure.header)
	case errors.As(err, &streamErr):
		apiErr.Code, apiErr.Message, apiErr.Type = parseErrorBody(streamErr.data)
	default:
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		var urlErr *url.Error
		var netErr net.Error
		if errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) {
			return &ConnectionError{BaseURL: m.cfg.BaseURL, Err: err}
		}
		// An answer this package could not use (no choices, no events, a
		// body that is not JSON, one over the size bound).
		return fmt.Errorf("model provider at %s: %w", m.cfg.BaseURL, err)
	}
	apiErr.Message = secret.Secrets(apiErr.Message, m.cfg.APIKey)
	return apiErr
}

// parseErrorBody reads the provider's code, message and type from an error
// body in any of the shapes seen in the wild:
//
//	{"error":{"code":"1113","message":"…"}}     OpenAI, GLM, DeepSeek, vLLM
//	{"error":{"code":401,"message":"…"}}        numeric codes
//	{"error":"model 'x' not found"}             Ollama
//	{"message":"…","code":…} / {"detail":"…"}   other servers
//
// Anything else becomes the start of the body as the message.
func parseErrorBody(body []byte) (code, message, typ string) {
	body = bytes.TrimSpace(body)
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) == nil {
		obj := top
		if raw, ok := top["error"]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return scalar(top["code"]), s, scalar(top["type"])
			}
			var inner map[string]json.RawMessage
			if json.Unmarshal(raw, &inner) == nil {
				obj = inner
			}
		}
		code, typ = scalar(obj["code"]), scalar(obj["type"])
		for _, k := range []string{"message", "msg", "detail", "error_msg"} {
			if message = scalar(obj[k]); message != "" {
				break
			}
			if raw, ok := obj[k]; ok && len(raw) > 0 && raw[0] != 'n' { // structured detail
				message = string(raw)
				break
			}
		}
		if message != "" || code != "" {
			return code, message, typ
		}
	}
	const max = 300
	msg := strings.Join(strings.Fields(string(body)), " ")
	if len(msg) > max {
		msg = msg[:max] + "…"
	}
	return "", msg, ""
}

// scalar renders a JSON string, number or boolean as text; "" otherwise.
func scalar(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return strconv.FormatBool(b)
	}
	return ""
}

// retryAfter reads Retry-After (seconds or an HTTP date) or retry-after-ms.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// Backoff chooses the wait before retry number attempt (1 for the first
// retry) after err.
type Backoff func(attempt int, err *APIError) time.Duration

// maxRetryWait caps any wait, including one the provider asked for.
const maxRetryWait = 30 * time.Second

// DefaultBackoff honours the provider's Retry-After (up to 30 s) and otherwise
// waits about 1 s, 2 s, 4 s… (with jitter, at most 8 s).
func DefaultBackoff(attempt int, err *APIError) time.Duration {
	if err != nil && err.RetryAfter > 0 {
		return min(err.RetryAfter, maxRetryWait)
	}
	d := time.Second << min(attempt-1, 3)
	jitter := time.Duration(rand.Int64N(int64(d / 4)))
	return min(d-d/8+jitter, 8*time.Second)
}
