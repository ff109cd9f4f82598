// Package lineread reads newline-delimited input one line at a time,
// holding no more of a line than a limit.
//
// MCP's stdio transport carries one JSON-RPC message per line, and the
// server, the client bridge and the benchmark harness each read such lines
// from a peer that may write a line of any length. bufio.Reader's
// ReadSlice stops at the end of its buffer and ReadBytes holds a line of
// any length; a Reader holds at most the limit, reads a longer line to its
// end so that the next read starts on the next line, and says how long
// that line was so that the caller can report it. The three readers share
// this one implementation so that they agree on what a line, its ending
// and its length are.
package lineread

import "bufio"

// A Reader reads lines from a bufio.Reader. ReadLine returns each line;
// Len, EndLen, TooLong, Head and Tail describe the last line it read.
// They are methods rather than a result struct so that ReadLine, which
// runs for every message, returns only what fits in registers.
type Reader struct {
	br    *bufio.Reader
	limit int
	keep  int

	n, endLen  int    // the last line's length without its ending, and its ending's
	tooLong    bool   // the last line was longer than limit
	head, tail []byte // the first and last bytes of a line longer than limit
}

// NewReader returns a Reader of the lines of br that holds no line longer
// than limit bytes, not counting its ending. Of a longer line it keeps up
// to keep bytes of each end, for Head and Tail; keep may be 0.
func NewReader(br *bufio.Reader, limit, keep int) *Reader {
	return &Reader{br: br, limit: limit, keep: keep}
}

// ReadLine reads the next line and returns it without its ending. A line
// ends at the first "\n" or at the end of the input, and its ending, "\n"
// or "\r\n" (or a "\r" just before the end of the input), is not part of
// it. The line may alias br's buffer, and is then valid only until the
// next read from br: a caller that keeps it copies it. A line within the
// limit that was whole in br's buffer is returned without allocating.
//
// A line longer than the limit is read to its end and ReadLine returns
// nil for it; TooLong then reports true, Len gives the line's length and
// Head and Tail its ends. ReadLine keeps no more than limit+1 bytes of
// such a line, and 2*keep+1 for its ends.
//
// err is the error br gave at the end of the line, if any: the last line
// of the input, when it has no "\n", comes with io.EOF, and once nothing
// is left ReadLine returns an empty line and io.EOF.
func (r *Reader) ReadLine() (line []byte, err error) {
	frag, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return r.readLong(frag)
	}
	line, r.endLen = trimEnd(frag)
	r.n = len(line)
	if r.tooLong = len(line) > r.limit; r.tooLong {
		r.head = appendHead(r.head[:0], line, r.keep)
		r.tail = appendTail(r.tail[:0], line, r.keep)
		return nil, err
	}
	return line, err
}

// Len returns the length in bytes of the last line read, without its
// ending, also when it was longer than the limit.
func (r *Reader) Len() int { return r.n }

// EndLen returns the length of the last line's ending: 2 for "\r\n", 1
// for "\n" or for a "\r" that ends the input, 0 when the input ends the
// line.
func (r *Reader) EndLen() int { return r.endLen }

// TooLong reports whether the last line read was longer than the limit.
func (r *Reader) TooLong() bool { return r.tooLong }

// Head returns the first bytes of the last line read when it was longer
// than the limit, as many as the Reader keeps (all of them if the line is
// shorter than that), for a caller that shows a preview or looks for an
// id; otherwise nil. It is valid until the next ReadLine.
func (r *Reader) Head() []byte {
	if !r.tooLong {
		return nil
	}
	return r.head
}

// Tail is Head for the last bytes of the line.
func (r *Reader) Tail() []byte {
	if !r.tooLong {
		return nil
	}
	return r.tail
}

// trimEnd returns the line in frag, the last fragment of a line, without
// its ending, and the length of the ending.
func trimEnd(frag []byte) (line []byte, endLen int) {
	if n := len(frag); n > 0 && frag[n-1] == '\n' {
		frag, endLen = frag[:n-1], 1
	}
	if n := len(frag); n > 0 && frag[n-1] == '\r' {
		frag, endLen = frag[:n-1], endLen+1
	}
	return frag, endLen
}

// readLong is ReadLine for a line longer than br's buffer, whose first
// fragment, a full buffer, is frag.
func (r *Reader) readLong(frag []byte) ([]byte, error) {
	var (
		line   []byte // the line so far, while it may be within the limit
		n      int    // the length of the line so far, its '\r' included
		nl, cr bool   // the line ended with '\n'; its last byte so far is '\r'
		err    = bufio.ErrBufferFull
	)
	r.tooLong = false
	r.head, r.tail = r.head[:0], r.tail[:0]
	for {
		if k := len(frag); k > 0 && frag[k-1] == '\n' {
			frag, nl = frag[:k-1], true
		}
		if k := len(frag); k > 0 {
			cr = frag[k-1] == '\r'
		}
		n += len(frag)
		switch {
		case r.tooLong && r.keep > 0:
			r.head = appendHead(r.head, frag, r.keep)
			r.tail = appendTail(r.tail, frag, r.keep+1)
		case r.tooLong:
		case n <= r.limit+1: // one byte over may be the '\r' of "\r\n"
			line = append(line, frag...)
		default:
			r.tooLong = true
			if r.keep > 0 {
				r.head = appendHead(appendHead(r.head, line, r.keep), frag, r.keep)
				r.tail = appendTail(appendTail(r.tail, line, r.keep+1), frag, r.keep+1)
			}
			line = nil
		}
		if err != bufio.ErrBufferFull {
			break
		}
		frag, err = r.br.ReadSlice('\n')
	}
	r.n, r.endLen = n, 0
	if nl {
		r.endLen = 1
	}
	if cr {
		r.n--
		r.endLen++
	}
	if !r.tooLong {
		line = line[:r.n]
		if len(line) <= r.limit {
			return line, err
		}
		// The byte over the limit was not a '\r'.
		r.tooLong = true
		r.head = appendHead(r.head, line, r.keep)
		r.tail = appendTail(r.tail, line, r.keep)
		return nil, err
	}
	if cr && len(r.tail) > 0 {
		r.tail = r.tail[:len(r.tail)-1]
	}
	r.tail = r.tail[max(0, len(r.tail)-r.keep):]
	r.head = r.head[:min(len(r.head), r.n)]
	return nil, err
}

// appendHead appends to head the start of b, up to n bytes of head in
// all.
func appendHead(head, b []byte, n int) []byte {
	if k := n - len(head); k > 0 {
		head = append(head, b[:min(k, len(b))]...)
	}
	return head
}

// appendTail appends b to tail and keeps the last n bytes of the two.
func appendTail(tail, b []byte, n int) []byte {
	if len(b) >= n {
		return append(tail[:0], b[len(b)-n:]...)
	}
	if over := len(tail) + len(b) - n; over > 0 {
		tail = tail[:copy(tail, tail[over:])]
	}
	return append(tail, b...)
}
