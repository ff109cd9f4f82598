package guard

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkScanDocument scans 64 KiB chunks of policy-like text, the cost
// ingest pays per chunk.
func BenchmarkScanDocument(b *testing.B) {
	chunk := strings.Repeat("出差住宿标准：一线城市每晚不超过 600 元，请提前在系统中提交申请。Refunds take 3-5 working days. ", 600)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		if _, ok := Scan(chunk); ok {
			b.Fatal("benign chunk refused")
		}
	}
}

// BenchmarkScanArgs scans the arguments of a typical tool call.
func BenchmarkScanArgs(b *testing.B) {
	args := json.RawMessage(`{"orderId":"A-1024","note":"客户说快递还没到，请帮忙查一下","priority":2}`)
	for b.Loop() {
		ScanArgs(args)
	}
}

// BenchmarkMaskJSON masks a knowledge-base search result.
func BenchmarkMaskJSON(b *testing.B) {
	raw := []byte(`{"notice":"n","hits":[` + strings.Repeat(`{"no":1,"docId":"d","score":0.5,"text":"<<<DATA\n联系人 13812345678，卡号 6222021234567890\nDATA>>>"},`, 9) +
		`{"no":10,"docId":"d","score":0.1,"text":"x"}]}`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		MaskJSON(raw)
	}
}
