package protocol

import (
	"errors"
	"io"
	"math"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// PinTo runs the seat's reader on an OS thread of its own that may run only on
// cpus, blocked in read(2) on a socket of its own rather than in Go's network
// poller. Call it before Listen; Close stops the reader as usual.
//
// Why: a game is a ping-pong, only one side thinks at a time, so one CPU can
// carry a whole game. With the engines on that CPU too (engines.Launch.CPUs),
// the kernel wakes the engine and then the reader on the CPU that is already
// running, and no wake-up has to cross to another CPU. On the 2-vCPU VM taikai
// is developed on, a wake-up across CPUs costs about 30 µs, more than a whole
// move of two instant engines. The network poller cannot take part: it hands a
// ready connection to whatever thread polls, on whatever CPU. The connection
// leaves it altogether (see detach): while it was still registered there,
// every line the engine sent woke the poller's thread too, on the game's CPU.
//
// PinTo replaces the connection under the seat, so it must come before
// anything is written to the seat too.
func (b *Base) PinTo(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	b.life.Lock()
	defer b.life.Unlock()
	if b.started || b.pinned || b.isClosed() {
		// The reader may have buffered lines, or is pinned already.
		return errors.New("pin a seat: already reading, pinned or closed")
	}
	tc, ok := b.Conn.c.(*net.TCPConn)
	if !ok {
		return errors.New("pin a seat: not a TCP connection")
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	s, err := detach(tc)
	if err != nil {
		return err
	}
	b.Conn.c = s
	b.Conn.r.Reset(s)
	b.pinned = true
	loop := b.loop
	b.loop = func() {
		runtime.LockOSThread()
		var old unix.CPUSet
		if unix.SchedGetaffinity(0, &old) == nil {
			// Unpinned, the seat still works, only slower; the engines'
			// launch, pinned to the same CPU, logs why it failed.
			b.pin.mu.Lock()
			if !b.pin.freed {
				_ = unix.SchedSetaffinity(0, &set)
			}
			b.pin.tid, b.pin.old = unix.Gettid(), old
			b.pin.mu.Unlock()
			// The thread must not end with the reader, as a locked thread
			// would: an engine started from it earlier (exec.Cmd.Start runs
			// on any thread) is sent SIGKILL when it ends, by Pdeathsig,
			// which is per thread. So it goes back as it was. Should that
			// fail (the cpuset shrank meanwhile), it serves on with fewer
			// CPUs, which is only slower.
			defer func() {
				b.pin.mu.Lock()
				b.pin.tid = 0 // back in Go's pool: Unpin must not touch it
				b.pin.mu.Unlock()
				_ = unix.SchedSetaffinity(0, &old)
				runtime.UnlockOSThread()
			}()
		} else {
			runtime.UnlockOSThread()
		}
		loop()
	}
	return nil
}

// pinState is where a pinned seat's reader runs, for Unpin.
type pinState struct {
	mu    sync.Mutex
	freed bool        // Unpin was called
	tid   int         // the reader's thread while it reads, else 0
	old   unix.CPUSet // the CPUs that thread had before PinTo
}

// Unpin lets the reader of a pinned seat run on the CPUs its thread had
// before, from now on or from its start; it keeps its own socket and thread.
// It does nothing to a seat not pinned. Safe to call from any goroutine, the
// seat's handler included, and more than once.
func (b *Base) Unpin() {
	b.pin.mu.Lock()
	defer b.pin.mu.Unlock()
	b.pin.freed = true
	if b.pin.tid != 0 {
		// Should this fail (the cpuset shrank meanwhile), the reader stays
		// on its CPU, which is only slower.
		_ = unix.SchedSetaffinity(b.pin.tid, &b.pin.old)
	}
}

// socket is a pinned seat's connection outside Go's network poller: reads
// block the reading thread in read(2), so that the kernel wakes that thread
// itself, in one system call; writes never block the writer beyond its
// deadline.
type socket struct {
	fd     int
	closed atomic.Bool
	dl     atomic.Int64 // write deadline, as time since epoch; noDeadline for none
	// inCall is held, shared, by every read and write for the time of its
	// system calls, and by Close exclusively to close the descriptor: the
	// number must not be reused under a call still using it.
	inCall sync.RWMutex
	once   sync.Once
}

// epoch is where the sockets' write deadlines are counted from, on the
// monotonic clock, so that a step of the wall clock does not move them.
var epoch = time.Now()

const noDeadline = math.MinInt64

// detach moves a connection out of the network poller: its descriptor is
// duplicated, and the original closed through the net.Conn, whose Close takes
// it out of the poller's epoll set (EPOLL_CTL_DEL) before it closes it. A raw
// close(2) would not: the registration would live on with the duplicate,
// which refers to the same open socket. The duplicate is made blocking for
// reads; O_NONBLOCK belongs to the open socket, which nothing else uses any
// more.
func detach(tc *net.TCPConn) (*socket, error) {
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, dupErr := -1, error(nil)
	if err := raw.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	tc.Close()
	s := &socket{fd: fd}
	s.dl.Store(noDeadline)
	return s, nil
}

// Read blocks until the client sends something, leaves, or Close.
func (s *socket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.inCall.RLock()
	defer s.inCall.RUnlock()
	for !s.closed.Load() {
		n, err := unix.Read(s.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
	return 0, net.ErrClosed
}

// Write writes p whole unless the deadline passes first. It never blocks in
// send(2) (MSG_DONTWAIT, the socket itself blocks for the reader): when the
// client's buffer is full it waits for room in poll(2), until the deadline.
func (s *socket) Write(p []byte) (int, error) {
	s.inCall.RLock()
	defer s.inCall.RUnlock()
	n := 0
	for n < len(p) {
		if s.closed.Load() {
			return n, net.ErrClosed
		}
		m, err := unix.SendmsgN(s.fd, p[n:], nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
		n += max(m, 0)
		switch err {
		case nil, unix.EINTR:
		case unix.EAGAIN:
			wait := -1 // no deadline: wait for room as long as it takes
			if dl := s.dl.Load(); dl != noDeadline {
				left := time.Duration(dl) - time.Since(epoch)
				if left <= 0 {
					return n, os.ErrDeadlineExceeded
				}
				wait = int((left + time.Millisecond - 1) / time.Millisecond)
			}
			fds := [1]unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(fds[:], wait); err != nil && err != unix.EINTR {
				return n, err
			}
		default:
			return n, err
		}
	}
	return n, nil
}

// SetWriteDeadline bounds the writes that follow; the zero time removes it.
func (s *socket) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		s.dl.Store(noDeadline)
	} else {
		s.dl.Store(int64(t.Sub(epoch)))
	}
	return nil
}

// Close shuts the connection down, which ends a read or a wait for room in
// progress at once, waits for those calls to return, and closes the
// descriptor. Later calls fail with net.ErrClosed.
func (s *socket) Close() error {
	var err error
	s.once.Do(func() {
		s.closed.Store(true)
		_ = unix.Shutdown(s.fd, unix.SHUT_RDWR)
		s.inCall.Lock()
		defer s.inCall.Unlock()
		err = unix.Close(s.fd)
	})
	return err
}

var _ stream = (*socket)(nil)
