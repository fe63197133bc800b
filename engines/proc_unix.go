//go:build unix

package engines

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// procGroup is an unsandboxed engine's process group: the engine leads it
// (groupAttr sets Setpgid) and its children are in it unless they leave.
type procGroup struct{ pgid int }

// startGroup is called right after cmd.Start: on Unix the group already
// exists, its id is the engine's pid.
func startGroup(cmd *exec.Cmd) (*procGroup, error) {
	return &procGroup{pgid: cmd.Process.Pid}, nil
}

// kill kills every process of the group, even when the leader has exited.
func (g *procGroup) kill() {
	if g != nil {
		_ = syscall.Kill(-g.pgid, syscall.SIGKILL)
	}
}

// release frees what the group holds once its leader is reaped: nothing on Unix.
func (g *procGroup) release() {}

// peakMemory is the engine's main process's peak resident set in bytes, from
// its rusage (getrusage's ru_maxrss; its unit is per system: maxrssUnit).
func (g *procGroup) peakMemory(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss) * maxrssUnit // Maxrss is int32 on 32-bit Linux
	}
	return 0
}

// isAddrInUse reports whether a listen failed because the port is taken.
func isAddrInUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }
