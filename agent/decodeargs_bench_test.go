package agent

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecodeArgs measures DecodeArgs on the arguments tools get most:
// a one-field object like get_order's and a three-field one of short and
// sentence-length strings.
func BenchmarkDecodeArgs(b *testing.B) {
	for _, bc := range []struct{ name, args string }{
		{"1field", `{"orderId":"A-1024"}`},
		{"3fields", `{"subject":"Refund not received","body":"I returned order A-1024 two weeks ago and have not been refunded yet.","priority":"high"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := json.RawMessage(bc.args)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeArgs(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
