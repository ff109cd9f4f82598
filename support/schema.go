package support

import "encoding/json"

// Limits of the tool arguments. The schemas below state the same numbers;
// TestSchemasStateTheLimits keeps the two in step.
const (
	maxOrderIDChars     = 32
	maxSubjectChars     = 200
	maxDescriptionChars = 4000
	maxReasonChars      = 500
	maxTranscriptChars  = 20000
)

// The input and output schemas (JSON Schema 2020-12, the MCP default
// dialect, so no "$schema" keyword). Each is built once here and shared by
// every Service: the loop validates against these bytes and the MCP server
// publishes them, so a change here changes both. They are never modified.
//
// Unknown properties are rejected ("additionalProperties": false): a model
// that invents an argument should learn at once that it is ignored rather
// than believe it had an effect.
var (
	orderStatusInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "orderId": {
      "type": "string",
      "description": "The order number in upper case: 1-4 letters, a dash and 4-12 digits, e.g. \"A-1024\".",
      "pattern": "^\\s*[A-Z]{1,4}-[0-9]{4,12}\\s*$",
      "maxLength": 32
    }
  },
  "required": ["orderId"],
  "additionalProperties": false
}`)

	orderStatusOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "orderId": {"type": "string", "description": "The order number that was looked up."},
    "status": {"type": "string", "description": "The order's status, in Chinese (e.g. 已发货 = shipped)."},
    "eta": {"type": "string", "description": "When the customer can expect it, in Chinese."},
    "found": {"type": "boolean", "description": "Present and false when no order has this number."},
    "message": {"type": "string", "description": "Present when the order was not found; says so."}
  },
  "required": ["orderId"]
}`)

	createTicketInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "subject": {
      "type": "string",
      "description": "One-line summary of the problem, e.g. \"订单 A-1024 申请退款\".",
      "minLength": 1,
      "maxLength": 200,
      "pattern": "\\S"
    },
    "description": {
      "type": "string",
      "description": "What happened and what the customer wants, with any order number.",
      "minLength": 1,
      "maxLength": 4000,
      "pattern": "\\S"
    }
  },
  "required": ["subject", "description"],
  "additionalProperties": false
}`)

	createTicketOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "ticketId": {"type": "string", "pattern": "^TK-[0-9]{8}-[0-9]{4,}$", "description": "The ticket id to quote to the customer."},
    "subject": {"type": "string"},
    "description": {"type": "string"},
    "status": {"type": "string", "description": "The ticket's status; \"open\" for a new ticket."}
  },
  "required": ["ticketId", "subject", "description", "status"]
}`)

	escalateInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "reason": {
      "type": "string",
      "description": "Why a human is needed, e.g. \"客户要求人工客服\".",
      "minLength": 1,
      "maxLength": 500,
      "pattern": "\\S"
    },
    "transcript": {
      "type": "string",
      "description": "The conversation so far, one message per line prefixed with the speaker (用户: / 助手:).",
      "minLength": 1,
      "maxLength": 20000,
      "pattern": "\\S"
    }
  },
  "required": ["reason", "transcript"],
  "additionalProperties": false
}`)

	escalateOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "ticketId": {"type": "string", "pattern": "^TK-[0-9]{8}-[0-9]{4,}$", "description": "The hand-off's ticket id to quote to the customer."},
    "reason": {"type": "string"},
    "transcript": {"type": "string"},
    "createdAt": {"type": "string", "format": "date-time", "description": "When the hand-off was created (RFC 3339, UTC)."}
  },
  "required": ["ticketId", "reason", "transcript", "createdAt"]
}`)
)
