package testkit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBinary builds a package once however many tests ask for it, and
// Remove deletes the build.
func TestBinary(t *testing.T) {
	b := &Binary{Pkg: "./testdata/hello"}
	path := b.Path(t)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(strings.TrimSuffix(path, ".exe"), "hello") {
		t.Errorf("binary %s is not named after its package", path)
	}
	out, err := exec.Command(path).CombinedOutput()
	if err != nil || string(out) != "hello from a built binary\n" {
		t.Fatalf("running the binary: %q, %v", out, err)
	}
	if again := b.Path(t); again != path {
		t.Errorf("second Path = %s, want %s", again, path)
	}
	if again, err := os.Stat(path); err != nil || !again.ModTime().Equal(info.ModTime()) {
		t.Errorf("the second Path rebuilt the binary")
	}
	b.Remove()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("after Remove: %v, want the binary gone", err)
	}
}

func TestBinaryBuildFailure(t *testing.T) {
	b := &Binary{Pkg: "./testdata/no-such-package"}
	t.Cleanup(b.Remove)
	for range 2 { // the failure is kept: no second build
		msg := failure(t, func(tb testing.TB) { b.Path(tb) })
		if !strings.Contains(msg, "building ./testdata/no-such-package: go build") {
			t.Errorf("failure %q", msg)
		}
	}
}
