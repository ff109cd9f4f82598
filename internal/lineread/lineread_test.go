package lineread_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentapp/agentapp/internal/lineread"
)

// result is what one ReadLine returned, in a form that compares with ==.
type result struct {
	text       string
	isNil      bool // Text is nil
	n, endLen  int
	tooLong    bool
	head, tail string
	err        error
}

func (r result) String() string {
	return fmt.Sprintf("{text %q nil %v len %d end %d tooLong %v head %q tail %q err %v}",
		r.text, r.isNil, r.n, r.endLen, r.tooLong, r.head, r.tail, r.err)
}

func readAll(t *testing.T, r io.Reader, size, limit, keep int) []result {
	t.Helper()
	lr := lineread.NewReader(bufio.NewReaderSize(r, size), limit, keep)
	var got []result
	for range 10000 {
		line, err := lr.ReadLine()
		got = append(got, result{string(line), line == nil, lr.Len(), lr.EndLen(), lr.TooLong(), string(lr.Head()), string(lr.Tail()), err})
		if err != nil {
			return got
		}
	}
	t.Fatal("no end of input")
	return nil
}

// reference splits in into lines as bytes.SplitAfter does and applies
// ReadLine's rules to each: the line ending, the limit, Head and Tail.
func reference(in []byte, limit, keep int) []result {
	var want []result
	pieces := bytes.SplitAfter(in, []byte("\n"))
	for i, p := range pieces {
		r := result{}
		if bytes.HasSuffix(p, []byte("\n")) {
			p, r.endLen = p[:len(p)-1], 1
		}
		if bytes.HasSuffix(p, []byte("\r")) {
			p, r.endLen = p[:len(p)-1], r.endLen+1
		}
		r.n = len(p)
		if len(p) > limit {
			r.isNil, r.tooLong = true, true
			k := min(keep, len(p))
			r.head, r.tail = string(p[:k]), string(p[len(p)-k:])
		} else {
			r.text = string(p)
		}
		if i == len(pieces)-1 {
			r.err = io.EOF
		}
		want = append(want, r)
	}
	return want
}

func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		name        string
		in          string
		limit, keep int
		want        []result
	}{
		{"empty input", "", 10, 0, []result{{err: io.EOF}}},
		{"lines", "a\nbc\r\n\n", 10, 0, []result{{text: "a", n: 1, endLen: 1}, {text: "bc", n: 2, endLen: 2}, {endLen: 1}, {err: io.EOF}}},
		{"last line without newline", "a\nbc", 10, 0, []result{{text: "a", n: 1, endLen: 1}, {text: "bc", n: 2, err: io.EOF}}},
		{"carriage return at the end", "a\r", 10, 0, []result{{text: "a", n: 1, endLen: 1, err: io.EOF}}},
		{"carriage returns inside", "a\rb\r\r\n", 10, 0, []result{{text: "a\rb\r", n: 4, endLen: 2}, {err: io.EOF}}},
		{"at the limit", "0123456789\n", 10, 0, []result{{text: "0123456789", n: 10, endLen: 1}, {err: io.EOF}}},
		{"at the limit with CRLF", "0123456789\r\n", 10, 0, []result{{text: "0123456789", n: 10, endLen: 2}, {err: io.EOF}}},
		{"one over", "0123456789A\r\nok\n", 10, 3, []result{
			{isNil: true, n: 11, endLen: 2, tooLong: true, head: "012", tail: "89A"}, {text: "ok", n: 2, endLen: 1}, {err: io.EOF}}},
		{"limit zero", "\r\nx\n", 0, 0, []result{{endLen: 2}, {isNil: true, n: 1, endLen: 1, tooLong: true}, {err: io.EOF}}},
		{"over the buffer, within the limit", long + "\r\n" + long, 200, 0, []result{
			{text: long, n: 100, endLen: 2}, {text: long, n: 100, err: io.EOF}}},
		{"one over, past the buffer", strings.Repeat("y", 20) + "z\n", 20, 2, []result{
			{isNil: true, n: 21, endLen: 1, tooLong: true, head: "yy", tail: "yz"}, {err: io.EOF}}},
		{"at the limit with CRLF, past the buffer", strings.Repeat("y", 20) + "\r\n", 20, 2, []result{
			{text: strings.Repeat("y", 20), n: 20, endLen: 2}, {err: io.EOF}}},
		{"over the buffer and the limit", "ab" + long + "yz\r\nnext", 50, 4, []result{
			{isNil: true, n: 104, endLen: 2, tooLong: true, head: "abxx", tail: "xxyz"}, {text: "next", n: 4, err: io.EOF}}},
		{"over the limit, shorter than keep", "ab" + long + "yz\r\n", 50, 500, []result{
			{isNil: true, n: 104, endLen: 2, tooLong: true, head: "ab" + long + "yz", tail: "ab" + long + "yz"}, {err: io.EOF}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in)), iotest.DataErrReader(strings.NewReader(tc.in))} {
				got := readAll(t, r, 16, tc.limit, tc.keep)
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("%T:\n got %v\nwant %v", r, got, tc.want)
				}
				if ref := reference([]byte(tc.in), tc.limit, tc.keep); fmt.Sprint(ref) != fmt.Sprint(tc.want) {
					t.Errorf("the reference disagrees with the table:\n%v", ref)
				}
			}
		})
	}
}

