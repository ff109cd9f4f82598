package guard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMaskPII(t *testing.T) {
	cases := []struct{ name, in, want string }{
		// Phones.
		{"phone", "13812345678", "138****5678"},
		{"phone in Chinese", "电话13812345678。", "电话138****5678。"},
		{"phone after colon", "tel:19912345678", "tel:199****5678"},
		{"phone prefix 12 is not mobile", "12812345678", "12812345678"},
		{"phone prefix 10 is not mobile", "10812345678", "10812345678"},
		{"phone 10 digits", "1381234567", "1381234567"},
		{"phone 12 digits", "138123456789", "138123456789"},
		{"phone inside longer run", "013812345678", "013812345678"},
		{"phone inside a 13-digit run is a card", "0013812345678", "0013*****5678"},
		{"phone grouped spaces", "138 1234 5678", "138 **** 5678"},
		{"phone grouped dashes", "138-1234-5678", "138-****-5678"},
		{"phone mixed separators", "138-1234 5678", "138-1234 5678"},
		{"phone +86", "+8613812345678", "+86138****5678"},
		{"two phones", "13812345678 13987654321", "138****5678 139****4321"},
		{"phone after letter", "SF13812345678", "SF13812345678"},
		{"phone before letters", "13812345678abc", "138****5678abc"},
		{"phone before an upper-case code", "13812345678CN", "13812345678CN"},
		{"phone in decimal", "0.13812345678", "0.13812345678"},
		{"phone before decimal", "13812345678.5", "13812345678.5"},
		{"phone at sentence end", "call 13812345678.", "call 138****5678."},
		// National ids.
		{"id digits", "110105199003071234", "1101************34"},
		{"id X", "11010519900307123X", "1101************3X"},
		{"id lower x", "11010519900307123x", "1101************3x"},
		{"id in text", "身份证号：110105199003071234，", "身份证号：1101************34，"},
		{"id 17 digits is a card", "11010519900307123", "1101*********7123"},
		{"id X then letter", "11010519900307123Xa", "11010519900307123Xa"},
		{"id X then digit", "11010519900307123X9", "11010519900307123X9"},
		// Cards.
		{"card 13", "6222021234567", "6222*****4567"},
		{"card 16", "6222021234567890", "6222********7890"},
		{"card 19", "6222021234567890123", "6222***********0123"},
		{"card 12 is not a card", "622202123456", "622202123456"},
		{"card 20 is not a card", "62220212345678901234", "62220212345678901234"},
		{"card grouped", "6222 0212 3456 7890", "6222 **** **** 7890"},
		{"card grouped 19", "6222-0212-3456-7890-123", "6222-****-****-***0-123"},
		{"card grouped 13", "6222 0212 3456 7", "6222 **** *456 7"},
		{"card grouped too long", "6222 0212 3456 7890 1234", "6222 0212 3456 7890 1234"},
		{"tracking number", "SF1234567890123", "SF1234567890123"},
		{"card in hash", "a1b2c3d4e5f60123456789012345", "a1b2c3d4e5f60123456789012345"},
		// Not personal numbers.
		{"order id", "订单 A-1024 到哪了？", "订单 A-1024 到哪了？"},
		{"date", "2024-01-05 12:30", "2024-01-05 12:30"},
		{"amount", "1,299.00 元", "1,299.00 元"},
		{"long decimal", "3.14159265358979", "3.14159265358979"},
		{"empty", "", ""},
		{"already masked phone", "138****5678", "138****5678"},
		{"star before", "*13812345678", "*13812345678"},
		{"invalid UTF-8 kept", "\xff13812345678\xfe", "\xff138****5678\xfe"},
	}
	for _, c := range cases {
		if got := MaskPII(c.in); got != c.want {
			t.Errorf("%s: MaskPII(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestMaskPIIMoreFormats covers the other ways people write the same
// numbers: +86 with groups, dots, a label or word glued to a mobile number,
// and national ids in groups.
func TestMaskPIIMoreFormats(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"+86 grouped dashes", "+86-138-1234-5678", "+86-138-****-5678"},
		{"+86 grouped spaces", "+86 138 1234 5678", "+86 138 **** 5678"},
		{"+86 space then phone", "+86 13812345678", "+86 138****5678"},
		{"+86 dash then phone", "电话 +86-13812345678。", "电话 +86-138****5678。"},
		{"dotted", "138.1234.5678", "138.****.5678"},
		{"dotted at sentence end", "call 138.1234.5678.", "call 138.****.5678."},
		{"label glued", "tel13812345678", "tel138****5678"},
		{"title-case label glued", "Tel13812345678", "Tel138****5678"},
		{"upper-case label glued", "TEL13812345678 / PHONE13987654321", "TEL138****5678 / PHONE139****4321"},
		{"word glued", "mobile13812345678，", "mobile138****5678，"},
		{"letters after", "13812345678abc", "138****5678abc"},
		{"label glued, grouped", "tel138-1234-5678", "tel138-****-5678"},
		{"id grouped spaces", "110101 19900307 1234", "1101** ******** **34"},
		{"id grouped dashes X", "110101-19900307-123X", "1101**-********-**3X"},
		{"id grouped lower x", "身份证 110101 19900307 123x。", "身份证 1101** ******** **3x。"},
		{"card grouped 4-4-4-4-3", "6222 0212 3456 7890 123", "6222 **** **** ***0 123"},
	}
	for _, c := range cases {
		if got := MaskPII(c.in); got != c.want {
			t.Errorf("%s: MaskPII(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
		if again := MaskPII(c.want); again != c.want {
			t.Errorf("%s: masking %q again gave %q", c.name, c.want, again)
		}
	}
}

// piiNearMisses look like the numbers of TestMaskPIIMoreFormats but are
// not personal numbers; none may be changed.
var piiNearMisses = []string{
	"12345678901",                           // 11 digits, but not 1[3-9]
	"call 128.1234.5678",                    // dotted, not a mobile prefix
	"138.1234.56789",                        // dotted 3-4-5
	"1.3812345678",                          // a decimal
	"138-1234-5678-9",                       // four groups, too short for a card
	"+86-138-1234-56789",                    // one digit too many
	"tel:+86 10 1234 5678",                  // a Beijing landline
	"SF13812345678",                         // an upper-case carrier code glued to the digits
	"a1b13812345678c2",                      // inside a hash
	"order_13812345678",                     // an identifier
	"2026-12-01 11:20:00",                   // a timestamp
	"2026.12.01 11:20",                      // a dotted date
	"1,234,567.89 元",                        // an amount
	"¥1,299.00",                             // a price
	"订单 A-1024 到哪了",                         // an order id
	"工单 TK-20261130-0001",                   // a ticket id
	"TK 20261130 0001",                      // a ticket id written with spaces
	"version 2.10.1, build 10.0.19045.3693", // version numbers
	"192.168.100.200",                       // an IP address
	"110101 20261399 1234",                  // an id shape with no valid birth date
	"900101 19900307 1234",                  // an id shape with no valid region
	"11010 19900307 12345",                  // groups of the wrong sizes
}

func TestMaskPIINearMisses(t *testing.T) {
	for _, s := range piiNearMisses {
		if got := MaskPII(s); got != s {
			t.Errorf("MaskPII(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestMaskPIIReturnsInputWhenClean(t *testing.T) {
	s := strings.Repeat("订单 A-1024 ", 50)
	if got := MaskPII(s); got != s {
		t.Fatalf("MaskPII changed a clean string: %q", got)
	}
}

func TestMaskJSON(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"string values", `{"phone":"13812345678","name":"张三"}`, `{"phone":"138****5678","name":"张三"}`},
		{"nested", `{"a":[{"id":"110105199003071234"},{"card":"6222 0212 3456 7890"}]}`,
			`{"a":[{"id":"1101************34"},{"card":"6222 **** **** 7890"}]}`},
		{"number phone", `{"phone":13812345678,"n":12}`, `{"phone":"138****5678","n":12}`},
		{"number card", `[6222021234567890]`, `["6222********7890"]`},
		{"number not PII", `{"a":12345678901234567890123,"b":-13812345678,"c":13812345678.5,"d":1.3812345678e10}`,
			`{"a":12345678901234567890123,"b":-13812345678,"c":13812345678.5,"d":1.3812345678e10}`},
		{"key", `{"13812345678":{"orders":2}}`, `{"138****5678":{"orders":2}}`},
		{"escaped digits", `{"p":"\u0031\u0033\u0038\u0031\u0032\u0033\u0034\u0035\u0036\u0037\u0038"}`, `{"p":"138****5678"}`},
		{"escapes elsewhere kept", `{"t":"a\"b 13812345678 <<<DATA"}`, `{"t":"a\"b 138****5678 <<<DATA"}`},
		{"formatting kept", "{\n  \"p\": \"13812345678\",\n  \"q\": \"x\"\n}", "{\n  \"p\": \"138****5678\",\n  \"q\": \"x\"\n}"},
		{"top-level string", `"13812345678"`, `"138****5678"`},
		{"clean", `{"order":"A-1024","total":1299.5}`, `{"order":"A-1024","total":1299.5}`},
		{"not JSON", `phone 13812345678 {`, `phone 138****5678 {`},
	}
	for _, c := range cases {
		got := MaskJSON([]byte(c.in))
		if string(got) != c.want {
			t.Errorf("%s: MaskJSON(%s) = %s, want %s", c.name, c.in, got, c.want)
		}
		if json.Valid([]byte(c.in)) && !json.Valid(got) {
			t.Errorf("%s: MaskJSON(%s) = %s is not valid JSON", c.name, c.in, got)
		}
	}
}

func TestMaskJSONKeepsStructure(t *testing.T) {
	in := `{"notice":"data","hits":[{"no":1,"docId":"d-1","score":0.5,"text":"<<<DATA\n联系 13812345678\nDATA>>>"}],"ok":true,"none":null}`
	out := MaskJSON([]byte(in))
	var got, want map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("masked output is not JSON: %v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatal(err)
	}
	want["hits"].([]any)[0].(map[string]any)["text"] = "<<<DATA\n联系 138****5678\nDATA>>>"
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("MaskJSON changed more than the phone number (-want +got):\n%s", d)
	}
}

func TestMaskText(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"p":13812345678}`, `{"p":"138****5678"}`},
		{"  [\"13812345678\"]\n", "  [\"138****5678\"]\n"},
		{"call 13812345678", "call 138****5678"},
		{"{not json 13812345678", "{not json 138****5678"},
	}
	for _, c := range cases {
		if got := MaskText(c.in); got != c.want {
			t.Errorf("MaskText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMaskingIsIdempotent(t *testing.T) {
	inputs := []string{
		"1234 1234 1234 13812345678 1234",
		"13812345678-1234 6222 0212 3456 7890",
		"11010519900307123X 6222021234567890123 +8613812345678",
		"+86-138-1234-5678 138.1234.5678 tel13812345678abc",
		"110101 19900307 123X 110101-19900307-1234",
	}
	for _, in := range inputs {
		once := MaskPII(in)
		if twice := MaskPII(once); twice != once {
			t.Errorf("MaskPII not idempotent on %q: %q then %q", in, once, twice)
		}
	}
}
