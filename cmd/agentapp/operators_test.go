package main

import (
	"strings"
	"testing"
)

// --operator NAME:TOKEN is read, and a value without a token, or a name
// or token given twice, is refused without echoing the token.
func TestParseOperators(t *testing.T) {
	ops, err := parseOperators([]string{"ana:tok-a", "Bo Chen:tok-b"})
	if err != nil || len(ops) != 2 || ops[1].Name != "Bo Chen" || ops[1].Token != "tok-b" {
		t.Fatalf("%+v, %v", ops, err)
	}
	for _, bad := range [][]string{{"ana"}, {":tok"}, {"ana:tok-a", "ana:tok-c"}, {"ana:tok-a", "bo:tok-a"}} {
		_, err := parseOperators(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "tok-") {
			t.Errorf("%q: the error shows the token: %v", bad, err)
		}
	}
}
