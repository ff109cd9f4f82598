package tasks

import "time"

// The pace's bounds: the server's pollInterval is used within them, and
// the wait grows while nothing changes.
const (
	// patientPolls is how many polls that find nothing new keep the
	// server's interval before the wait grows.
	patientPolls = 3
	// QuickPoll caps the wait between polls for QuickFor after a task
	// starts: a task that waits on a person (a refund an operator decides
	// in another process) then reaches the caller about a second after
	// the decision rather than at the server's advised interval (5 s,
	// grown to 25 s while nothing changes). Later the server's advice
	// holds, so a task left waiting costs no more than before.
	QuickPoll = time.Second
	QuickFor  = 10 * time.Minute
)

// Pace is how often a task is polled: at the server's interval, less
// often while nothing changes and after a failed poll. Both generations of
// tasks poll at this pace.
type Pace struct {
	interval, wait time.Duration
	// base is the wait the server's advice and the backoff give; wait is
	// base capped by QuickPoll while the task is young.
	base       time.Duration
	failures   int // failed polls in a row
	still      int // polls since the last change
	quickUntil time.Time
	now        func() time.Time
}

// NewPace starts a pace at the server's advised interval; now is its
// clock (nil: time.Now).
func NewPace(interval time.Duration, now func() time.Time) *Pace {
	if now == nil {
		now = time.Now
	}
	p := &Pace{interval: interval, now: now, quickUntil: now().Add(QuickFor)}
	p.set(interval)
	return p
}

// Wait is how long to wait before the next poll.
func (p *Pace) Wait() time.Duration { return p.wait }

// Failures is how many polls in a row failed.
func (p *Pace) Failures() int { return p.failures }

// set makes d the wait, capped at QuickPoll while the task is young.
func (p *Pace) set(d time.Duration) {
	p.base, p.wait = d, d
	if d > QuickPoll && p.now().Before(p.quickUntil) {
		p.wait = QuickPoll
	}
}

// Changed: the task reported something new, so it is polled at the
// server's interval again.
func (p *Pace) Changed() {
	p.still = 0
	p.set(p.interval)
}

// Failed records a poll that failed: the next waits twice as long.
func (p *Pace) Failed() {
	p.failures++
	p.wait = min(p.wait*2, MaxPollInterval)
}

// Polled records a poll that answered, with the interval the server
// advises now.
func (p *Pace) Polled(next time.Duration) {
	p.failures = 0
	if next != p.interval {
		p.interval = next
		p.set(next)
	} else if p.still++; p.still > patientPolls {
		// Nothing new for a while: ask less often, up to five times the
		// server's advice.
		p.set(min(p.base*3/2, p.interval*5, MaxPollInterval))
	} else {
		p.set(p.base) // the quick phase may have ended
	}
}
