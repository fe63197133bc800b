//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// helperWaitArg, after the port, makes the helper wait for its command
// (Prepare); otherwise "--" and the engine's command follow the port.
const helperWaitArg = "--wait"

// helperMsgMax bounds Exec's message: command and environment.
const helperMsgMax = 60 << 10

// MaybeHelper must be called first thing in the main function of the binary
// named by Config.Helper (cmd/taikai). In a process started as the sandbox's
// helper it never returns: inside the sandbox, it opens the listener on
// 127.0.0.1:PORT (unless PORT is 0) and hands it to the server over an
// inherited socket, then execs the engine, which keeps its pid: the one
// after "--", or, with --wait (Prepare), the one Exec sends over that socket.
// Otherwise it does nothing.
func MaybeHelper() {
	if len(os.Args) < 4 || os.Args[1] != HelperArg {
		return
	}
	err := helper(os.Args[2], os.Args[3], os.Args[4:])
	fmt.Fprintf(os.Stderr, "taikai sandbox: %v\n", err)
	os.Exit(127)
}

// helper's arguments: PORT -- ENGINE ARGV..., or PORT --wait.
func helper(port, mode string, argv []string) error {
	conn := os.NewFile(helperFd, "taikai-seat")
	if port != "0" {
		if err := handListener(conn, port); err != nil {
			return err
		}
	}
	env := os.Environ()
	if mode == helperWaitArg {
		var err error
		if argv, env, err = waitForCommand(conn); err != nil {
			return err
		}
	} else if mode != "--" || len(argv) == 0 {
		return fmt.Errorf("usage: %s PORT -- COMMAND... | PORT %s", HelperArg, helperWaitArg)
	}
	conn.Close()
	// Looked up in the engine's PATH, as bwrap's execvp would.
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			os.Setenv("PATH", v)
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	// Nothing but stdin, stdout and stderr goes on to the engine.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	return syscall.Exec(path, argv, env)
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

// waitForCommand reads Exec's message: the command and its environment,
// and the descriptors that become the engine's 0, 1 and 2.
func waitForCommand(conn *os.File) ([]string, []string, error) {
	buf, oob := make([]byte, helperMsgMax+1), make([]byte, unix.CmsgSpace(3*4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(int(conn.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("wait for the command: %w", err)
	}
	if n == 0 {
		os.Exit(0) // the server stopped the prepared sandbox
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, nil, fmt.Errorf("no descriptors with the command: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 3 {
		return nil, nil, fmt.Errorf("want 3 descriptors with the command, got %d: %v", len(fds), err)
	}
	for i, fd := range fds {
		if err := unix.Dup3(fd, i, 0); err != nil {
			return nil, nil, fmt.Errorf("dup2: %w", err)
		}
		unix.Close(fd)
	}
	var m execMsg
	if err := json.Unmarshal(buf[:n], &m); err != nil || len(m.Argv) == 0 {
		return nil, nil, fmt.Errorf("bad command message: %v", err)
	}
	return m.Argv, m.Env, nil
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
