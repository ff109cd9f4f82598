package mcpserver

import (
	"sync"
	"sync/atomic"
	"time"
)

// warmWorkers runs tool calls on a few long-lived goroutines instead of on
// the goroutine the SDK starts for each request.
//
// A fresh goroutine starts with a small stack; a tool call (JSON decoding,
// schema checks, and above all the pure-Go SQLite engine, whose frames are
// large) grows it several times, and every growth copies the stack and
// rewrites its frames, on every call (bench/NOTES.md has the profile). A
// worker keeps its grown stack from one call
// to the next (the garbage collector may halve an idle one now and then),
// so the copying is paid rarely instead of on every call. Handing a call to
// a worker and back costs two goroutine switches, far less.
//
// Workers are started on demand up to max and end after idleTimeout without
// work, so an idle server (and a finished test) keeps no extra goroutines.
// When all of them are busy the call runs on the caller's goroutine, as it
// would without the pool: the pool never queues work.
type warmWorkers struct {
	jobs    chan *warmJob
	running atomic.Int32
	max     int32
}

// warmJob is one call handed to a worker.
type warmJob struct {
	fn       func()
	done     chan struct{} // nil for a job from start
	panicked any           // the value fn panicked with, re-raised on the caller's goroutine
}

// warmIdleTimeout is how long a worker waits for work before it ends.
const warmIdleTimeout = 100 * time.Millisecond

var warmJobPool = sync.Pool{New: func() any { return &warmJob{done: make(chan struct{}, 1)} }}

func newWarmWorkers(max int) *warmWorkers {
	return &warmWorkers{jobs: make(chan *warmJob), max: int32(max)}
}

// run calls fn on a worker and returns when it has returned. A panic in fn
// is re-raised here, on the caller's goroutine, so that the server's
// recovery middleware sees it.
func (w *warmWorkers) run(fn func()) {
	job := warmJobPool.Get().(*warmJob)
	job.fn = fn
	select {
	case w.jobs <- job: // an idle worker took it
	default:
		if n := w.running.Add(1); n > w.max {
			w.running.Add(-1)
			job.fn = nil
			warmJobPool.Put(job)
			fn()
			return
		}
		go w.work(job)
	}
	<-job.done
	p := job.panicked
	job.fn, job.panicked = nil, nil
	warmJobPool.Put(job)
	if p != nil {
		panic(p)
	}
}

// start runs fn on a worker without waiting for it: on an idle worker, on
// a new one while fewer than max run, or else on a goroutine of its own.
// fn must recover its own panics; nobody waits to re-raise them.
func (w *warmWorkers) start(fn func()) {
	job := &warmJob{fn: fn} // no done channel: do does not report back
	select {
	case w.jobs <- job:
	default:
		if n := w.running.Add(1); n > w.max {
			w.running.Add(-1)
			go fn()
			return
		}
		go w.work(job)
	}
}

// work runs first, then whatever arrives, until it has been idle for
// warmIdleTimeout.
func (w *warmWorkers) work(first *warmJob) {
	defer w.running.Add(-1)
	w.do(first)
	idle := time.NewTimer(warmIdleTimeout)
	defer idle.Stop()
	for {
		select {
		case job := <-w.jobs:
			w.do(job)
			idle.Reset(warmIdleTimeout)
		case <-idle.C:
			return
		}
	}
}

func (w *warmWorkers) do(job *warmJob) {
	if job.done == nil { // from start
		job.fn()
		return
	}
	defer func() {
		job.panicked = recover()
		job.done <- struct{}{}
	}()
	job.fn()
}
