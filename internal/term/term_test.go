package term

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestIsTerminalRefusesNonTerminals(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	closed, err := os.CreateTemp(t.TempDir(), "closed")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	var nilFile *os.File
	for name, v := range map[string]any{
		"regular file": f,
		"pipe (read)":  pr,
		"pipe (write)": pw,
		"closed file":  closed,
		"nil *os.File": nilFile,
		"nil":          nil,
		"bytes.Buffer": &bytes.Buffer{},
		"a string":     os.Stdin.Name(),
	} {
		if IsTerminal(v) {
			t.Errorf("IsTerminal(%s) = true", name)
		}
	}
	if null, err := os.Open(os.DevNull); err == nil {
		defer null.Close()
		if IsTerminal(null) {
			t.Errorf("IsTerminal(%s) = true; it is a character device, not a terminal", os.DevNull)
		}
	}
}
