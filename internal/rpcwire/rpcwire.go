// Package rpcwire decodes JSON-RPC 2.0 messages where they lie in a line
// of JSON text, for the stdio transports of both sides: the SDK's decoder
// allocates and clears a 32 KiB buffer for every value it decodes, several
// times per message, which was a large share of a call's cost on both the
// server and the client (bench/NOTES.md). Decode builds the same
// jsonrpc.Request or jsonrpc.Response the SDK's would, slicing params and
// results out of the input without copying them.
package rpcwire

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentapp/agentapp/internal/jsonscan"
)

// Decode reads one JSON-RPC 2.0 message from v, a valid JSON value.
// When v is not a message, problem says why and id is the message's id if
// it could be read (for the error response).
func Decode(v []byte) (msg jsonrpc.Message, id jsonrpc.ID, problem string) {
	if len(v) == 0 || v[0] != '{' {
		return nil, id, "a message must be a JSON object"
	}
	var version, rawID, method, params, result, wireErr []byte
	jsonscan.ForEachMember(v, func(key, val []byte) {
		switch string(key) {
		case "jsonrpc":
			version = val
		case "id":
			rawID = val
		case "method":
			method = val
		case "params":
			params = val
		case "result":
			result = val
		case "error":
			wireErr = val
		}
	})
	nullID := rawID != nil && bytes.Equal(rawID, []byte("null"))
	if rawID != nil && !nullID {
		var problem string
		if id, problem = DecodeID(rawID); problem != "" {
			return nil, id, problem
		}
	}
	if s, ok := jsonscan.String(version); !ok || s != "2.0" {
		return nil, id, `"jsonrpc" must be "2.0"`
	}
	if method != nil {
		name, ok := jsonscan.String(method)
		if !ok {
			return nil, id, "the method must be a string"
		}
		if nullID {
			// JSON-RPC only discourages a null id; MCP forbids it. Read
			// as a notification it would never be answered.
			return nil, id, "the id must not be null: MCP requires a string or an integer (leave the id out for a notification)"
		}
		return &jsonrpc.Request{ID: id, Method: name, Params: params}, id, ""
	}
	if !id.IsValid() {
		return nil, id, "a message without a method is a response and needs an id"
	}
	resp := &jsonrpc.Response{ID: id, Result: result}
	if wireErr != nil && !bytes.Equal(wireErr, []byte("null")) {
		e, ok := decodeError(wireErr)
		if !ok {
			return nil, id, "the error is not a JSON-RPC error object"
		}
		resp.Error = e
	}
	return resp, id, ""
}

// decodeError reads a JSON-RPC error object with the SDK's rules: keys are
// matched exactly (encoding/json would also take "Message" or "CODE"), the
// code must be an integer and the message a string.
func decodeError(v []byte) (*jsonrpc.Error, bool) {
	if len(v) == 0 || v[0] != '{' {
		return nil, false
	}
	e := &jsonrpc.Error{}
	ok := true
	jsonscan.ForEachMember(v, func(key, val []byte) {
		switch string(key) {
		case "code":
			ok = ok && json.Unmarshal(val, &e.Code) == nil
		case "message":
			ok = ok && json.Unmarshal(val, &e.Message) == nil
		case "data":
			if !bytes.Equal(val, []byte("null")) {
				e.Data = val
			}
		}
	})
	return e, ok
}

// hasLoneSurrogate reports whether the JSON string raw has a \uD800–\uDFFF
// escape that is not half of a high-low pair. Unescaped, such code points
// cannot be in valid JSON text, which is UTF-8.
func hasLoneSurrogate(raw []byte) bool {
	surrogate := func(i int) (rune, bool) { // the escape at raw[i:], if it is \uXXXX
		if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 32)
		return rune(n), err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := surrogate(i)
		if !ok {
			i++ // an escape of one character, such as \\ or \"
			continue
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			low, ok := surrogate(i + 6)
			if !ok || low < 0xDC00 || low > 0xDFFF {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// MaxExactID is the largest integer id taken: the SDK's jsonrpc.MakeID
// makes integer ids from float64, which holds every integer up to 2^53
// exactly and no larger range.
const MaxExactID = 1 << 53

// DecodeID reads a request or response id that is not null. Ids are
// echoed in answers, so only ids that jsonrpc.ID holds exactly are taken:
// strings of valid Unicode text (no lone surrogate escape), and integers written as plain integers within ±MaxExactID. A
// fraction, an exponent or a larger integer would come back as another
// number, and the client could match the answer to the wrong request, so
// such ids are refused instead.
func DecodeID(raw []byte) (id jsonrpc.ID, problem string) {
	switch raw[0] {
	case '"':
		s, ok := jsonscan.String(raw)
		if !ok {
			return id, "the id is not a valid string"
		}
		if hasLoneSurrogate(raw) {
			// Decoded, it would become U+FFFD: the answer would carry
			// another id, and "\ud800" and "\udc00" the same one.
			return id, `the id string has a lone UTF-16 surrogate escape (such as \ud800), which no Unicode text holds, so it cannot be echoed exactly; use an id of valid Unicode text`
		}
		id, _ = jsonrpc.MakeID(s) // a string always makes an id
		return id, ""
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || strconv.FormatInt(n, 10) != string(raw) || n > MaxExactID || n < -MaxExactID {
			return id, "the id must be a string or an integer from -2^53 to 2^53 written without a fraction or exponent, so that it can be echoed exactly"
		}
		id, _ = jsonrpc.MakeID(float64(n)) // exact: |n| <= 2^53
		return id, ""
	}
	return id, "the id must be a string or an integer"
}
