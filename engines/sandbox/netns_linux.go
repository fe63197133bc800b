//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
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
	err := inNetns(-1, nil, func() error {
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
// in the thread's current one, which f may leave by unshare; with mnt, also
// inside that mount namespace (see leanMounts). Sockets that f opens, and
// processes it starts, stay in those namespaces; the thread then returns to
// the server's. f runs in a goroutine of its own, so that a thread that
// could not return ends with it (see inNetnsLocked). That thread must not
// end while a process it started runs: bwrap's parent-death signal is the
// death of the thread that started it.
func inNetns(fd int, mnt *os.File, f func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- inNetnsLocked(fd, mnt, f) }()
	return <-errc
}

func inNetnsLocked(fd int, mnt *os.File, f func() error) (err error) {
	runtime.LockOSThread()
	var undo []func() error // what brings the thread back, last first
	defer func() {
		back := !errors.Is(err, errThreadStuck)
		for i := len(undo) - 1; i >= 0; i-- {
			if uerr := undo[i](); uerr != nil {
				err, back = errors.Join(err, uerr), false
			}
		}
		if back {
			runtime.UnlockOSThread()
		}
		// Else this thread must not run anything else: it stays locked,
		// and the runtime ends it with this goroutine (a process started
		// from it gets its parent-death signal; the error says so to the
		// caller, whose start fails).
	}()
	if mnt != nil {
		back, err := enterMounts(mnt)
		if back != nil {
			undo = append(undo, back)
		}
		if err != nil {
			return err
		}
	}
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return err
	}
	undo = append(undo, func() error {
		defer orig.Close()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("leave the network namespace: %w", err)
		}
		return nil
	})
	if fd >= 0 {
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("enter the network namespace: %w", err)
		}
	}
	return f()
}

// enterMounts moves the calling thread, locked, into the mount namespace
// mnt, or into a new one if mnt is nil. back returns it to the server's
// namespace, root and working directory; an error from back means the
// thread cannot go back. A thread may enter a mount namespace only with its
// own root and working directory (not shared with the process's other
// threads: CLONE_FS); it keeps them, the same as the process's. The server
// never changes its working directory or umask, which such a thread would
// no longer follow.
func enterMounts(mnt *os.File) (back func() error, err error) {
	var root, cwd unix.Stat_t
	if err := unix.Stat("/", &root); err != nil {
		return nil, err
	}
	origNS, err := os.Open("/proc/thread-self/ns/mnt")
	if err != nil {
		return nil, err
	}
	wd, err := unix.Open(".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		origNS.Close()
		return nil, fmt.Errorf("open the working directory: %w", err)
	}
	if err := unix.Fstat(wd, &cwd); err != nil {
		origNS.Close()
		unix.Close(wd)
		return nil, err
	}
	back = func() error {
		defer origNS.Close()
		defer unix.Close(wd)
		if err := unix.Setns(int(origNS.Fd()), unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("leave the sandboxes' mount namespace: %w", err)
		}
		if err := unix.Fchdir(wd); err != nil {
			return fmt.Errorf("leave the sandboxes' mount namespace: %w", err)
		}
		// setns set the root to the namespace's: the process's, unless
		// the server runs chrooted.
		var r, c unix.Stat_t
		if unix.Stat("/", &r) != nil || unix.Stat(".", &c) != nil || r.Dev != root.Dev || r.Ino != root.Ino || c.Dev != cwd.Dev || c.Ino != cwd.Ino {
			return errors.New("leave the sandboxes' mount namespace: the thread's root or working directory is not the server's")
		}
		return nil
	}
	if mnt == nil {
		// A new namespace, a copy of the server's (CLONE_NEWNS implies
		// CLONE_FS).
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			origNS.Close()
			unix.Close(wd)
			return nil, fmt.Errorf("new mount namespace: %w", err)
		}
		return back, nil
	}
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		origNS.Close()
		unix.Close(wd)
		return nil, fmt.Errorf("enter the sandboxes' mount namespace: %w", err)
	}
	if err := unix.Setns(int(mnt.Fd()), unix.CLONE_NEWNS); err != nil {
		return back, fmt.Errorf("enter the sandboxes' mount namespace: %w", err)
	}
	return back, nil
}

