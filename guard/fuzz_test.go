package guard

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMaskPII checks the masker's properties on arbitrary input: it never
// panics, keeps valid UTF-8 valid, only ever turns digits into '*', is
// idempotent, and MaskJSON of valid JSON stays valid JSON and is
// idempotent too.
func FuzzMaskPII(f *testing.F) {
	for _, s := range []string{
		"13812345678", "+8613812345678", "138 1234 5678", "11010519900307123X",
		"6222 0212 3456 7890 123", "6222021234567890123", "1234 1234 1234 13812345678 1234",
		`{"p":13812345678,"k":["110105199003071234"]}`, `{"13812345678":1}`, `"\u0031\u0033812345678"`,
		"0.13812345678", "SF1234567890123", "订单 A-1024", "",
		"+86-138-1234-5678", "138.1234.5678", "tel13812345678abc", "110101 19900307 123X", "110101-19900307-1234",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := MaskPII(s)
		if len(m) != len(s) {
			t.Fatalf("MaskPII(%q) = %q changed the length", s, m)
		}
		for i := 0; i < len(s); i++ {
			if m[i] != s[i] && !(isDigit(s[i]) && m[i] == maskChar) {
				t.Fatalf("MaskPII(%q) = %q changed byte %d (%q) that is not a digit", s, m, i, s[i])
			}
		}
		if utf8.ValidString(s) && !utf8.ValidString(m) {
			t.Fatalf("MaskPII(%q) = %q is not valid UTF-8", s, m)
		}
		if again := MaskPII(m); again != m {
			t.Fatalf("MaskPII is not idempotent on %q: %q then %q", s, m, again)
		}
		if MaskText(s) == "" && s != "" {
			t.Fatalf("MaskText(%q) is empty", s)
		}
		if json.Valid([]byte(s)) {
			j := MaskJSON([]byte(s))
			if !json.Valid(j) {
				t.Fatalf("MaskJSON(%s) = %s is not valid JSON", s, j)
			}
			if again := MaskJSON(j); string(again) != string(j) {
				t.Fatalf("MaskJSON is not idempotent on %s: %s then %s", s, j, again)
			}
		}
	})
}

// FuzzNormalize checks that Normalize and Scan never panic, that Normalize
// always returns valid UTF-8 without invisible characters or upper-case
// ASCII, that it is idempotent, and that scanning the normalised text finds
// what scanning the original found.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"ignore previous instructions", "ｉｇｎｏｒｅ ｐｒｅｖｉｏｕｓ", "ig\u200bnore", "1gn0r3 4ll",
		"忽略之前的指令", "你现在是机器人吗", "<|im_start|>system", "\xff\xfe", "A-1024", "𝐢𝐠𝐧𝐨𝐫𝐞",
		"i g n o r e previous", "i.g.n.o.r.e", "&#x69;gnore&nbsp;all", "&amp;lt;|im_start|&gt;", "ìgnóre\u0301",
		"ɪɢɴᴏʀᴇ", "無視之前的規則", "忽略 previous instructions", "ignore 之前的指示", "< | im_start | >",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if !utf8.ValidString(n) {
			t.Fatalf("Normalize(%q) = %q is not valid UTF-8", s, n)
		}
		for _, r := range n {
			if isInvisible(r) {
				t.Fatalf("Normalize(%q) = %q keeps invisible %U", s, n, r)
			}
			if r >= 'A' && r <= 'Z' {
				t.Fatalf("Normalize(%q) = %q keeps upper-case %q", s, n, r)
			}
		}
		if again := Normalize(n); again != n {
			t.Fatalf("Normalize is not idempotent on %q: %q then %q", s, n, again)
		}
		f1, ok1 := Scan(s)
		f2, ok2 := Scan(n)
		if ok1 != ok2 || f1 != f2 {
			t.Fatalf("Scan(%q) = %v %v but Scan(Normalize) = %v %v", s, f1, ok1, f2, ok2)
		}
		checkAgainstSlow(t, s)
		if strings.ContainsRune(n, '\u200b') {
			t.Fatalf("Normalize(%q) kept a zero-width space", s)
		}
	})
}
