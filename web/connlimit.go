package web

import (
	"net"
	"sync"
)

// LimitListener caps the connections a listener keeps open (issue 36): at
// most total in all, at most perAddr from one client address. A connection
// over either cap is closed at once, before any byte is read, so that idle
// connections cannot take the descriptors the games need; a client's own
// connections count down as they close (a hijacked websocket included).
func LimitListener(ln net.Listener, total, perAddr int) net.Listener {
	return &limitListener{Listener: ln, total: total, perAddr: perAddr, byAddr: map[string]int{}}
}

type limitListener struct {
	net.Listener
	total, perAddr int

	mu     sync.Mutex
	open   int
	byAddr map[string]int
}

// Accept returns the next connection within the caps; those over them are
// closed and not returned.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := c.RemoteAddr().String()
		if host, _, err := net.SplitHostPort(addr); err == nil {
			addr = host
		}
		if l.admit(addr) {
			return &limitConn{Conn: c, l: l, addr: addr}, nil
		}
		c.Close()
	}
}

func (l *limitListener) admit(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.total || l.byAddr[addr] >= l.perAddr {
		return false
	}
	l.open++
	l.byAddr[addr]++
	return true
}

func (l *limitListener) release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
}

// limitConn gives its place back when it is closed, once.
type limitConn struct {
	net.Conn
	l    *limitListener
	addr string
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.addr) })
	return err
}