// leanMounts is the mount namespace that bwrap starts in where the server
// makes network namespaces: the server's own without /sys and the mounts
// under /sys and /dev (here 16 of the host's 21 mounts, the cgroup
// hierarchies among them), and with the sandboxes' /dev (devTemplate).
// bwrap copies the mount namespace it starts in for the sandbox, reads all
// of it back from /proc/self/mountinfo at every bind (14 times a sandbox
// with --dev), and unmounts the copy when the sandbox ends: each mount it
// need not copy saves CPU at every start (about 0.9 ms of a sandbox's 11 ms
// here). Nothing of a sandbox comes from /sys. Its mounts are slaves of the
// server's where those are shared (a mount made later under one, a volume,
// shows there too), private elsewhere (a mount made later there does not:
// a data directory must be mounted before the server starts); nothing made
// there reaches the host. Nil where it cannot be made; bwrap then starts in
// the server's, with --dev.
var leanMounts = sync.OnceValue(func() *os.File {
	type result struct {
		f   *os.File
		err error
	}
	c := make(chan result, 1)
	go func() {
		var r result
		defer func() { c <- r }()
		// The thread may be the process's main one, whose namespace
		// /proc/self shows (detectCgroups reads /proc/self/mountinfo): it
		// goes back to the server's namespace before it is unlocked, or
		// ends (the runtime parks a main thread for good) if it cannot.
		runtime.LockOSThread()
		back, err := enterMounts(nil)
		if r.err = err; err == nil {
			r.f, r.err = makeLean()
		}
		if back != nil {
			if err := back(); err != nil {
				r.err = errors.Join(r.err, err)
				return
			}
		}
		runtime.UnlockOSThread()
	}()
	r := <-c
	if r.err != nil {
		if r.f != nil {
			r.f.Close()
		}
		return nil
	}
	return r.f
})

// makeLean turns the calling thread's new mount namespace into the lean
// one, and returns it.
func makeLean() (*os.File, error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return nil, err
	}
	mounts, err := os.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return nil, err
	}
	for _, p := range unneededMounts(string(mounts)) {
		// Gone with one above it: ENOENT, or EINVAL (not a mount).
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("unmount %s: %w", p, err)
		}
	}
	if err := devTemplate(); err != nil {
		return nil, fmt.Errorf("the sandboxes' /dev: %w", err)
	}
	return os.Open("/proc/thread-self/ns/mnt")
}

// devNodes are the devices of a sandbox's /dev, those of bwrap's --dev.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// devTemplate puts the sandboxes' /dev over /dev in the lean mount
// namespace. bwrap's --dev makes one for each sandbox: a tmpfs, a bind
// mount of each device (with a read of mountinfo each), a devpts; about
// 1.2 ms of CPU a sandbox here. This one is made once, read-only: the
// devices (device files with the host's numbers and modes), the links to
// /proc/self/fd, and an empty shm, where each sandbox mounts a tmpfs of its
// own (see bwrapArgs). Unlike --dev's, it has no pts: an engine gets no
// pseudo-terminal. Made on /sys (empty there), then moved.
func devTemplate() error {
	const stage = "/sys"
	if err := unix.Mount("tmpfs", stage, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return err
	}
	for _, n := range devNodes {
		src, dst := "/dev/"+n, stage+"/"+n
		var st unix.Stat_t
		if err := unix.Stat(src, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
			continue // --dev would not have it either
		}
		// The device itself: made here, in the host's user namespace, it
		// works in the sandboxes'. A server that cannot (no CAP_MKNOD)
		// has no lean namespace: bwrap's --dev then.
		if err := unix.Mknod(dst, st.Mode, int(st.Rdev)); err != nil {
			return fmt.Errorf("mknod %s: %w", dst, err)
		}
		if err := unix.Chmod(dst, st.Mode&0o777); err != nil { // not the umask's
			return err
		}
	}
	for name, target := range map[string]string{
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
		"stderr": "/proc/self/fd/2", "core": "/proc/kcore",
	} {
		if err := os.Symlink(target, stage+"/"+name); err != nil {
			return err
		}
	}
	if err := os.Mkdir(stage+"/shm", 0o755); err != nil {
		return err
	}
	if err := unix.Mount("", stage, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("remount read-only: %w", err)
	}
	if err := unix.Mount(stage, "/dev", "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("move onto /dev: %w", err)
	}
	return nil
}

// unneededMounts lists the mount points, in a mountinfo text, that no
// sandbox needs: /sys and what is under /sys or /dev (a sandbox's /dev is
// the lean namespace's own), outermost first (several mounts may share a
// point: each is listed as often).
func unneededMounts(mountinfo string) []string {
	var out []string
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		p := unescapeMount(f[4])
		if p == "/sys" || strings.HasPrefix(p, "/sys/") || strings.HasPrefix(p, "/dev/") {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(a) - len(b) })
	return out
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
