package protocol_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
	"github.com/taikai-dev/taikai/games"
)

func pair(tb testing.TB) (client net.Conn, server *protocol.Conn) {
	tb.Helper()
	c, s := protocoltest.TCPPair(tb)
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	return c, protocol.NewConn(s)
}

// The common line rules of PROTOCOLS.md: \r ignored, 4096 bytes is a line and
// 4097 is too long (and discarded up to the newline), more than 64 KiB without
// a newline or more than 200 lines in a second is a flood.
func TestLineLimits(t *testing.T) {
	c, s := pair(t)
	go c.Write([]byte("PUT 3 2\r\n" + strings.Repeat("a", 4096) + "\n" + strings.Repeat("b", 4097) + "\nNEXT\nlast"))
	for _, want := range []struct {
		line string
		err  error
	}{{"PUT 3 2", nil}, {strings.Repeat("a", 4096), nil}, {"", protocol.ErrLineTooLong}, {"NEXT", nil}} {
		line, _, err := s.ReadLine()
		if string(line) != want.line || !errors.Is(err, want.err) && err != want.err {
			t.Fatalf("got %.20q (%d bytes), %v; want %.20q, %v", line, len(line), err, want.line, want.err)
		}
	}
	c.Close()
	if line, _, err := s.ReadLine(); string(line) != "last" || err != nil {
		t.Errorf("a last line without newline: %q %v", line, err)
	}
}

func TestNoNewlineIsFlood(t *testing.T) {
	c, s := pair(t)
	go c.Write([]byte(strings.Repeat("z", 65<<10)))
	if _, _, err := s.ReadLine(); !errors.Is(err, protocol.ErrFlood) {
		t.Errorf("65 KiB without newline: %v, want ErrFlood", err)
	}
}

func TestFlood(t *testing.T) {
	c, s := pair(t)
	go c.Write([]byte(strings.Repeat("SAY x\n", 201)))
	for i := range 201 {
		_, _, err := s.ReadLine()
		if i < 200 && err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if i == 200 && !errors.Is(err, protocol.ErrFlood) {
			t.Fatalf("line 201 in under a second: %v, want ErrFlood", err)
		}
	}
}

