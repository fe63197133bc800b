//go:build linux

package protocol

import (
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/taikai-dev/taikai/engines"
	"golang.org/x/sys/unix"
)

// kernelClock reads a TCP connection with recvmsg and keeps, for the bytes
// of each read, the time the kernel received them (SO_TIMESTAMPNS): a move's
// time ends when it reached this machine, not when the server's reader
// goroutine got to it on a loaded machine.
type kernelClock struct {
	raw  syscall.RawConn
	oob  []byte
	at   time.Time              // of the last read's bytes; the reader's alone
	idle atomic.Bool            // the reader waits on an empty socket
	wake atomic.Pointer[func()] // called when the reader parks (unread)
}

// newKernelClock returns nil when s is not a TCP connection, the kernel
// refuses the option, or TAIKAI_RECEIVE_TIME=read asks for the time of the
// read (docs/PROTOCOLS.md, "Clocks").
func newKernelClock(s engines.Stream) *kernelClock {
	tc, ok := s.(*net.TCPConn)
	if !ok || os.Getenv("TAIKAI_RECEIVE_TIME") == "read" {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	return &kernelClock{raw: raw, oob: make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))}
}

// Read reads like the connection's Read and notes when the kernel received
// the bytes.
func (k *kernelClock) Read(p []byte) (int, error) {
	var (
		n, oobn int
		err     error
	)
	rerr := k.raw.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, err = unix.Recvmsg(int(fd), p, k.oob, 0)
			if err != unix.EINTR {
				break
			}
		}
		if err == unix.EAGAIN {
			k.idle.Store(true) // parked until the socket is readable
			if w := k.wake.Swap(nil); w != nil {
				(*w)()
			}
			return false
		}
		return true
	})
	k.idle.Store(false)
	now := time.Now()
	switch {
	case rerr != nil:
		return 0, rerr
	case err != nil:
		return 0, os.NewSyscallError("recvmsg", err)
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	k.at = now
	if ts, ok := timestamp(k.oob[:oobn]); ok {
		// The kernel's time is the wall clock's: kept as an age from now,
		// so that the result carries the monotonic reading the clocks are
		// compared with. A receive "after" now (the wall clock stepped) is
		// taken as now.
		if age := now.Sub(ts); age > 0 {
			k.at = now.Add(-age)
		}
	}
	return n, nil
}

// timestamp finds SCM_TIMESTAMPNS in a control message buffer.
func timestamp(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS &&
			len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(int64(ts.Sec), int64(ts.Nsec)), true
		}
	}
	return time.Time{}, false
}

// received is when the kernel received the bytes of the last read.
func (k *kernelClock) received() time.Time { return k.at }

// unread reports input the reader has not finished with: it is not waiting
// on an empty socket, or bytes wait in the socket. Then the reader calls
// wake when it next parks. wake is set before idle is read, and the reader
// sets idle before it takes wake: a reader that parks meanwhile is seen
// parked here or calls wake, or both.
func (k *kernelClock) unread(wake func()) bool {
	k.wake.Store(&wake)
	if !k.idle.Load() {
		return true
	}
	var n int
	if err := k.raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); err != nil || n == 0 {
		k.wake.Store(nil)
		return false
	}
	return true
}
