package telemetry

import "testing"

func TestServerNameDropsCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"support": "support",
		"http://user:pw@127.0.0.1:8080/mcp?api_key=s3cr3t": "http://127.0.0.1:8080/mcp",
		"https://tok@example.test/mcp#frag":                "https://example.test/mcp",
		"https://example.test":                             "https://example.test",
		"http://u:p@[::1]:9/a%2Fb?x=1":                     "http://[::1]:9/a%2Fb",
		"http://user:p w%zz@host:1/mcp?api_key=s3cr3t":     "http://host:1",
		"npx -y @modelcontextprotocol/server-everything":   "npx -y @modelcontextprotocol/server-everything",
	} {
		if got := ServerName(in); got != want {
			t.Errorf("ServerName(%q) = %q, want %q", in, got, want)
		}
	}
}
