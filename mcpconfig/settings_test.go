package mcpconfig

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMaxOutputTokens(t *testing.T) {
	opts := &LoadOptions{LookupEnv: lookupIn(nil)}
	got, err := parseConfig("agentapp.json", []byte(`{"mcpServers": {
		"a": {"command": "x"},
		"b": {"command": "x", "maxOutputTokens": 4000}}}`), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].MaxOutputTokens != 0 || got[1].MaxOutputTokens != 4000 {
		t.Errorf("maxOutputTokens: a %d, b %d; want 0 and 4000", got[0].MaxOutputTokens, got[1].MaxOutputTokens)
	}
	for _, bad := range []string{`0`, `-5`, `1.5`, `"4000"`, `3000000`} {
		_, err := parseConfig("agentapp.json", []byte(`{"mcpServers": {"a": {"command": "x", "maxOutputTokens": `+bad+`}}}`), opts)
		if err == nil {
			t.Errorf("maxOutputTokens %s: no error", bad)
			continue
		}
		wantErr(t, err, `field "maxOutputTokens"`, "whole number of tokens", bad)
	}
}

func TestLoadSettings(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "agentapp.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if s, err := LoadSettings(filepath.Join(dir, "none.json")); err != nil || s.ToolSearch != "" {
		t.Errorf("a missing file: %+v, %v", s, err)
	}
	if s, err := LoadSettings(write(`{"toolSearch": "on", "mcpServers": {}}`)); err != nil || s.ToolSearch != "on" {
		t.Errorf("toolSearch on: %+v, %v", s, err)
	}
	if s, err := LoadSettings(write(`{"mcpServers": {}}`)); err != nil || s.ToolSearch != "" {
		t.Errorf("no toolSearch: %+v, %v", s, err)
	}
	_, err := LoadSettings(write(`{"toolSearch": "always"}`))
	if err == nil {
		t.Fatal("toolSearch always: no error")
	}
	wantErr(t, err, `field "toolSearch"`, `"auto"`, `"always"`)
}
