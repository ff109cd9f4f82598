//go:build unix

package chat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistoryFileMode: the line history is created 0600, and a 0644 one
// is tightened, also when the editor rewrites it because it is longer than
// the history limit. The chat runs in a child on a pty (startTerminal), as
// a user runs it.
func TestHistoryFileMode(t *testing.T) {
	long := strings.Repeat("where is my order?\n", 1500)
	for name, content := range map[string]*string{"fresh": nil, "short 0644": new("hello\n"), "long 0644": &long} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "history")
			if content != nil {
				if err := os.WriteFile(path, []byte(*content), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			term := startTerminal(t, dir)
			term.expect("> ")
			term.send("mode check\r")
			term.expect("echo: mode check")
			term.expect("> ")
			term.send("/exit\r")
			term.expect("HELPER-EXIT")
			if err := term.wait(); err != nil {
				t.Fatalf("chat exited with %v", err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if m := fi.Mode().Perm(); m != 0o600 {
				t.Errorf("history mode %o, want 600", m)
			}
		})
	}
}
