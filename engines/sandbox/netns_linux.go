//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Network namespaces kept for reuse. A sandbox's own network namespace
// (bwrap's --unshare-net) costs about 0.75 ms of CPU here, setup and the
// kernel's cleanup after it: an eighth of a sandbox. A server that may
// enter namespaces (root on a host; the setns listener) instead makes
// namespaces with only `lo` up, and starts bwrap inside one (--share-net),
// one sandbox at a time. The namespace goes back to the pool once every
// process of its sandbox is gone and the seat's listener is closed, so the
// next sandbox finds nothing of the previous one there but the kernel's
// counters (/proc/net/snmp) and closed connections in TIME_WAIT. It is
// owned by the host's user namespace: the engine, in a user namespace of
// its own without capabilities, cannot change it (no address, route or
// sysctl), as in a namespace of bwrap's.

// maxIdleNetns bounds the namespaces kept unused; more are closed.
const maxIdleNetns = 16

var netnsPool struct {
	mu   sync.Mutex
	idle []*os.File
}

// pooledNetns tells whether this server can make network namespaces (tried
// once).
var pooledNetns = sync.OnceValue(func() bool {
	ns, err := newNetns()
	if err != nil {
		return false
	}
	putNetns(ns)
	return true
})

// getNetns takes an idle namespace, or makes one.
func getNetns() (*os.File, error) {
	netnsPool.mu.Lock()
	if n := len(netnsPool.idle); n > 0 {
		ns := netnsPool.idle[n-1]
		netnsPool.idle = netnsPool.idle[:n-1]
		netnsPool.mu.Unlock()
		return ns, nil
	}
	netnsPool.mu.Unlock()
	return newNetns()
}

// putNetns makes ns idle again: only once nothing of its last sandbox is
// left in it.
func putNetns(ns *os.File) {
	netnsPool.mu.Lock()
	defer netnsPool.mu.Unlock()
	if len(netnsPool.idle) < maxIdleNetns {
		netnsPool.idle = append(netnsPool.idle, ns)
		return
	}
	ns.Close()
}

// newNetns makes a network namespace with its loopback up.
func newNetns() (*os.File, error) {
	var ns *os.File
	err := inNetns(-1, func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("new network namespace: %w", err)
		}
		if err := loopbackUp(); err != nil {
			return err
		}
		f, err := os.Open("/proc/thread-self/ns/net")
		ns = f
		return err
	})
	return ns, err
}

// loopbackUp brings up lo in the calling thread's network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}

// inNetns runs f on an OS thread of its own inside the network namespace
// of fd (of the namespace, or a pidfd of a process in it), or, with fd -1,
// in the thread's current one, which f may leave by unshare. Sockets
// that f opens, and processes it starts, stay in that namespace; the thread
// then returns to the server's. f runs in a goroutine of its own, so that a
// thread that could not return ends with it (see inNetnsLocked).
func inNetns(fd int, f func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- inNetnsLocked(fd, f) }()
	return <-errc
}

func inNetnsLocked(fd int, f func() error) error {
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	if fd >= 0 {
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			return fmt.Errorf("enter the network namespace: %w", err)
		}
	}
	ferr := f()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		// This thread must not run anything else: leave it locked, and the
		// runtime ends it with this goroutine.
		return errors.Join(ferr, fmt.Errorf("leave the network namespace: %w", err))
	}
	runtime.UnlockOSThread()
	return ferr
}

// loopbackWait bounds the wait for a sandbox's loopback to come up.
const loopbackWait = 5 * time.Second

// listen opens a TCP listener on 127.0.0.1:port in the calling thread's
// network namespace. In a namespace of bwrap's, whose init brings the
// loopback up a moment after bwrap has reported its pid, a bind to
// 127.0.0.1 fails with EADDRNOTAVAIL until then (seen in 2 of 3 taikai
// bench runs, a sandboxed game lost as a crash): it tries again until it
// is up.
func listen(port int) (net.Listener, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	for deadline := time.Now().Add(loopbackWait); errors.Is(err, unix.EADDRNOTAVAIL) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		ln, err = net.Listen("tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("listen in the sandbox: %w", err)
	}
	return ln, nil
}

// netnsHold returns a pooled namespace once both its sandbox has ended
// (every process gone) and the seat's listener is closed.
type netnsHold struct {
	ns    *os.File
	holds atomic.Int32
	bad   atomic.Bool // something of the sandbox may be left: not reused
}

func (h *netnsHold) release() {
	if h.holds.Add(-1) != 0 {
		return
	}
	if h.bad.Load() {
		h.ns.Close()
		return
	}
	putNetns(h.ns)
}

// seatListener is the seat's listener in a pooled namespace: its Close
// gives the namespace back. Use it through net.Listener and SetDeadline.
type seatListener struct {
	*net.TCPListener
	once sync.Once
	hold *netnsHold
}

func (l *seatListener) Close() error {
	err := l.TCPListener.Close()
	l.once.Do(l.hold.release)
	return err
}
