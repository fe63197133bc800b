package web_test

import (
	"net"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/web"
)

// The listener keeps at most perAddr connections from one address and total
// in all; a closed connection gives its place back.
func TestLimitListener(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := web.LimitListener(inner, 3, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// kept reports whether the server kept the connection: a closed one
	// reads EOF at once; a kept one only times out.
	kept := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		ne, ok := err.(net.Error)
		return ok && ne.Timeout()
	}
	a1, a2, a3 := dial("127.0.0.2"), dial("127.0.0.2"), dial("127.0.0.2")
	for i, c := range []net.Conn{a1, a2} {
		if !kept(c) {
			t.Errorf("connection %d from 127.0.0.2 closed, want kept", i+1)
		}
	}
	if kept(a3) {
		t.Error("a third connection from 127.0.0.2 kept, want closed (2 per address)")
	}
	b1, b2 := dial("127.0.0.3"), dial("127.0.0.3")
	if !kept(b1) || kept(b2) {
		t.Errorf("from 127.0.0.3: kept %v and %v, want the first only (3 in all)", kept(b1), kept(b2))
	}
	// The server closes one of a's: its place is free again.
	(<-accepted).Close()
	if c := dial("127.0.0.4"); !kept(c) {
		t.Error("after a close, a new connection was closed, want kept")
	}
}
