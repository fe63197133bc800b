//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// HelperArg is the first argument of a binary started as the sandbox's
// listener helper (see Config.Helper and MaybeHelper).
const HelperArg = "__taikai-sandbox-listen"

// helperMount is where Config.Helper appears inside the sandbox.
const helperMount = "/.taikai/listen"

// helperFd is the helper's end of the socket pair to the server.
const helperFd = 6

// helperWaitArg, after the port, makes the helper exec the waiter of a
// prepared sandbox (see Prepare), whose command line follows, with the
// socket to the server left open; otherwise "--" and the engine's command
// follow the port.
const helperWaitArg = "--wait"

// MaybeHelper must be called first thing in the main function of the binary
// named by Config.Helper (cmd/taikai). In a process started as the sandbox's
// helper it never returns: inside the sandbox, it opens the listener on
// 127.0.0.1:PORT (unless PORT is 0) and hands it to the server over an
// inherited socket, then execs the engine after "--", which keeps its pid,
// or, with --wait, the waiter of a prepared sandbox, which keeps the socket
// to read the engine's command from. Otherwise it does nothing.
func MaybeHelper() {
	if len(os.Args) < 4 || os.Args[1] != HelperArg {
		return
	}
	err := helper(os.Args[2], os.Args[3], os.Args[4:])
	fmt.Fprintf(os.Stderr, "taikai sandbox: %v\n", err)
	os.Exit(127)
}

// helper's arguments: PORT -- ENGINE ARGV..., or PORT --wait WAITER ARGV...
func helper(port, mode string, argv []string) error {
	conn := os.NewFile(helperFd, "taikai-seat")
	if port != "0" {
		if err := handListener(conn, port); err != nil {
			return err
		}
	}
	// Nothing but stdin, stdout and stderr goes on to the engine; the
	// waiter also gets the socket, and closes it before the engine runs.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	switch {
	case mode == helperWaitArg && len(argv) > 0:
		if _, err := unix.FcntlInt(helperFd, unix.F_SETFD, 0); err != nil {
			return err
		}
	case mode == "--" && len(argv) > 0:
	default:
		return fmt.Errorf("usage: %s PORT -- COMMAND... | PORT %s WAITER...", HelperArg, helperWaitArg)
	}
	// Looked up in the engine's PATH, as bwrap's execvp would.
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	err = syscall.Exec(path, argv, os.Environ())
	runtime.KeepAlive(conn) // its finalizer would close fd 6, which the waiter reads
	return err
}

// handListener opens the seat's listener and hands it to the server.
func handListener(conn *os.File, port string) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		return err
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return err
	}
	defer f.Close()
	defer ln.Close()
	if err := unix.Sendmsg(int(conn.Fd()), []byte{1}, unix.UnixRights(int(f.Fd())), nil, 0); err != nil {
		return fmt.Errorf("hand the listener to the server: %w", err)
	}
	return nil
}

// helperArgs is the command line bwrap runs when a helper opens the listener.
func helperArgs(port int, argv []string) []string {
	return append([]string{helperMount, HelperArg, strconv.Itoa(port), "--"}, argv...)
}

// receiveListener waits for the helper's listener.
func receiveListener(conn *os.File, deadline time.Time) (net.Listener, error) {
	_ = conn.SetReadDeadline(deadline)
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	var n, oobn int
	var rerr error
	err = raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return nil, fmt.Errorf("wait for the sandbox's listener: %w", err)
	}
	if n == 0 {
		return nil, fmt.Errorf("the sandbox's helper exited before opening the listener (see the output)")
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("no listener from the sandbox's helper: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("no listener from the sandbox's helper: %v", err)
	}
	f := os.NewFile(uintptr(fds[0]), "seat")
	defer f.Close()
	return net.FileListener(f)
}
