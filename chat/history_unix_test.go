//go:build unix

package chat

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// TestHistoryFileMode: the line history is created 0600, and a 0644 one
// is tightened, also when readline rewrites it because it is longer than
// the history limit.
func TestHistoryFileMode(t *testing.T) {
	_, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer tty.Close()
	dir := t.TempDir()
	long := strings.Repeat("where is my order?\n", 1500)
	for name, content := range map[string]*string{"fresh": nil, "short 0644": new("hello\n"), "long 0644": &long} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
			if content != nil {
				if err := os.WriteFile(path, []byte(*content), 0o644); err != nil {
					t.Fatal(err)
				}
				os.Chmod(path, 0o644)
			}
			src, err := newReadlineSource(tty, io.Discard, io.Discard, path)
			if err != nil {
				t.Fatal(err)
			}
			src.close()
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
