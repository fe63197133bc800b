//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// HelperArg is the first argument of a binary started as the sandbox's
// helper (see Config.Helper and MaybeHelper).
const HelperArg = "__taikai-sandbox-listen"

// HelperPath is where Config.Helper (the taikai binary) appears inside every
// sandbox: built-in engines run it from there.
const HelperPath = "/.taikai/taikai"

// helperFd is the helper's end of the socket pair to the server.
const helperFd = 6

// MaybeHelper must be called first thing in the main function of the binary
// named by Config.Helper (cmd/taikai, and test binaries that make
// sandboxes). In a process started as the sandbox's helper it never returns:
// inside the sandbox, as the engine, it opens the seat's listener on
// 127.0.0.1:PORT (unless PORT is 0) and hands it to the server over an
// inherited socket, limits its open files and processes, pins itself to
// CPUS (unless "-"), then execs the engine, which keeps its pid and all of
// that. Otherwise it does nothing.
func MaybeHelper() {
	if len(os.Args) < 2 || os.Args[1] != HelperArg {
		return
	}
	err := helper(os.Args[2:])
	fmt.Fprintf(os.Stderr, "taikai sandbox: %v\n", err)
	os.Exit(127)
}

// helperArgs is the command line bwrap runs: the helper, then the engine.
func helperArgs(cfg *Config, argv []string) []string {
	cpus := "-"
	if len(cfg.CPUs) > 0 {
		s := make([]string, len(cfg.CPUs))
		for i, c := range cfg.CPUs {
			s[i] = strconv.Itoa(c)
		}
		cpus = strings.Join(s, ",")
	}
	return append([]string{HelperPath, HelperArg, strconv.Itoa(cfg.Port), strconv.Itoa(cfg.NoFile), strconv.Itoa(cfg.Pids), cpus, "--"}, argv...)
}

// helper's arguments: PORT NOFILE NPROC CPUS -- ENGINE ARGV...
func helper(args []string) error {
	if len(args) < 6 || args[4] != "--" {
		return fmt.Errorf("usage: %s PORT NOFILE NPROC CPUS -- COMMAND...", HelperArg)
	}
	var n [3]uint64
	for i := range n {
		v, err := strconv.ParseUint(args[i], 10, 32)
		if err != nil {
			return fmt.Errorf("bad argument %q", args[i])
		}
		n[i] = v
	}
	port, nofile, nproc := n[0], n[1], n[2]
	if port != 0 {
		if err := handListener(os.NewFile(helperFd, "taikai-seat"), strconv.FormatUint(port, 10)); err != nil {
			return err
		}
	}
	// Nothing but stdin, stdout and stderr goes on to the engine.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	// syscall.Setrlimit, so that Go does not restore its own open-files
	// limit in the exec.
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: nofile, Max: nofile}); err != nil {
		return fmt.Errorf("limit open files: %w", err)
	}
	// Processes and threads of the engine's uid in the sandbox's own user
	// namespace (counted per namespace since Linux 5.14): the process
	// limit that needs no cgroup.
	if err := syscall.Setrlimit(unix.RLIMIT_NPROC, &syscall.Rlimit{Cur: nproc, Max: nproc}); err != nil {
		return fmt.Errorf("limit processes: %w", err)
	}
	runtime.LockOSThread() // the affinity and the exec are this thread's
	if args[3] != "-" {
		var set unix.CPUSet
		for _, c := range strings.Split(args[3], ",") {
			i, err := strconv.Atoi(c)
			if err != nil {
				return fmt.Errorf("bad CPU %q", c)
			}
			set.Set(i)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("pin to CPUs %s: %w", args[3], err)
		}
	}
	argv := args[5:]
	// Looked up in the engine's PATH, as bwrap's execvp would.
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, os.Environ())
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
