// Package guard protects the chat against tools that come from external MCP
// servers, which are a surface this program does not control: a hostile or
// compromised server can receive injected arguments, return personal data
// the model should not see, or be called when the user never meant to call
// it.
//
// Every guard is off by default and configured from the environment
// (FromEnv). Wrap puts the guards around one MCP-sourced tool; local tools
// are never wrapped. For one call the checks run in a fixed order:
// allowlist, prompt-injection scan of the arguments, confirmation, the call
// itself, then PII masking of the output. A refusal is a normal tool result
// the model sees, {"denied": true, "reason": "..."}, and the server is never
// reached.
//
// The same injection scan serves user messages (Guards.CheckUserMessage)
// and knowledge-base ingest (CheckDocument), and the same masker serves
// knowledge-base hits (Guards.MaskText, Guards.MaskTool). Every refusal and
// every confirmation decision is appended to an audit log (Audit) as one
// JSON line.
//
// What the guards do not do: the scan is a list of known phrasings, so a
// reworded, translated, encoded (base64, hex) or split-across-fields
// injection passes; the PII masker only knows mainland phone numbers,
// 18-character national ids and 13–19 digit cards written with ASCII
// digits; and nothing here inspects what a server does with the arguments
// it receives.
package guard
