package testkit

import (
	"fmt"
	"runtime"
	"testing"
)

// fatalRecorder is a testing.TB whose Fatalf records the failure and ends
// the goroutine, as the real one does, without failing the test: so that a
// helper's failure can itself be checked.
type fatalRecorder struct {
	testing.TB
	failure string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// failure runs f on a goroutine of its own with a fatalRecorder and
// returns the failure f reported ("" if none).
func failure(t *testing.T, f func(tb testing.TB)) string {
	t.Helper()
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failure
}
