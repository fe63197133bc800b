package protocol

import (
	"errors"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// PinTo runs the seat's reader on an OS thread of its own that may run only on
// cpus, and has it wait for the client in poll(2) rather than in Go's network
// poller. Call it before Listen; Close stops the reader as usual.
//
// Why: a game is a ping-pong, only one side thinks at a time, so one CPU can
// carry a whole game. With the engines on that CPU too (engines.Launch.CPUs),
// the kernel wakes the engine and then the reader on the CPU that is already
// running, and no wake-up has to cross to another CPU. On the 2-vCPU VM taikai
// is developed on, a wake-up across CPUs costs about 30 µs, more than a whole
// move of two instant engines. The network poller cannot take part: it hands a
// ready connection to whatever thread polls, on whatever CPU.
func (b *Base) PinTo(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	tc, ok := b.Conn.c.(*net.TCPConn)
	if !ok {
		return errors.New("pin a seat: not a TCP connection")
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	b.life.Lock()
	defer b.life.Unlock()
	if b.started || b.poll != nil {
		// The reader may have buffered lines, or is pinned already.
		return errors.New("pin a seat: already reading or pinned")
	}
	p := &pollReader{raw: raw}
	b.Conn.r.Reset(p)
	b.poll = p
	loop := b.loop
	b.loop = func() {
		runtime.LockOSThread()
		var old unix.CPUSet
		if unix.SchedGetaffinity(0, &old) == nil {
			// Unpinned, the seat still works, only slower; the engines'
			// launch, pinned to the same CPU, logs why it failed.
			_ = unix.SchedSetaffinity(0, &set)
			// The thread must not end with the reader, as a locked thread
			// would: an engine started from it earlier (exec.Cmd.Start runs
			// on any thread) is sent SIGKILL when it ends, by Pdeathsig,
			// which is per thread. So it goes back as it was. Should that
			// fail (the cpuset shrank meanwhile), it serves on with fewer
			// CPUs, which is only slower.
			defer func() {
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

// pollReader reads a socket by blocking the reading thread in poll(2). The
// descriptor stays non-blocking, as Go's writes on it expect.
type pollReader struct {
	raw    syscall.RawConn
	closed atomic.Bool
}

// pollWait bounds one poll(2), in milliseconds: the reader looks at closed at
// least this often even if the shutdown that should wake it were lost.
var pollWait = 1000

func (p *pollReader) Read(b []byte) (int, error) {
	var n int
	var err error
	rerr := p.raw.Read(func(fd uintptr) bool {
		fds := [1]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
		for !p.closed.Load() {
			// Poll first: the reader is called when its buffer is empty, which is
			// usually just after the referee wrote, so a read would find nothing.
			if _, err = unix.Poll(fds[:], pollWait); err != nil && err != unix.EINTR {
				return true
			}
			if fds[0].Revents == 0 {
				continue
			}
			n, err = unix.Read(int(fd), b)
			if err != unix.EAGAIN && err != unix.EINTR {
				return true
			}
		}
		err = net.ErrClosed
		return true
	})
	switch {
	case rerr != nil:
		return 0, rerr
	case err != nil:
		return 0, err
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// shutdown wakes a reader blocked in poll; the connection is closed after.
// Go's Close waits for a read in progress, so it must not come first.
func (p *pollReader) shutdown() {
	p.closed.Store(true)
	_ = p.raw.Control(func(fd uintptr) { _ = unix.Shutdown(int(fd), unix.SHUT_RD) })
}
