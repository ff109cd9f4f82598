package mcpclient

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var testServer struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// testServerPath builds mcpclient/internal/testserver once per test binary.
func testServerPath(t testing.TB) string {
	t.Helper()
	testServer.once.Do(func() {
		testServer.dir, testServer.err = os.MkdirTemp("", "mcpclient-testserver-")
		if testServer.err != nil {
			return
		}
		testServer.path = filepath.Join(testServer.dir, "testserver")
		out, err := exec.Command("go", "build", "-o", testServer.path, "./internal/testserver").CombinedOutput()
		if err != nil {
			testServer.err = &buildError{err: err, out: string(out)}
		}
	})
	if testServer.err != nil {
		t.Fatalf("building the test server: %v", testServer.err)
	}
	return testServer.path
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

func removeTestServer() {
	if testServer.dir != "" {
		_ = os.RemoveAll(testServer.dir)
	}
}

// wrapperPath is a shell script that runs its arguments as a child, like
// npx does, making the real server a grandchild of the bridge.
func wrapperPath(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs("testdata/client/wrapper.sh")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lineSink is a stderr echo target that lets a test wait for a line.
type lineSink struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func newLineSink() *lineSink { return &lineSink{lines: make(chan string, 1000)} }

func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	for {
		i := bytes.IndexByte(s.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		line := string(s.buf.Next(i + 1))
		select {
		case s.lines <- strings.TrimSuffix(line, "\n"):
		default:
		}
	}
	return len(p), nil
}

// waitFor waits for a line containing substr; the bound is a failure
// guard, not a timing assertion.
func (s *lineSink) waitFor(t testing.TB, substr string) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case l := <-s.lines:
			if strings.Contains(l, substr) {
				return
			}
		case <-deadline:
			t.Fatalf("no stderr line containing %q", substr)
		}
	}
}
