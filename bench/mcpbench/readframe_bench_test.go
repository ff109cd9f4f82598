package mcpbench

import (
	"bufio"
	"testing"
)

// endless reads its data over and over.
type endless struct {
	data []byte
	off  int
}

func (r *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.data[r.off:])
		n += k
		r.off = (r.off + k) % len(r.data)
	}
	return n, nil
}

// BenchmarkReadFrame is the reader's framing of each frame a server writes.
func BenchmarkReadFrame(b *testing.B) {
	br := bufio.NewReaderSize(&endless{data: append(benchFrame[:len(benchFrame):len(benchFrame)], '\n')}, 64<<10)
	b.ReportAllocs()
	for b.Loop() {
		f, err := ReadFrame(br, MaxFrame)
		if err != nil || len(f) != len(benchFrame) {
			b.Fatalf("%q %v", f, err)
		}
	}
}
