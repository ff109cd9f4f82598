package stdiofast

import (
	"bytes"
	"encoding/json"
)

// LegacyToolResultKey is the _meta key under which the capturing connection
// hands a legacy `toolResult` (the result shape of protocol 2024-10-07) to
// the adapter, as a string holding its raw JSON. The SDK drops fields it does
// not know when it decodes a CallToolResult, so the value is moved into
// _meta, which it keeps, before the SDK sees it.
const LegacyToolResultKey = "agentapp/legacyToolResult"

// LiftLegacyToolResult returns result with a top-level toolResult moved into
// _meta[LegacyToolResultKey], or result unchanged when it has none.
func LiftLegacyToolResult(result json.RawMessage) json.RawMessage {
	if !bytes.Contains(result, []byte(`"toolResult"`)) {
		return result // the common case, without decoding
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(result, &fields) != nil {
		return result
	}
	legacy, ok := fields["toolResult"]
	if !ok {
		return result
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := fields["_meta"]; ok {
		if json.Unmarshal(raw, &meta) != nil {
			return result
		}
	}
	s, _ := json.Marshal(string(legacy))
	meta[LegacyToolResultKey] = s
	fields["_meta"], _ = json.Marshal(meta)
	delete(fields, "toolResult")
	out, err := json.Marshal(fields)
	if err != nil {
		return result
	}
	return out
}
