package mcpserver_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// floorServer is the least an SDK server does for the same call: one tool
// shaped like getOrderStatus, answered from a map (bench/cmd/gosdkfloor).
func floorServer() *mcp.Server {
	type in struct {
		OrderID string `json:"orderId"`
	}
	type out struct {
		OrderID string `json:"orderId"`
		Status  string `json:"status"`
		ETA     string `json:"eta"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "getOrderStatus", Description: "Looks an order up."},
		func(_ context.Context, _ *mcp.CallToolRequest, i in) (*mcp.CallToolResult, out, error) {
			return nil, out{OrderID: i.OrderID, Status: "已发货", ETA: "明天 18:00 前送达"}, nil
		})
	return s
}

// httpSession opens a streamable HTTP session on url with plain POSTs
// (as a load generator does, without an SDK client's own costs) and
// returns a function that makes one tools/call.
func httpSession(b *testing.B, url string) func() {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Cleanup(client.CloseIdleConnections)
	post := func(session string, body string) *http.Response {
		req, _ := http.NewRequest("POST", url, bytes.NewBufferString(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		return res
	}
	res := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	session := res.Header.Get("Mcp-Session-Id")
	b.Cleanup(func() { // end the session, as a client that is done does
		req, _ := http.NewRequest("DELETE", url, nil)
		req.Header.Set("Mcp-Session-Id", session)
		if res, err := client.Do(req); err == nil {
			res.Body.Close()
		}
	})
	res = post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	id := 1
	return func() {
		id++
		res := post(session, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`, id))
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !bytes.Contains(body, []byte("A-1024")) {
			b.Fatalf("%d: %s", res.StatusCode, body)
		}
	}
}

// BenchmarkHTTPToolsCall is one getOrderStatus over streamable HTTP on
// loopback: agentapp's handler (its checks, guards, SQLite) against the
// SDK's bare handler with the floor's tool. The ratio is what agentapp
// adds per call over HTTP.
//
// agentapp-sdkpath is agentapp without its direct path (httpdirect.go):
// every call through the SDK's request path.
func BenchmarkHTTPToolsCall(b *testing.B) {
	for _, direct := range []bool{true, false} {
		name := "agentapp"
		if !direct {
			name = "agentapp-sdkpath"
		}
		b.Run(name, func(b *testing.B) {
			opts := newDomain(b).options()
			opts.NoDirectCalls = !direct
			srv := httptest.NewServer(mcpserver.NewHTTPHandler(mcpserver.New(opts), nil))
			b.Cleanup(srv.Close)
			call := httpSession(b, srv.URL+mcpserver.HTTPPath)
			b.ReportAllocs()
			for b.Loop() {
				call()
			}
		})
	}
	b.Run("sdkfloor", func(b *testing.B) {
		s := floorServer()
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		b.Cleanup(srv.Close)
		call := httpSession(b, srv.URL)
		b.ReportAllocs()
		for b.Loop() {
			call()
		}
	})
}
