package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/telemetry/otlp/otlptest"
)

// TestMCPCallSpansOmitURLCredentials (issue 43, item 2): `mcp call
// --server URL` with a user, a password and an api_key in the URL, traced
// to an OTLP receiver that records every attribute: no span carries the
// credentials; agentapp.mcp.server is the URL's scheme, host, port and
// path.
func TestMCPCallSpansOmitURLCredentials(t *testing.T) {
	bin := agentappBin(t)
	rcv := otlptest.Start(t)
	base := bigMCPServer(t, "", 1)
	hostPort := strings.TrimPrefix(base, "http://")
	secretURL := "http://agentuser:hunter2pw@" + hostPort + "/mcp?api_key=sk-live-0123456789"
	cmd := exec.Command(bin, "mcp", "call", "tool_00", "{}", "--server", secretURL)
	cmd.Env = append(withoutOTEL(os.Environ()), "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "ran tool_00") {
		t.Fatalf("mcp call: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	spans := rcv.WaitFor(t, 30*time.Second, "the command's spans", func(s []otlptest.Span) bool {
		return len(spanIndex(s).named("tools/call tool_00")) > 0 && len(spanIndex(s).named("agentapp mcp call")) == 1
	})
	named := 0
	for _, sp := range spans {
		for _, kv := range sp.Attributes {
			v, _ := sp.Attr(kv.Key)
			for _, secret := range []string{"agentuser", "hunter2pw", "sk-live", "api_key"} {
				if strings.Contains(v, secret) {
					t.Errorf("span %q: attribute %s = %q carries %q", sp.Name, kv.Key, v, secret)
				}
			}
		}
		if v, ok := sp.Attr("agentapp.mcp.server"); ok {
			named++
			if v != "http://"+hostPort+"/mcp" {
				t.Errorf("span %q: agentapp.mcp.server = %q, want the URL without credentials", sp.Name, v)
			}
		}
	}
	if named == 0 {
		t.Error("no span names the server")
	}
}
