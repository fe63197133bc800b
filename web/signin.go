package web

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Failed sign-ins (a wrong admin or participant token, a wrong invitation
// code) are limited with a token bucket per client address: signInBurst
// failures at once, then one every signInEvery. An address over its limit
// gets 429 with Retry-After, right token or not, until its bucket refills;
// other addresses are not affected. Nothing is counted per account (issue
// 36, item 6): student ids are public, and a count per account let one
// address lock a student out by failing slowly. Guessing by many addresses
// together gains nothing: a token holds 256 random bits.
const (
	signInBurst = 10
	signInEvery = 3 * time.Second
	// signInKeep is how long a key's bucket is kept after its last failure
	// (a full bucket is the same as none).
	signInKeep = 10 * time.Minute
)

// signInLimiter counts failures by client address. The zero value is ready.
type signInLimiter struct {
	mu     sync.Mutex
	byAddr map[string]*addrLimit
	swept  time.Time
}

func (l *signInLimiter) newLimiter() *rate.Limiter {
	return rate.NewLimiter(rate.Every(signInEvery), signInBurst)
}

type addrLimit struct {
	lim  *rate.Limiter
	last time.Time
}

// clientAddr is the request's peer address without its port.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// blocked reports whether addr has no failure left, and when it will have one.
func (l *signInLimiter) blocked(addr string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.byAddr[addr]
	if a == nil || a.lim.TokensAt(now) >= 1 {
		return 0, false
	}
	r := a.lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	r.CancelAt(now)
	return wait, true
}

// failed counts a failed sign-in from addr.
func (l *signInLimiter) failed(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byAddr == nil {
		l.byAddr = map[string]*addrLimit{}
	}
	if now.Sub(l.swept) > signInKeep {
		for k, a := range l.byAddr {
			if now.Sub(a.last) > signInKeep {
				delete(l.byAddr, k)
			}
		}
		l.swept = now
	}
	a := l.byAddr[addr]
	if a == nil {
		a = &addrLimit{lim: l.newLimiter()}
		l.byAddr[addr] = a
	}
	a.last = now
	a.lim.AllowN(now, 1)
}

// retryAfter is a Retry-After value: whole seconds, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}
