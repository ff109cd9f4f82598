package telemetry

import (
	"net/url"
	"strings"
)

// ServerName is how a span names an MCP server: its configured name as it
// is, but a server named by its URL (`mcp call --server URL`) keeps only
// the URL's scheme, host, port and path. A URL's user, password, query
// and fragment may carry credentials, and the OpenTelemetry URL
// conventions forbid recording them; traces leave the machine.
func ServerName(server string) string {
	scheme, rest, ok := strings.Cut(server, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, " /?#@") {
		return server
	}
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		out := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
		return out.String()
	}
	// Not a URL Go can parse: keep what comes before any user, query or
	// fragment could start.
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	return scheme + "://" + rest
}
