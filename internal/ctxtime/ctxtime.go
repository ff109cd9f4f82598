// Package ctxtime holds the one way agentapp waits for a while: bounded by
// a duration and cut short by a context, so that no back-off or retry
// delay can outlive the caller's cancellation.
package ctxtime

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx is done, and returns ctx's error in the
// latter case. A d of zero or less does not wait, but still reports a ctx
// that is already done.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
