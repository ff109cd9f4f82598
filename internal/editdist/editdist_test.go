package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"call", "call", 0},
		{"cal", "call", 1},
		{"comand", "command", 1},
		{"comamnd", "command", 1}, // a swap is one edit
		{"getOrderStatu", "getOrderStatus", 1},
		{"kitten", "sitting", 3},
		{"订单", "订单号", 1}, // runes, not bytes
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}
