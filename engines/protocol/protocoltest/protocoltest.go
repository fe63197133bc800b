// Package protocoltest helps the adapters' tests: it drives a wire adapter
// with a client's bytes held in memory (the fuzz targets: no TCP, no
// process), and gives both ends of a real loopback connection.
package protocoltest

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
)

// Stream is an engine's side read from a fixed input; what the adapter
// writes is counted and dropped.
type Stream struct {
	r       io.Reader
	mu      sync.Mutex
	written int
}

// NewStream returns a stream whose client sends input and then closes.
func NewStream(input []byte) *Stream { return &Stream{r: bytes.NewReader(input)} }

// Read reads the client's input.
func (s *Stream) Read(b []byte) (int, error) { return s.r.Read(b) }

// Write drops what the adapter sends.
func (s *Stream) Write(b []byte) (int, error) {
	s.mu.Lock()
	s.written += len(b)
	s.mu.Unlock()
	return len(b), nil
}

// SetWriteDeadline does nothing: writes never block.
func (s *Stream) SetWriteDeadline(time.Time) error { return nil }

// Close does nothing.
func (s *Stream) Close() error { return nil }

// Drive makes seat read its client's whole input and returns the events it
// reported, in order. It fails the test if the seat reports anything after
// the client left, or if the seat does not finish reading within 10 s.
func Drive(tb testing.TB, seat engines.Seat) []engines.Action {
	tb.Helper()
	var (
		mu     sync.Mutex
		events []engines.Action
		left   = make(chan struct{})
		once   sync.Once
	)
	seat.Listen(func(ev engines.Action) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
		if ev.Kind == engines.Left {
			once.Do(func() { close(left) })
		}
	})
	select {
	case <-left:
	case <-time.After(10 * time.Second):
		tb.Fatal("the seat did not report the client's end within 10 s")
	}
	seat.Close()
	mu.Lock()
	defer mu.Unlock()
	for i, ev := range events {
		if ev.Kind == engines.Left && i != len(events)-1 {
			tb.Fatalf("events after the client left: %+v", events[i:])
		}
	}
	return events
}

// TCPPair returns both ends of a loopback TCP connection, closed at cleanup.
func TCPPair(tb testing.TB) (client, server net.Conn) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}
