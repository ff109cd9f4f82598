package mcpserver

import (
	"context"
	"sync"
	"time"
)

// DefaultDrainTimeout bounds how long a connection holds back the end of its
// input while requests are still being answered.
const DefaultDrainTimeout = 30 * time.Second

// inflight tracks the requests a connection has read and not yet answered,
// on both paths, so that the end of the input can wait for them.
//
// The SDK ends a session as soon as a read fails, cancelling the requests
// in flight; a client that writes its requests and closes its end at once
// (a shell pipeline such as `printf … | agentapp serve`, or a batch driver)
// would then get no answer to its last requests. The connection's Read
// therefore holds back the end of the input until every request read so
// far has been answered, or until DefaultDrainTimeout passes.
type inflight struct {
	mu     sync.Mutex
	sdk    map[any]int                // ids handed to the SDK, with how many are unanswered
	direct map[any]context.CancelFunc // direct calls, by id
	idle   chan struct{}              // closed when both are empty; nil while no one waits
}

// startSDK notes a request handed to the SDK.
func (f *inflight) startSDK(id any) {
	f.mu.Lock()
	if f.sdk == nil {
		f.sdk = map[any]int{}
	}
	f.sdk[id]++
	f.mu.Unlock()
}

// endSDK notes a response written for a request the SDK answered.
func (f *inflight) endSDK(id any) {
	f.mu.Lock()
	if n := f.sdk[id]; n > 1 {
		f.sdk[id] = n - 1
	} else {
		delete(f.sdk, id)
	}
	f.wakeLocked()
	f.mu.Unlock()
}

// startDirect notes a direct call, or reports false when a direct call
// with that id is still running.
func (f *inflight) startDirect(id any, cancel context.CancelFunc) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dup := f.direct[id]; dup {
		return false
	}
	if f.direct == nil {
		f.direct = map[any]context.CancelFunc{}
	}
	f.direct[id] = cancel
	return true
}

// endDirect notes that a direct call's answer has been written.
func (f *inflight) endDirect(id any) {
	f.mu.Lock()
	delete(f.direct, id)
	f.wakeLocked()
	f.mu.Unlock()
}

// cancelDirect cancels the direct call with that id, if one runs.
func (f *inflight) cancelDirect(id any) {
	f.mu.Lock()
	cancel := f.direct[id]
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// has reports whether a request with this id is in flight on either path.
func (f *inflight) has(id any) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, sdk := f.sdk[id]
	_, direct := f.direct[id]
	return sdk || direct
}

// count returns how many requests are in flight on both paths.
func (f *inflight) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sdk) + len(f.direct)
}

func (f *inflight) wakeLocked() {
	if len(f.sdk) == 0 && len(f.direct) == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// wait returns once nothing is in flight, timeout has passed, ctx is done
// or closed is closed.
func (f *inflight) wait(ctx context.Context, timeout time.Duration, closed <-chan struct{}) {
	f.mu.Lock()
	if len(f.sdk) == 0 && len(f.direct) == 0 {
		f.mu.Unlock()
		return
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	case <-ctx.Done():
	case <-closed:
	}
}
