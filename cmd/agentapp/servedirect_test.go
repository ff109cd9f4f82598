package main

import (
	"strings"
	"testing"
)

// TestDirectCallsOff maps AGENTAPP_DIRECT_CALLS to the server's switch and
// refuses a value it does not know, naming the variable and the choices.
func TestDirectCallsOff(t *testing.T) {
	for v, want := range map[string]bool{"": false, "on": false, "off": true} {
		got, err := directCallsOff(func(k string) string {
			if k == directCallsEnv {
				return v
			}
			return ""
		})
		if err != nil || got != want {
			t.Errorf("%s=%q: off %v, %v; want %v", directCallsEnv, v, got, err, want)
		}
	}
	_, err := directCallsOff(func(string) string { return "no" })
	if err == nil || !strings.Contains(err.Error(), directCallsEnv) || !strings.Contains(err.Error(), "write off") {
		t.Errorf("an unknown value: error %v, want one naming %s and the choices", err, directCallsEnv)
	}
}
