package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recoverMiddleware turns a panic in any request handler into an answer,
// because the SDK does not recover panics and one would kill the whole
// server (and, over stdio, the client's only connection to it).
//
// A panicking tools/call becomes an isError result, like any other tool
// failure, so the client's model sees it and can carry on; other methods
// get a JSON-RPC internal error. The stack goes to the server's log, never
// to the client.
func recoverMiddleware(logger *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				what := method
				if ct, ok := req.(*mcp.CallToolRequest); ok && ct.Params != nil {
					what = fmt.Sprintf("tool %s", ct.Params.Name)
				}
				logPanic(logger, method, what, p)
				if method == "tools/call" {
					res, err = panicResult(what), nil
					if ct, ok := req.(*mcp.CallToolRequest); ok && ct.Params != nil && atNextGen(ct.Params.Meta) {
						// The SDK marks a tool's result complete only
						// when its handler returns; this one did not.
						res = &completeToolResult{res.(*mcp.CallToolResult)}
					}
					return
				}
				res, err = nil, &jsonrpc.Error{
					Code:    jsonrpc.CodeInternalError,
					Message: fmt.Sprintf("internal error while answering %s; the server is still running and logged the details", method),
				}
			}()
			return next(ctx, method, req)
		}
	}
}

// logPanic logs a recovered panic with its stack, for the server's
// operator; the client gets only panicResult or an internal error.
func logPanic(logger *slog.Logger, method, what string, p any) {
	logger.Error("recovered from a panic while answering a request",
		"method", method, "what", what, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
}

// panicResult is the isError answer to a tools/call whose handler
// panicked; what names the tool ("tool getOrderStatus").
// completeToolResult is a tool result of protocol 2026-07-28 that says
// it is complete (resultType), as every result of that generation does.
type completeToolResult struct{ *mcp.CallToolResult }

func (r *completeToolResult) MarshalJSON() ([]byte, error) {
	b, err := r.CallToolResult.MarshalJSON()
	if err != nil || len(b) < 2 || b[len(b)-1] != '}' {
		return b, err
	}
	sep := ","
	if len(b) == 2 {
		sep = ""
	}
	return append(b[:len(b)-1:len(b)-1], sep+`"resultType":"complete"}`...), nil
}

func panicResult(what string) *mcp.CallToolResult {
	return errorResult(fmt.Sprintf(
		"%s failed with an internal error (the server is still running; the details are in its log). "+
			"Try again, or try something else.", what))
}

// listDocsMiddleware answers resources/list from docs on every call. The
// SDK only lists resources registered ahead of time, but documents are
// ingested and removed while the server runs (possibly by another
// process), so the list is computed here instead of being kept in sync.
//
// static resources (static.go) head the first page: there are few, and
// the cursor stays a document id.
func listDocsMiddleware(docs DocStore, static []*mcp.Resource, pageSize int) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			lr, ok := req.(*mcp.ListResourcesRequest)
			if !ok || method != "resources/list" {
				return next(ctx, method, req)
			}
			cursor := ""
			if lr.Params != nil {
				cursor = lr.Params.Cursor
			}
			res, err := listDocs(ctx, docs, cursor, pageSize)
			if err == nil && cursor == "" && len(static) > 0 {
				res.Resources = append(static[:len(static):len(static)], res.Resources...)
			}
			return res, err
		}
	}
}

// maxErrorMessage bounds the message of a JSON-RPC error the server sends,
// in bytes. Longer ones are cut (see wireSafeMiddleware): some of the SDK's
// messages quote what the client sent, which can be megabytes long.
const maxErrorMessage = 1024

