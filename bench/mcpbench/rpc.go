package mcpbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/agentapp/agentapp/internal/lineread"
)

// ProtocolVersion is offered in initialize. Both servers measured today
// support it, so neither negotiates down.
const ProtocolVersion = "2025-11-25"

// MaxFrame bounds one incoming line (a JSON-RPC message).
const MaxFrame = 16 << 20

// Message is an incoming JSON-RPC message: a response (ID with Result or
// Error), a request from the server (Method and ID) or a notification
// (Method only).
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// IsResponse reports whether m answers a request of ours.
func (m *Message) IsResponse() bool { return m.Method == "" && len(m.ID) > 0 }

// IsRequest reports whether m is a request from the server to us.
func (m *Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }

// NumericID returns the id of m when it is a JSON integer (ours always are).
func (m *Message) NumericID() (int64, bool) {
	n, err := strconv.ParseInt(string(m.ID), 10, 64)
	return n, err == nil
}

// AppendRequest appends one framed request — the JSON object and its
// terminating newline — to dst. params must be valid JSON (or empty, for
// none); it is copied verbatim, so the hot path does no marshalling.
func AppendRequest(dst []byte, id int64, method string, params json.RawMessage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":`...)
	dst = strconv.AppendQuote(dst, method)
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, "}\n"...)
}

// AppendNotification appends one framed notification to dst.
func AppendNotification(dst []byte, method string, params json.RawMessage) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = strconv.AppendQuote(dst, method)
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, "}\n"...)
}

// AppendErrorResponse appends a framed error response to a server request.
func AppendErrorResponse(dst []byte, id json.RawMessage, code int, msg string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = strconv.AppendQuote(dst, msg)
	return append(dst, "}}\n"...)
}

// ToolsCallParams returns the params of a tools/call of tool with the given
// arguments (a JSON object).
func ToolsCallParams(tool string, args json.RawMessage) (json.RawMessage, error) {
	if !json.Valid(args) || bytes.TrimSpace(args)[0] != '{' {
		return nil, fmt.Errorf("--args must be a JSON object, got %s", args)
	}
	return json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{tool, args})
}

// InitializeParams are the params of our initialize request: no client
// capabilities, so the server has nothing to ask us.
var InitializeParams = json.RawMessage(`{"protocolVersion":"` + ProtocolVersion +
	`","capabilities":{},"clientInfo":{"name":"mcpbench","version":"1"}}`)

// ErrFrameTooLong is returned by ReadFrame for a line over the limit.
var ErrFrameTooLong = errors.New("frame longer than the limit")

// ReadFrame returns the next non-empty line of br without its line ending
// ("\n" or "\r\n"). The slice is only valid until the next read. A final
// line without a newline is returned with a nil error; then io.EOF. A
// line longer than max bytes, its ending included, is read to its end and
// refused with ErrFrameTooLong.
func ReadFrame(br *bufio.Reader, max int) ([]byte, error) {
	lr := lineread.NewReader(br, max, 0)
	for {
		line, err := lr.ReadLine()
		if lr.TooLong() || lr.Len()+lr.EndLen() > max {
			return nil, ErrFrameTooLong
		}
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		// A last line without a newline is handed out too; the error
		// (io.EOF) comes with the next read.
		return line, nil
	}
}

// DecodeMessage parses one frame.
func DecodeMessage(frame []byte) (Message, error) {
	var m Message
	if err := json.Unmarshal(frame, &m); err != nil {
		return m, fmt.Errorf("not a JSON-RPC message: %w: %.200q", err, frame)
	}
	if m.Method == "" && len(m.ID) == 0 {
		return m, errNeither(frame)
	}
	return m, nil
}

func errNeither(frame []byte) error {
	return fmt.Errorf("neither a response nor a request: %.200q", frame)
}

// ToolResult is the part of a tools/call result the harness checks.
type ToolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text,omitempty"`
	} `json:"content"`
	IsError bool `json:"isError,omitempty"`
}

// CheckToolResult fails for a JSON-RPC error, a result that does not parse,
// has no content, or is flagged isError: a benchmark of failing calls
// would measure the wrong thing.
func CheckToolResult(m Message) (ToolResult, error) {
	var r ToolResult
	if m.Error != nil {
		return r, m.Error
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		return r, fmt.Errorf("tools/call result: %w", err)
	}
	if len(r.Content) == 0 {
		return r, fmt.Errorf("tools/call result has no content: %.300s", m.Result)
	}
	if r.IsError {
		return r, fmt.Errorf("tool reported an error: %.300s", m.Result)
	}
	return r, nil
}