// TestReadLineError checks that an error other than the end of the input
// comes with the part of the line read before it.
func TestReadLineError(t *testing.T) {
	boom := errors.New("boom")
	lr := lineread.NewReader(bufio.NewReaderSize(io.MultiReader(strings.NewReader("ok\npart"), iotest.ErrReader(boom)), 16), 10, 0)
	if line, err := lr.ReadLine(); string(line) != "ok" || err != nil {
		t.Fatalf("first line %q, %v", line, err)
	}
	if line, err := lr.ReadLine(); string(line) != "part" || err != boom {
		t.Fatalf("second line %q, %v; want \"part\", boom", line, err)
	}
}

// TestReadLineNoAllocs checks that a line whole in the buffer is returned
// without allocating.
func TestReadLineNoAllocs(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\r\n")
	lr := lineread.NewReader(bufio.NewReaderSize(bytes.NewReader(bytes.Repeat(line, 200)), 4096), 1<<20, 256)
	allocs := testing.AllocsPerRun(100, func() {
		if got, err := lr.ReadLine(); err != nil || len(got) != len(line)-2 {
			t.Fatalf("%q %v", got, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per line, want 0", allocs)
	}
}

// FuzzReadLine holds ReadLine to the reference on arbitrary input, buffer
// sizes, limits and kept lengths, with the input arriving whole, a byte at
// a time, or with io.EOF on its last bytes.
func FuzzReadLine(f *testing.F) {
	for _, s := range []string{
		"", "\n", "\r", "\r\n", "\n\n", "a", "a\n", "a\r\n", "a\r", "a\rb", "a\r\r\n", "\r\r\r",
		`{"jsonrpc":"2.0","id":1}` + "\r\n" + `{"jsonrpc":"2.0","id":2}` + "\n",
		strings.Repeat("x", 40) + "\r\n" + strings.Repeat("y", 17) + "\r" + strings.Repeat("z", 15) + "\n",
		strings.Repeat("0123456789abcdef", 5) + "\r",
	} {
		f.Add([]byte(s), uint8(0), uint8(16), uint8(4), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, size, limit, keep, how uint8) {
		var r io.Reader = bytes.NewReader(in)
		switch how % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.DataErrReader(r)
		}
		got := readAll(t, r, 16+int(size%48), int(limit), int(keep%40))
		if want := reference(in, int(limit), int(keep%40)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("ReadLine(%q, limit %d, keep %d, buffer %d):\n got %v\nwant %v", in, limit, keep%40, 16+size%48, got, want)
		}
	})
}

func BenchmarkReadLine(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}` + "\n")
	data := bytes.Repeat(line, 512)
	r := bytes.NewReader(data)
	br := bufio.NewReaderSize(r, 64<<10)
	lr := lineread.NewReader(br, 1<<20, 0)
	b.ReportAllocs()
	for b.Loop() {
		got, err := lr.ReadLine()
		if err == io.EOF {
			r.Reset(data)
			br.Reset(r)
			continue
		}
		if err != nil || len(got) != len(line)-1 {
			b.Fatalf("%q %v", got, err)
		}
	}
}
