package testkit

import "testing"

func TestRepeatReader(t *testing.T) {
	r := &RepeatReader{Data: []byte("abc")}
	p := make([]byte, 7)
	if n, err := r.Read(p); n != 7 || err != nil || string(p) != "abcabca" {
		t.Fatalf("Read = %d, %v, %q", n, err, p)
	}
	if n, _ := r.Read(p[:2]); string(p[:n]) != "bc" {
		t.Errorf("the next Read continues at %q, want bc", p[:n])
	}
}
