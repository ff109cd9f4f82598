package main

import (
	"strings"
	"testing"
)

// TestMCPToolsShowsViewMeta: `mcp tools` prints a tool's _meta, where an
// MCP Apps view is linked, and `mcp read` reads the view it names.
func TestMCPToolsShowsViewMeta(t *testing.T) {
	chatEnv(t)
	bin := agentappBin(t)
	t.Setenv("AGENTAPP_DATA_DIR", t.TempDir())

	out, stderr, code := runChatCLI(t, "", "mcp", "tools", "--", bin, "serve")
	if code != 0 {
		t.Fatalf("mcp tools: exit %d: %s", code, stderr)
	}
	v := decodeMCPOutput(t, out)
	uri := ""
	for _, x := range v["tools"].([]any) {
		tool := x.(map[string]any)
		if tool["name"] != "getOrderStatus" {
			continue
		}
		meta, _ := tool["_meta"].(map[string]any)
		ui, _ := meta["ui"].(map[string]any)
		uri, _ = ui["resourceUri"].(string)
	}
	if uri != "ui://agentapp/order-status" {
		t.Fatalf("getOrderStatus's _meta.ui.resourceUri = %q in:\n%s", uri, out)
	}

	out, stderr, code = runChatCLI(t, "", "mcp", "read", uri, "--", bin, "serve")
	if code != 0 {
		t.Fatalf("mcp read %s: exit %d: %s", uri, code, stderr)
	}
	contents, _ := decodeMCPOutput(t, out)["contents"].([]any)
	if len(contents) != 1 {
		t.Fatalf("contents: %s", out)
	}
	c := contents[0].(map[string]any)
	if c["mimeType"] != "text/html;profile=mcp-app" || !strings.Contains(c["text"].(string), "<!doctype html>") || c["_meta"] == nil {
		t.Errorf("the view read as %.300s", out)
	}
	// --raw prints the HTML as written, line breaks and all.
	out, stderr, code = runChatCLI(t, "", "mcp", "read", "--raw", uri, "--", bin, "serve")
	if code != 0 || !strings.HasPrefix(out, "<!doctype html>\n<html") || out != c["text"] {
		t.Errorf("mcp read --raw: exit %d, %.200q, stderr %s", code, out, stderr)
	}
}

// TestMCPToolsAsSent: `mcp tools` prints each tool as the server listed it,
// annotations and execution.taskSupport included (they were rewritten to
// readOnly/idempotent flags, and taskSupport dropped); --brief summarizes,
// with the taskSupport.
func TestMCPToolsAsSent(t *testing.T) {
	chatEnv(t)
	bin := agentappBin(t)
	t.Setenv("AGENTAPP_DATA_DIR", t.TempDir())
	out, stderr, code := runChatCLI(t, "", "mcp", "tools", "--", bin, "serve")
	if code != 0 {
		t.Fatalf("mcp tools: exit %d: %s", code, stderr)
	}
	byName := map[string]map[string]any{}
	for _, x := range decodeMCPOutput(t, out)["tools"].([]any) {
		tool := x.(map[string]any)
		byName[tool["name"].(string)] = tool
	}
	refund := byName["requestRefund"]
	if exec, _ := refund["execution"].(map[string]any); exec["taskSupport"] != "optional" {
		t.Errorf("requestRefund's execution = %v, want taskSupport optional as sent:\n%s", refund["execution"], out)
	}
	if ann, _ := byName["getOrderStatus"]["annotations"].(map[string]any); ann["readOnlyHint"] != true {
		t.Errorf("getOrderStatus's annotations = %v, want readOnlyHint as sent", byName["getOrderStatus"]["annotations"])
	}
	if _, ok := byName["getOrderStatus"]["readOnly"]; ok {
		t.Errorf("the tool as sent has agentapp's readOnly flag:\n%s", out)
	}

	out, stderr, code = runChatCLI(t, "", "mcp", "tools", "--brief", "--", bin, "serve")
	if code != 0 {
		t.Fatalf("mcp tools --brief: exit %d: %s", code, stderr)
	}
	brief := map[string]map[string]any{}
	for _, x := range decodeMCPOutput(t, out)["tools"].([]any) {
		tool := x.(map[string]any)
		brief[tool["name"].(string)] = tool
	}
	if brief["requestRefund"]["taskSupport"] != "optional" || brief["getOrderStatus"]["readOnly"] != true ||
		brief["getOrderStatus"]["view"] != "ui://agentapp/order-status" {
		t.Errorf("--brief:\n%s", out)
	}
}
