package mcpbench

import (
	"bufio"
	"testing"

	"github.com/agentapp/agentapp/internal/testkit"
)

// BenchmarkReadFrame is the reader's framing of each frame a server writes.
func BenchmarkReadFrame(b *testing.B) {
	br := bufio.NewReaderSize(&testkit.RepeatReader{Data: append(benchFrame[:len(benchFrame):len(benchFrame)], '\n')}, 64<<10)
	b.ReportAllocs()
	for b.Loop() {
		f, err := ReadFrame(br, MaxFrame)
		if err != nil || len(f) != len(benchFrame) {
			b.Fatalf("%q %v", f, err)
		}
	}
}
