package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Binary is a Go main package that tests run as a subprocess, built on
// first use and at most once per test process: building and linking takes
// seconds, and every test that runs the binary shares the one build. A
// test run that needs none of the package's binaries (go test -run
// SomeOtherTest) builds nothing.
//
// Declare one as a package-level variable of the test package and call
// Remove from its TestMain after m.Run, to delete the build:
//
//	var server = &testkit.Binary{Pkg: "./internal/testserver"}
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		server.Remove()
//		os.Exit(code)
//	}
type Binary struct {
	// Pkg is the package to build, as go build takes it: an import path,
	// or a directory relative to the test's package (the test's working
	// directory).
	Pkg string

	once sync.Once
	dir  string
	path string
	err  error
}

// Path returns the path of the built binary, building it first if no test
// has yet. A failed build fails the calling test, with the compiler's
// output, and every later one.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(b.build)
	if b.err != nil {
		t.Fatalf("building %s: %v", b.Pkg, b.err)
	}
	return b.path
}

func (b *Binary) build() {
	b.dir, b.err = os.MkdirTemp("", "testkit-bin-")
	if b.err != nil {
		return
	}
	name := filepath.Base(b.Pkg)
	if name == "." || name == string(filepath.Separator) {
		if wd, err := os.Getwd(); err == nil {
			name = filepath.Base(wd)
		}
	}
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	path := filepath.Join(b.dir, name)
	if out, err := exec.Command("go", "build", "-o", path, b.Pkg).CombinedOutput(); err != nil {
		b.err = fmt.Errorf("go build: %v\n%s", err, out)
		return
	}
	b.path = path
}

// Remove deletes the build, if there was one. Call it once the tests have
// run, from TestMain.
func (b *Binary) Remove() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}
