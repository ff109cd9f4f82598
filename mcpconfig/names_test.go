package mcpconfig

import (
	"strings"
	"testing"
)

func TestExposedName(t *testing.T) {
	for _, c := range []struct {
		prefix, in string
		mapped     bool
		start      string
	}{
		{"", "get_order-2", false, "get_order-2"},
		{"x_", "get", false, "x_get"},
		{"", strings.Repeat("a", 64), false, strings.Repeat("a", 64)},
		{"", strings.Repeat("a", 65), true, strings.Repeat("a", 55) + "_"},
		{"pre_", strings.Repeat("a", 61), true, "pre_" + strings.Repeat("a", 51) + "_"},
		{"", "files.read", true, "files_read_"},
		{"", "日本", true, "___"},
		{"", "a\x1b[31m\n", true, "a__31m__"},
		{"", "\xff", true, "__"},
	} {
		got, mapped := ExposedName(c.prefix, c.in)
		if mapped != c.mapped || !strings.HasPrefix(got, c.start) || !ValidToolName(got) {
			t.Errorf("ExposedName(%q, %q) = %q, %v; want %v, starting %q, valid", c.prefix, c.in, got, mapped, c.mapped, c.start)
		}
		if again, _ := ExposedName(c.prefix, c.in); again != got {
			t.Errorf("ExposedName(%q) is not deterministic: %q, %q", c.in, got, again)
		}
	}
	space, _ := ExposedName("", "a b")
	if dot, _ := ExposedName("", "a.b"); space == dot {
		t.Errorf("a b and a.b both map to %q", space)
	}
	if got, mapped := ExposedName("p_", ""); got != "" || mapped {
		t.Errorf("empty name: %q, %v", got, mapped)
	}
}
