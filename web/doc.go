// Package web puts an assistant (a host) on the web: a JSON chat API that
// streams each turn as server-sent events, an OpenAI-compatible endpoint
// that offers the whole agent as one model, the chat page and the routes
// of an operator view the composition mounts (Options.Operator), behind the
// safety an internet-facing server needs.
//
// A web turn is a host turn (package host): the same local tools, MCP
// servers, tool table (listMcpResources and readMcpResource included),
// guards, stored sessions and sources as the terminal's, so a conversation
// behaves the same in the terminal and in the browser. What
// differs is who answers a confirmation: here the guard's question becomes
// an "approval" event, and the page's Allow or Deny comes back as a POST.
//
// Everything that waits has a bound (the turn, the approval, the drain at
// shutdown), everything that grows has a cap (open streams, pending
// approvals, rate-limit tables, listings), and every request goes through
// the Host check and, when it changes state, net/http's cross-origin
// protection. The handler holds no global state: metrics live in series
// of the Server's own.
package web
