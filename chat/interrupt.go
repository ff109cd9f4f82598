package chat

import "context"

// interruptible returns a context that Ctrl-C (cfg.Interrupt) cancels,
// for work started from a command at the prompt (a restart, a /call), and
// the function that releases it; stop must be called.
func (c *Chat) interruptible(ctx context.Context) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-c.cfg.Interrupt:
			cancel()
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		cancel()
	}
}
