package assistant

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"strings"

	"github.com/agentapp/agentapp/assistant/toolnames"
	"github.com/agentapp/agentapp/mcpserver"
)

// The order card is an MCP Apps view (the io.modelcontextprotocol/ui
// extension): hosts that render views show getOrderStatus's result as a
// card with the order's stages, its ETA and a button that asks the host to
// open an after-sales ticket (createTicket, a call the host approves like
// any other). Hosts without Apps ignore the link and keep the text result.
const (
	// OrderCardURI is the card's resource URI.
	OrderCardURI = "ui://agentapp/order-status"
	// AppMIMEType is the MIME type of an MCP Apps view.
	AppMIMEType = "text/html;profile=mcp-app"
)

//go:embed ordercard.html
var orderCardSource string

// orderCardHTML is the card with its script's hash in its own CSP, so the
// page runs that one script and nothing else: not an injected one, not an
// inline handler.
var orderCardHTML = withScriptHash(orderCardSource)

// withScriptHash fills {{SCRIPT_HASH}} with the CSP source of the one
// inline script's text.
func withScriptHash(page string) string {
	_, rest, ok := strings.Cut(page, "<script>")
	script, _, ok2 := strings.Cut(rest, "</script>")
	if !ok || !ok2 {
		panic("assistant: the order card has no <script> element")
	}
	sum := sha256.Sum256([]byte(script))
	return strings.Replace(page, "{{SCRIPT_HASH}}", "sha256-"+base64.StdEncoding.EncodeToString(sum[:]), 1)
}

// OrderCard returns the card as the resource `agentapp serve` publishes.
// Its _meta declares no outside domain at all, so a host builds the
// strictest CSP for it: the card needs no network.
func OrderCard() mcpserver.StaticResource {
	return mcpserver.StaticResource{
		URI:         OrderCardURI,
		Name:        "order-status-card",
		Title:       "Order status card",
		Description: "An interactive card for " + toolnames.OrderStatus + "'s result (MCP Apps view): the order's stages, its ETA and a button to open an after-sales ticket.",
		MIMEType:    AppMIMEType,
		Text:        orderCardHTML,
		Meta: map[string]any{"ui": map[string]any{
			"csp":           map[string]any{"connectDomains": []string{}, "resourceDomains": []string{}},
			"prefersBorder": true,
		}},
	}
}

// orderCardToolMeta links getOrderStatus to the card. The flat
// "ui/resourceUri" key is the form hosts written before the extension's
// final text read.
func orderCardToolMeta() map[string]any {
	return map[string]any{
		"ui":             map[string]any{"resourceUri": OrderCardURI},
		"ui/resourceUri": OrderCardURI,
	}
}
