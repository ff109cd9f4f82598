package private

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestCreateFile: a new file is 0600, an existing 0644 one becomes 0600
// and keeps its content, an owner-only one is left alone.
func TestCreateFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix permission bits")
	}
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh")
	if err := CreateFile(fresh); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, fresh); m != 0o600 {
		t.Errorf("new file: mode %o, want 600", m)
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o644) // whatever the umask
	if err := CreateFile(open); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, open); m != 0o600 {
		t.Errorf("existing 0644 file: mode %o, want 600", m)
	}
	if b, _ := os.ReadFile(open); string(b) != "kept" {
		t.Errorf("content = %q, want it kept", b)
	}
	ro := filepath.Join(dir, "ro")
	os.WriteFile(ro, nil, 0o400)
	os.Chmod(ro, 0o400)
	if err := Restrict(ro); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, ro); m != 0o400 {
		t.Errorf("owner-only file: mode %o, want 400 unchanged", m)
	}
}

// TestRestrict: directories lose group and other bits, a missing path is
// not an error.
func TestRestrict(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix permission bits")
	}
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	if err := Restrict(dir); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("directory: mode %o, want 700", m)
	}
	if err := Restrict(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing path: %v", err)
	}
}
