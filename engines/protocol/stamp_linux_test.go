package protocol_test

import (
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
	"golang.org/x/sys/unix"
)

// A line's time is when the kernel received it, not when the server read it
// (SO_TIMESTAMPNS): a reader that runs late does not charge the engine for
// its own lateness.
func TestLineTimeIsKernelReceive(t *testing.T) {
	c, s := protocoltest.TCPPair(t)
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	conn := protocol.NewConn(s)
	raw, err := s.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// The kernel turns receive timestamps on a moment after the first socket
	// asks (a deferred static key); lines before that get the read's time.
	// So lines go until one has the kernel's time, for 10 s at most.
	var t0, readStart, at time.Time
	for deadline := time.Now().Add(10 * time.Second); ; {
		t0 = time.Now()
		if _, err := c.Write([]byte("PUT 3 2\n")); err != nil {
			t.Fatal(err)
		}
		waitInSocket(t, raw)
		if !conn.Unread(func() {}) {
			t.Error("Unread is false with a line waiting in the socket")
		}
		readStart = time.Now()
		var line []byte
		line, at, err = conn.ReadLine()
		if err != nil || string(line) != "PUT 3 2" {
			t.Fatalf("ReadLine: %q, %v", line, err)
		}
		if at.Before(readStart) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // under the flood limit of 200 lines a second
	}
	if !at.Before(readStart) || at.Before(t0) {
		t.Errorf("the line's time is %v after the write began and the read began %v after it: want the kernel's receive, between the two",
			at.Sub(t0), readStart.Sub(t0))
	}
}

// waitInSocket waits until bytes wait unread in the socket.
func waitInSocket(tb testing.TB, raw syscall.RawConn) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		var n int
		raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatal("the line did not reach the server's socket in 10 s")
		}
	}
}

// Unread's wake is called when the reader, done with the bytes it had, waits
// on an empty socket: the referee waiting for a late reader learns then that
// no line is coming, without polling.
func TestUnreadWakesWhenReaderParks(t *testing.T) {
	c, s := protocoltest.TCPPair(t)
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	conn := protocol.NewConn(s)
	raw, err := s.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("PUT 3")); err != nil {
		t.Fatal(err)
	}
	waitInSocket(t, raw)
	woke := make(chan struct{})
	if !conn.Unread(func() { close(woke) }) {
		t.Fatal("Unread is false with bytes waiting in the socket")
	}
	type read struct {
		line string
		err  error
	}
	got := make(chan read, 1)
	go func() {
		line, _, err := conn.ReadLine()
		got <- read{string(line), err}
	}()
	select {
	case <-woke:
	case r := <-got:
		t.Fatalf("ReadLine returned %q, %v on half a line", r.line, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the reader took half a line and waited for more without calling wake")
	}
	if conn.Unread(func() { t.Error("wake called twice") }) {
		t.Error("Unread is true while the reader waits on an empty socket")
	}
	if _, err := c.Write([]byte(" 2\n")); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || r.line != "PUT 3 2" {
		t.Errorf("ReadLine: %q, %v, want PUT 3 2", r.line, r.err)
	}
}