// 200 lines a second for a while is allowed.
func TestNoFloodAtTheLimit(t *testing.T) {
	c, s := pair(t)
	go func() {
		for range 5 {
			c.Write([]byte(strings.Repeat("SAY x\n", 150)))
			time.Sleep(1100 * time.Millisecond)
		}
	}()
	for i := range 750 {
		if _, _, err := s.ReadLine(); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
}

// An update with no lines for a seat (gomoku-turn's to the side not to move)
// makes no write at all: on a closed connection it is still no error, where
// any byte is.
func TestSendNothingWritesNothing(t *testing.T) {
	_, s := pair(t)
	s.Close()
	ctx := context.Background()
	if err := s.Send(ctx, nil); err != nil {
		t.Errorf("Send(nothing) on a closed connection: %v, want nil", err)
	}
	if err := s.Send(ctx, []byte("x\n")); err == nil {
		t.Error("Send(a line) on a closed connection: nil, want an error")
	}
}

// One length rule for every line, the last one without a newline included:
// 4096 bytes is a line, 4097 or 4098 bytes is too long and is reported (so it
// is counted), then the end of the stream.
func TestUnterminatedLastLine(t *testing.T) {
	for _, n := range []int{4096, 4097, 4098, 5000} {
		c, s := pair(t)
		go func() {
			c.Write([]byte(strings.Repeat("x", n)))
			c.Close()
		}()
		line, _, err := s.ReadLine()
		if n <= protocol.MaxLine {
			if len(line) != n || err != nil {
				t.Errorf("%d bytes then EOF: got %d bytes, %v; want the line", n, len(line), err)
			}
		} else if !errors.Is(err, protocol.ErrLineTooLong) {
			t.Errorf("%d bytes then EOF: got %d bytes, %v; want ErrLineTooLong", n, len(line), err)
		}
		if _, _, err := s.ReadLine(); err == nil || errors.Is(err, protocol.ErrLineTooLong) {
			t.Errorf("%d bytes: after the last line, %v; want the end of the stream", n, err)
		}
	}
}

// Lines the protocol asked for (Invited) do not count towards the flood
// limit; the others still do.
func TestInvitedLinesAreNotFlood(t *testing.T) {
	c, s := pair(t)
	go c.Write([]byte(strings.Repeat("put 1 1\n", 400) + strings.Repeat("SAY x\n", 201)))
	for i := range 400 {
		if _, _, err := s.ReadLine(); err != nil {
			t.Fatalf("invited line %d: %v", i+1, err)
		}
		s.Invited()
	}
	for i := range 201 {
		_, _, err := s.ReadLine()
		if i < 200 && err != nil {
			t.Fatalf("line %d after the invited ones: %v", i+1, err)
		}
		if i == 200 && !errors.Is(err, protocol.ErrFlood) {
			t.Fatalf("line 201 not invited, in under a second: %v, want ErrFlood", err)
		}
	}
}

// Chatter (thinking output) is never a flood, but it is paced: past a burst
// of ChatterBurst lines the reader takes them at most ChatterRate a second,
// so 1500 of them at once take at least half a second to read (a bound on
// what an engine printing without end costs the server), and no Left comes
// until the client's end, which is a plain disconnect.
func TestChatterIsPacedNotFlood(t *testing.T) {
	c, s := protocoltest.TCPPair(t)
	b := protocol.NewBase(s)
	n := 0
	b.Reader(func() {
		b.ReadLoop(func(time.Time) bool { return true }, func([]byte, time.Time) bool {
			n++
			b.Chatter()
			return true
		})
	})
	left := make(chan engines.Action, 1)
	start := time.Now()
	b.Listen(func(ev engines.Action) {
		if ev.Kind == engines.Left {
			left <- ev
		}
	})
	go func() {
		c.Write([]byte(strings.Repeat("status thinking\n", 1500)))
		c.Close()
	}()
	var ev engines.Action
	select {
	case ev = <-left:
	case <-time.After(30 * time.Second):
		t.Fatal("the reader did not reach the client's end in 30 s")
	}
	took := time.Since(start)
	b.Close()
	if ev.Cause == games.CauseFlood || n != 1500 {
		t.Errorf("after %d lines: left %+v, want all 1500 read and a plain disconnect", n, ev)
	}
	if least := time.Duration(1500-protocol.ChatterBurst) * time.Second / protocol.ChatterRate; took < least {
		t.Errorf("1500 lines of chatter read in %v, want at least %v (paced)", took, least)
	}
}

// Nothing follows END: the reader's answer to a line (an ERROR written on
// its own goroutine) and the referee's END race, and the answer either comes
// before END or is not written. Each round races END against four answering
// goroutines, once they are writing.
func TestNothingAfterLast(t *testing.T) {
	const writers = 4
	for round := range 300 {
		c, s := protocoltest.TCPPair(t)
		b := protocol.NewBase(s)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var wg sync.WaitGroup
		// A round that fails leaves no writer behind: each ends at the
		// closed socket or the deadline before the test does.
		t.Cleanup(func() {
			cancel()
			s.Close()
			wg.Wait()
		})
		writing := make(chan struct{}, writers)
		for range writers {
			wg.Go(func() {
				// At most 250 lines each (8 KB in all, within the socket's
				// buffers: the client reads once END is written).
				for i := 0; i < 250 && !b.Gone(); i++ {
					if err := b.SendUnlessGone(ctx, []byte("ERROR 4\n")); err != nil {
						t.Errorf("round %d: %v", round, err)
						return
					}
					if i == 0 {
						writing <- struct{}{}
					}
				}
			})
		}
		select {
		case <-writing:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: no answer written in 10 s", round)
		}
		if err := b.SendLast(ctx, []byte("END LOSE 0 0 illegal\n")); err != nil {
			t.Fatalf("round %d: SendLast: %v", round, err)
		}
		answered := make(chan struct{})
		go func() { wg.Wait(); close(answered) }()
		select {
		case <-answered:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the answering goroutines still write 10 s after END", round)
		}
		s.Close()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var got strings.Builder
		if _, err := io.Copy(&got, c); err != nil {
			t.Fatalf("round %d: reading: %v", round, err)
		}
		if !strings.HasSuffix(got.String(), "\nEND LOSE 0 0 illegal\n") {
			t.Fatalf("round %d: the client read ...%q, want END last", round, tail(got.String(), 80))
		}
		c.Close()
		cancel() // the round is over: its deadline's timer stops now, not at the test's end
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
