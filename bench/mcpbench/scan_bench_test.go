package mcpbench

import "testing"

// A frame as agentapp answers getOrderStatus.
var benchFrame = []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"{\"orderId\":\"A-1024\",\"status\":\"已发货\",\"eta\":\"明天 18:00 前送达\"}"}],"structuredContent":{"orderId":"A-1024","status":"已发货","eta":"明天 18:00 前送达"}}}`)

// BenchmarkCheckFrame: what the reader does with each response of a batch.
func BenchmarkCheckFrame(b *testing.B) {
	b.Run("decodeFrame", func(b *testing.B) {
		for b.Loop() {
			m, err := decodeFrame(benchFrame)
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := m.NumericID(); !ok {
				b.Fatal("id")
			}
			if err := checkToolCall(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What it did before: json.Unmarshal twice.
	b.Run("DecodeMessage", func(b *testing.B) {
		for b.Loop() {
			m, err := DecodeMessage(benchFrame)
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := m.NumericID(); !ok {
				b.Fatal("id")
			}
			if _, err := CheckToolResult(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
