//go:build linux

// Package helper is the program that runs first in every engine sandbox
// (see engines/sandbox), inside it and as the engine: it opens the seat's
// listener and hands it to the server, sets the limits, then execs the
// engine. It imports little, so that cmd/taikai-sandbox-helper, which is
// this package alone, starts in a few milliseconds (the taikai binary,
// which also runs it through sandbox.MaybeHelper, takes tens: its package
// initializers run first).
package helper

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Arg is the first argument of a helper's command line:
// PROGRAM Arg PORT NOFILE NPROC -- ENGINE ARGV...
const Arg = "__taikai-sandbox-listen"

// SeatFd is the helper's end of the socket pair to the server (fd 6 is
// bwrap's seccomp filter, which bwrap closes).
const SeatFd = 7

// Main runs the helper on os.Args if os.Args[1] is Arg: it does not return
// unless it fails. It returns nil at once on any other command line.
func Main() error {
	if len(os.Args) < 2 || os.Args[1] != Arg {
		return nil
	}
	args := os.Args[2:]
	if len(args) < 5 || args[3] != "--" {
		return errors.New("usage: " + Arg + " PORT NOFILE NPROC -- COMMAND...")
	}
	var n [3]uint64
	for i := range n {
		v, err := strconv.ParseUint(args[i], 10, 32)
		if err != nil {
			return errors.New("bad argument " + strconv.Quote(args[i]))
		}
		n[i] = v
	}
	port, nofile, nproc := n[0], n[1], n[2]
	if port != 0 {
		if err := handListener(int(port)); err != nil {
			return err
		}
	}
	// Nothing but stdin, stdout and stderr goes on to the engine.
	if err := closeOnExec(); err != nil {
		return err
	}
	// syscall.Setrlimit, so that Go does not restore its own open-files
	// limit in the exec.
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: nofile, Max: nofile}); err != nil {
		return errors.New("limit open files: " + err.Error())
	}
	// Processes and threads of the engine's uid in the sandbox's own user
	// namespace (counted per namespace since Linux 5.14): the process
	// limit that needs no cgroup.
	if err := syscall.Setrlimit(rlimitNproc, &syscall.Rlimit{Cur: nproc, Max: nproc}); err != nil {
		return errors.New("limit processes: " + err.Error())
	}
	argv := args[4:]
	path, err := lookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, os.Environ())
}

// lookPath finds an engine's command in its PATH, as bwrap's execvp would,
// and fails with os/exec.LookPath's messages (engines.startFailure reads
// them).
func lookPath(file string) (string, error) {
	if strings.Contains(file, "/") {
		if _, err := os.Stat(file); err != nil {
			return "", errors.New("exec: " + strconv.Quote(file) + ": " + err.Error())
		}
		return file, nil
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && syscall.Access(p, 1) == nil { // X_OK
			return p, nil
		}
	}
	return "", errors.New("exec: " + strconv.Quote(file) + ": executable file not found in $PATH")
}

// closeOnExec marks every descriptor but 0, 1 and 2 close-on-exec.
func closeOnExec() error {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}

// handListener opens the seat's listener on 127.0.0.1:port and hands it
// to the server over SeatFd (SCM_RIGHTS).
func handListener(port int) error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return errors.New("listen: " + err.Error())
	}
	defer syscall.Close(fd)
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1) // as Go's net.Listen
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return errors.New("listen on 127.0.0.1:" + strconv.Itoa(port) + ": " + err.Error())
	}
	if err := syscall.Listen(fd, 4096); err != nil { // the kernel caps it at somaxconn
		return errors.New("listen: " + err.Error())
	}
	if err := syscall.Sendmsg(SeatFd, []byte{1}, syscall.UnixRights(fd), nil, 0); err != nil {
		return errors.New("hand the listener to the server: " + err.Error())
	}
	return nil
}
