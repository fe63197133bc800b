package protocol_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/taikai-dev/taikai/engines/protocol"
)

// A pinned seat reads its client's lines on a thread that runs only on the
// CPU it was given, and Close stops that reader at once, although it is
// blocked in read(2), which has no timeout.
func TestPinnedSeatReadsOnItsCPUAndCloses(t *testing.T) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	cpu := lastCPU(t)

	client, sc := tcpPair(t)
	b := protocol.NewBase(sc)
	var tid atomic.Int64 // the reader's thread
	b.Reader(func() {
		b.ReadLoop(func(time.Time) bool { return true }, func(line []byte, at time.Time) bool {
			var set unix.CPUSet
			if err := unix.SchedGetaffinity(0, &set); err != nil {
				return b.Emit(protocol.Event{Kind: protocol.Chat, What: "error " + err.Error()})
			}
			tid.Store(int64(unix.Gettid()))
			return b.Emit(protocol.Event{Kind: protocol.Chat, What: fmt.Sprintf("%s on %d cpus, cpu %d: %v", line, set.Count(), cpu, set.IsSet(cpu))})
		})
	})
	if err := b.PinTo([]int{cpu}); err != nil {
		t.Fatal(err)
	}
	events := make(chan protocol.Event, 16)
	b.Listen(func(ev protocol.Event) { events <- ev })
	if err := b.PinTo([]int{cpu}); err == nil {
		t.Error("PinTo of a seat that reads already: no error")
	}

	for _, line := range []string{"one", "two"} {
		if _, err := fmt.Fprintf(client, "%s\n", line); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%s on 1 cpus, cpu %d: true", line, cpu)
		select {
		case ev := <-events:
			if ev.Kind != protocol.Chat || ev.What != want {
				t.Fatalf("event %+v, want %q", ev, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no event for %q", line)
		}
	}
	// The seat can still write while its reader waits in read(2).
	if err := b.Send(t.Context(), []byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := bufio.NewReader(client).ReadString('\n'); err != nil || got != "hello\n" {
		t.Fatalf("client read %q, %v", got, err)
	}

	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close still waits for the reader blocked in read(2)")
	}
	select {
	case ev := <-events:
		t.Errorf("event %+v after Close, want none (the server closed, not the client)", ev)
	default:
	}
	// The reader's thread lives on with all its CPUs: had it ended, an engine
	// process started from it would have been killed (Pdeathsig).
	status, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid.Load()))
	if err != nil {
		t.Fatalf("the reader's thread %d ended with the reader: %v", tid.Load(), err)
	}
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(int(tid.Load()), &after); err != nil || after != all {
		t.Errorf("the reader's thread may run on %d CPUs after Close (%v), want the %d it had\n%s", after.Count(), err, all.Count(), status)
	}
}

// The reader of a pinned seat sees the client leave.
func TestPinnedSeatSeesTheClientLeave(t *testing.T) {
	client, sc := tcpPair(t)
	b := protocol.NewBase(sc)
	defer b.Close()
	b.Reader(func() {
		b.ReadLoop(func(time.Time) bool { return true }, func(line []byte, at time.Time) bool { return true })
	})
	if err := b.PinTo([]int{lastCPU(t)}); err != nil {
		t.Fatal(err)
	}
	events := make(chan protocol.Event, 4)
	b.Listen(func(ev protocol.Event) { events <- ev })
	client.Write([]byte("a line, then gone\n"))
	client.Close()
	select {
	case ev := <-events:
		if ev.Kind != protocol.Left || ev.Reason != protocol.ReasonDisconnect {
			t.Errorf("event %+v, want Left by disconnect", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event after the client closed")
	}
}

// lastCPU returns the last CPU this thread may run on.
func lastCPU(tb testing.TB) int {
	tb.Helper()
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		tb.Fatal(err)
	}
	cpu := -1
	for c := range 1024 {
		if all.IsSet(c) {
			cpu = c
		}
	}
	return cpu
}

// A pinned seat's socket is out of Go's network poller, so its deadlines are
// its own: a write to a client that reads nothing fails at its deadline, and
// Close ends a write that waits for room, however far its deadline is.
func TestPinnedSeatWritesWithinTheirDeadline(t *testing.T) {
	_, sc := tcpPair(t) // the client reads nothing
	b := protocol.NewBase(sc)
	b.Reader(func() {
		b.ReadLoop(func(time.Time) bool { return true }, func([]byte, time.Time) bool { return true })
	})
	if err := b.PinTo([]int{lastCPU(t)}); err != nil {
		t.Fatal(err)
	}
	b.Listen(func(protocol.Event) {})
	chunk := make([]byte, 64<<10)
	// fill writes until one fails; the loopback buffers hold a few MiB, so
	// 4,096 chunks (256 MiB) that all fit would mean no deadline at all.
	fill := func(ctx context.Context) error {
		for range 4096 {
			if err := b.Send(ctx, chunk); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	err := fill(ctx)
	cancel()
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("writes to a client that reads nothing: %v, want the deadline exceeded", err)
	}

	// The buffers are full: a write with the default deadline (WriteTimeout)
	// waits for room, and Close must end that wait.
	failed := make(chan error, 1)
	go func() { failed <- fill(t.Context()) }()
	select {
	case err := <-failed:
		t.Fatalf("a write to full buffers returned at once: %v", err)
	case <-time.After(100 * time.Millisecond): // still waiting for room
	}
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case err := <-failed:
		if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("write ended by Close: %v, want the connection's error", err)
		}
	case <-time.After(protocol.WriteTimeout / 2):
		t.Fatal("a write waiting for room outlived Close")
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	if err := b.Send(t.Context(), []byte("late\n")); err == nil {
		t.Error("Send after Close: no error")
	}
}

// Unpin lets the reader of a pinned seat run on all the CPUs it had before,
// whether it comes while the reader waits or before the reader starts; the
// seat reads on as before.
func TestUnpinnedSeatReadsOnEveryCPU(t *testing.T) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	if all.Count() < 2 {
		t.Skip("one CPU: a pinned reader cannot be told from a free one")
	}
	for _, early := range []bool{false, true} {
		client, sc := tcpPair(t)
		b := protocol.NewBase(sc)
		b.Reader(func() {
			b.ReadLoop(func(time.Time) bool { return true }, func(line []byte, at time.Time) bool {
				var set unix.CPUSet
				if err := unix.SchedGetaffinity(0, &set); err != nil {
					return b.Emit(protocol.Event{Kind: protocol.Chat, What: "error " + err.Error()})
				}
				return b.Emit(protocol.Event{Kind: protocol.Chat, What: fmt.Sprintf("%s on %d cpus", line, set.Count())})
			})
		})
		if err := b.PinTo([]int{lastCPU(t)}); err != nil {
			t.Fatal(err)
		}
		if early {
			b.Unpin()
		}
		events := make(chan protocol.Event, 16)
		b.Listen(func(ev protocol.Event) { events <- ev })
		next := func(line string, cpus int) {
			t.Helper()
			if _, err := fmt.Fprintf(client, "%s\n", line); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("%s on %d cpus", line, cpus)
			select {
			case ev := <-events:
				if ev.What != want {
					t.Fatalf("Unpin before Listen %v: event %q, want %q", early, ev.What, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("no event for %q", line)
			}
		}
		if !early {
			next("pinned", 1)
			b.Unpin()
		}
		next("free", all.Count())
		b.Unpin() // again: nothing changes
		next("still free", all.Count())
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	}
}
