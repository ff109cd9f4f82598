package mcpserver

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// precheck refuses, on its headers alone, a request the server would
// refuse anyway after waiting for it, and reports whether it did:
//   - a Content-Length over the body limit gets 413 at once, instead of
//     the body being awaited until the read timeout (30 s) and then 400;
//   - MCP-Protocol-Version given more than once with different values
//     (or as a list) gets 400: which one the SDK would act on is
//     arbitrary, and a proxy may have read the other.
func precheck(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength > mcp.DefaultMaxRequestBodyBytes {
		refuse(w, fmt.Sprintf("Request Entity Too Large: the body is %d bytes, over the %d-byte limit", r.ContentLength, mcp.DefaultMaxRequestBodyBytes), http.StatusRequestEntityTooLarge)
		return true
	}
	if vs := r.Header.Values("Mcp-Protocol-Version"); len(vs) > 0 {
		for _, v := range vs {
			if v != vs[0] || strings.Contains(v, ",") {
				refuse(w, "Bad Request: the MCP-Protocol-Version header is given more than once with different values; send it once", http.StatusBadRequest)
				return true
			}
		}
	}
	return false
}
