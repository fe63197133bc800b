package builtin

import (
	"io"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// blocking turns a TCP connection into a descriptor read with a raw read(2)
// that blocks the engine's thread, as a C client's read does, and written with
// write(2).
//
// Why: an engine spends most of a game idle, waiting for its turn, and how fast
// it wakes is part of every move's turnaround. Through Go's network poller the
// wake-up goes from the poller's thread to a scheduler thread and usually
// starts a third; a plain blocking read still passes the runtime's system-call
// bookkeeping, which wakes its monitor thread. A raw read is woken by the kernel
// and returns straight into the engine. taikai bench, instant engines, 2 vCPUs:
// median turnaround 28-31 µs through the poller, 22-27 µs with a blocking read,
// 17-23 µs with a raw one.
//
// The cost: the runtime believes the goroutine is running, so while the engine
// waits its monitor sends it a preemption signal every 10 ms (the read simply
// restarts) and a stop-the-world garbage collection waits for the next line.
// The client has one goroutine and nothing else to run, so neither matters.
// On any failure the connection is returned as it was.
func blocking(conn net.Conn) io.ReadWriteCloser {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return conn
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return conn
	}
	dup, dupErr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) {
		dup, dupErr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil || dupErr != nil {
		return conn
	}
	// O_NONBLOCK belongs to the open socket, which the duplicate shares; the
	// net.Conn is closed without another read or write through it.
	if err := syscall.SetNonblock(dup, false); err != nil {
		syscall.Close(dup)
		return conn
	}
	conn.Close()
	return &rawConn{fd: dup}
}

// rawConn is a blocking socket descriptor.
type rawConn struct{ fd int }

func (c *rawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(c.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		if n == 0 {
			return 0, io.EOF
		}
		return int(n), nil
	}
}

func (c *rawConn) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := syscall.Write(c.fd, p[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

func (c *rawConn) Close() error { return syscall.Close(c.fd) }
