package testkit

// RepeatReader reads Data over and over, without end: the input of a
// benchmark that frames or decodes a stream without the cost of a pipe or
// of rebuilding the input. Data must not be empty.
type RepeatReader struct {
	Data []byte
	off  int
}

// Read fills p from Data, wrapping around at its end. It never fails.
func (r *RepeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.Data[r.off:])
		n += k
		r.off = (r.off + k) % len(r.Data)
	}
	return n, nil
}
