//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
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

// MaybeHelper must be called first thing in the main function of the binary
// named by Config.Helper (cmd/taikai). In a process started as the sandbox's
// helper it never returns: inside the sandbox's network namespace, it opens
// the listener on 127.0.0.1:Port, hands it to the server over an inherited
// socket, and execs the engine, which keeps its pid. Otherwise it does
// nothing.
func MaybeHelper() {
	if len(os.Args) < 5 || os.Args[1] != HelperArg {
		return
	}
	err := helper(os.Args[2], os.Args[4:])
	fmt.Fprintf(os.Stderr, "taikai sandbox: %v\n", err)
	os.Exit(127)
}

// helper's arguments: PORT -- ENGINE ARGV...
func helper(port string, argv []string) error {
	conn := os.NewFile(helperFd, "taikai-seat")
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		return err
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		return err
	}
	if err := unix.Sendmsg(int(conn.Fd()), []byte{1}, unix.UnixRights(int(f.Fd())), nil, 0); err != nil {
		return fmt.Errorf("hand the listener to the server: %w", err)
	}
	f.Close()
	ln.Close()
	conn.Close()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	// Nothing but stdin, stdout and stderr goes on to the engine.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	return syscall.Exec(path, argv, os.Environ())
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
