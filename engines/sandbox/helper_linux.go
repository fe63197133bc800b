//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/taikai-dev/taikai/engines/sandbox/helper"
	"golang.org/x/sys/unix"
)

// HelperArg is the first argument of a binary started as the sandbox's
// helper (see Config.Helper and MaybeHelper).
const HelperArg = helper.Arg

// HelperProgram is the small helper program (cmd/taikai-sandbox-helper)
// that runs first in every sandbox instead of Config.Helper when it sits
// beside it; it is mounted at SmallHelperPath.
const HelperProgram = "taikai-sandbox-helper"

// SmallHelperPath is where HelperProgram appears inside every sandbox.
const SmallHelperPath = "/.taikai/helper"

// MaybeHelper must be called first thing in the main function of the binary
// named by Config.Helper (cmd/taikai, and test binaries that make
// sandboxes). In a process started as the sandbox's helper it never returns:
// inside the sandbox, as the engine, it opens the seat's listener on
// 127.0.0.1:PORT (unless PORT is 0) and hands it to the server over an
// inherited socket, limits its open files and processes, then execs the
// engine, which keeps its pid and all of that (its CPUs are set when bwrap
// starts: see startPinned). Otherwise it does nothing.
func MaybeHelper() {
	if err := helper.Main(); err != nil {
		fmt.Fprintf(os.Stderr, "taikai sandbox: %v\n", err)
		os.Exit(127)
	}
}

// helperArgs is the command line bwrap runs: the helper, then the engine.
func helperArgs(cfg *Config, argv []string) []string {
	first := HelperPath
	if cfg.small != "" {
		first = SmallHelperPath
	}
	return append([]string{first, HelperArg, strconv.Itoa(cfg.Port), strconv.Itoa(cfg.NoFile), strconv.Itoa(cfg.Pids), "--"}, argv...)
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
