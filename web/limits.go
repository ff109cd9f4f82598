package web

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate is a token-bucket limit: PerMinute requests on average, up to Burst
// at once.
type Rate struct {
	PerMinute float64
	Burst     int
}

// Rate limits the Options can name.
var (
	// Unlimited turns a limit off (benchmarks, a trusted network).
	Unlimited = Rate{PerMinute: -1}
	// DefaultAddressRate is generous for one person (a page does a few
	// requests per message) and stops a script hammering the model.
	DefaultAddressRate = Rate{PerMinute: 120, Burst: 40}
	// DefaultSessionRate allows a brisk conversation, not a flood.
	DefaultSessionRate = Rate{PerMinute: 20, Burst: 6}
)

// maxLimiterKeys caps each limiter's table. When it is full, the buckets
// that have refilled (their clients are idle) are dropped, and if that is
// not enough, arbitrary ones until a tenth of the table is free, so that a
// flood of new keys costs one sweep per thousand keys, not one per key.
const maxLimiterKeys = 10000

type limiter struct {
	rate  Rate
	clock Clock
	mu    sync.Mutex
	m     map[string]*bucket
}

type bucket struct{ lim *rate.Limiter }

func newLimiter(r Rate, c Clock) *limiter {
	return &limiter{rate: r, clock: c, m: map[string]*bucket{}}
}

// allow takes one token for key, or reports how long to wait for one.
func (l *limiter) allow(key string) (bool, time.Duration) {
	if l.rate.PerMinute < 0 {
		return true, 0
	}
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.m[key]
	if b == nil {
		if len(l.m) >= maxLimiterKeys {
			l.prune(now)
		}
		b = &bucket{lim: rate.NewLimiter(rate.Limit(l.rate.PerMinute/60), max(l.rate.Burst, 1))}
		l.m[key] = b
	}
	r := b.lim.ReserveN(now, 1)
	if !r.OK() {
		return false, time.Minute
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

func (l *limiter) prune(now time.Time) {
	burst := float64(max(l.rate.Burst, 1))
	for k, b := range l.m {
		if b.lim.TokensAt(now) >= burst {
			delete(l.m, k)
		}
	}
	for k := range l.m { // map order is arbitrary
		if len(l.m) < maxLimiterKeys*9/10 {
			break
		}
		delete(l.m, k)
	}
}

// clientAddr is the key of the per-client limits: the peer's IPv4
// address, or the /64 of its IPv6 address (one site's usual share, so a
// single host cannot become 2^64 clients). Headers such as
// X-Forwarded-For are not trusted; behind a proxy, the proxy should limit.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.WithZone("").Prefix(64)
	return p.String()
}

// retryAfter formats a wait as whole seconds, at least one.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// acquireStream takes a turn slot, or reports false when all are in use.
func (s *Server) acquireStream() bool {
	select {
	case s.streams <- struct{}{}:
		s.metrics.openStreams.Inc()
		return true
	default:
		return false
	}
}

func (s *Server) releaseStream() {
	<-s.streams
	s.metrics.openStreams.Dec()
}

// claimSession marks a session busy; one turn per session at a time, so
// two tabs cannot interleave one conversation's messages.
func (s *Server) claimSession(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[id] {
		return false
	}
	s.active[id] = true
	return true
}

func (s *Server) releaseSession(id string) {
	s.mu.Lock()
	delete(s.active, id)
	s.mu.Unlock()
}