// wireSafeMiddleware makes sure the error a request is answered with can
// be sent. The SDK answers by encoding the response, and when that fails it
// takes the connection for broken and closes it: the request goes
// unanswered and every other request of the session with it (over stdio,
// the whole server exits). A message is a JSON string and always encodes;
// what can fail is a jsonrpc.Error's Data, which is raw JSON. The SDK's own
// mcp.ResourceNotFoundError builds it with %q, whose \x and \U escapes are
// not JSON, so resources/read of a URI holding a control character (or a
// tag character such as U+E0001) ended the session.
//
// So every error a handler returns is checked here: Data that is not valid
// JSON (or not valid UTF-8) is rebuilt, as {"uri": …} for resources/read
// and dropped otherwise; a message longer than maxErrorMessage is cut; and
// the SDK's "unknown tool" and "unknown prompt" messages, which quote the
// name with %q, quote it with Quote instead. The code stays the same.
//
// Errors the SDK raises before any middleware runs (a method it does not
// know, params it cannot decode) are not seen here; their messages are
// plain strings, which encode whatever they hold.
func wireSafeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil {
			return res, nil
		}
		return nil, wireSafeError(method, req, err)
	}
}

// wireSafeError returns err, or an error with the same code that the SDK
// can encode (see wireSafeMiddleware).
func wireSafeError(method string, req mcp.Request, err error) error {
	we, ok := err.(*jsonrpc.Error)
	if !ok {
		// The SDK sends err.Error() with the code of the jsonrpc.Error
		// it wraps, if any, and no data: only the length can be wrong.
		msg := err.Error()
		if len(msg) <= maxErrorMessage {
			return err
		}
		out := &jsonrpc.Error{Message: cutMessage(msg)}
		if errors.As(err, &we) {
			out.Code = we.Code
		}
		return out
	}
	out := *we
	out.Message = cutMessage(sdkNameMessage(req, we.Message))
	if len(out.Data) > 0 && (!utf8.Valid(out.Data) || !json.Valid(out.Data)) {
		out.Data = nil
		if rr, ok := req.(*mcp.ReadResourceRequest); ok && method == "resources/read" && rr.Params != nil {
			out.Data = uriData(rr.Params.URI)
		}
	}
	if out.Message == we.Message && bytes.Equal(out.Data, we.Data) {
		return err
	}
	return &out
}

// sdkNameMessage rewrites the SDK's "unknown tool %q" and "unknown prompt
// %q" messages with Quote, which escapes the name for JSON and bounds it;
// any other message is returned as it is. For an ordinary name the two
// quotings are the same.
func sdkNameMessage(req mcp.Request, msg string) string {
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if r.Params != nil && msg == fmt.Sprintf("unknown tool %q", r.Params.Name) {
			return "unknown tool " + Quote(r.Params.Name)
		}
	case *mcp.GetPromptRequest:
		if r.Params != nil && msg == fmt.Sprintf("unknown prompt %q", r.Params.Name) {
			return "unknown prompt " + Quote(r.Params.Name)
		}
	}
	return msg
}

// cutMessage returns msg as valid UTF-8 of at most maxErrorMessage bytes,
// the cut (if any) marked with "…".
func cutMessage(msg string) string {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	if len(msg) <= maxErrorMessage {
		return msg
	}
	const mark = "…"
	end := maxErrorMessage - len(mark)
	for end > 0 && !utf8.RuneStart(msg[end]) {
		end--
	}
	return msg[:end] + mark
}

// QuoteLimit is how many characters of a client's text Quote keeps.
const QuoteLimit = 128

// Quote returns s in double quotes, for a message that names text a client
// sent (a URI, a tool name) and that the client will read, such as a
// JSON-RPC error. Use it instead of %q for client-supplied text: %q writes
// Go escapes (\x01, \U000e0001) that are not JSON, so text quoted with it
// and pasted into raw JSON, as the SDK's mcp.ResourceNotFoundError does,
// makes a message that cannot be sent.
//
// The result is itself a valid JSON string literal. Control characters,
// invisible ones (such as Unicode tag characters and bidirectional
// overrides) and every other unprintable character are written as \uXXXX
// escapes, so none reaches a terminal or a model as hidden text; invalid
// UTF-8 becomes \ufffd. Text longer than QuoteLimit characters is cut, and
// the cut marked with "…" before the closing quote, so a client cannot make
// an error message as long as its request.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(min(len(s), QuoteLimit) + 2)
	b.WriteByte('"')
	for i, n := 0, 0; i < len(s); n++ {
		if n == QuoteLimit {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r >= 0x10000:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
