package mcpconfig

import (
	"reflect"
	"strings"
	"testing"
)

func TestSamplingAndRootsFields(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "WORK" {
			return "/srv/work", true
		}
		return "", false
	}
	got, err := parseConfig("agentapp.json", []byte(`{"mcpServers": {
		"a": {"command": "x", "sampling": "allow", "roots": ["${WORK}", "/tmp"]},
		"b": {"command": "x", "sampling": "deny", "roots": []},
		"c": {"command": "x"}
	}}`), &LoadOptions{LookupEnv: env})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Sampling != SamplingAllow || !reflect.DeepEqual(got[0].Roots, []string{"/srv/work", "/tmp"}) {
		t.Errorf("a: %+v", got[0])
	}
	// An empty list is kept apart from no list: none, not the default.
	if got[1].Sampling != SamplingDeny || got[1].Roots == nil || len(got[1].Roots) != 0 {
		t.Errorf("b: sampling %q roots %#v", got[1].Sampling, got[1].Roots)
	}
	if got[2].Sampling != "" || got[2].Roots != nil {
		t.Errorf("c: sampling %q roots %#v", got[2].Sampling, got[2].Roots)
	}
	for _, c := range []struct{ json, want string }{
		{`{"mcpServers": {"a": {"command": "x", "sampling": "sometimes"}}}`, `field "sampling": want "ask"`},
		{`{"mcpServers": {"a": {"command": "x", "sampling": true}}}`, `field "sampling": want a string`},
		{`{"mcpServers": {"a": {"command": "x", "roots": "/tmp"}}}`, `field "roots": want a list of strings`},
		{`{"mcpServers": {"a": {"command": "x", "roots": [""]}}}`, `entry 1 is empty`},
		{`{"mcpServers": {"a": {"command": "x", "roots": ["${NOPE}"]}}}`, `NOPE`},
	} {
		_, err := parseConfig("agentapp.json", []byte(c.json), &LoadOptions{LookupEnv: env})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.json, err, c.want)
		}
	}
}
