//go:build unix

package main

import (
	"errors"
	"golang.org/x/sys/unix"
	"os"
	"os/exec"
	"syscall"
)

// groupAttr starts a bench client in a process group of its own.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the process group of cmd, started with groupAttr.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// stopWorker asks a worker process to stop (it finishes its games' records).
func stopWorker(cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGTERM) }

// raiseNoFile raises the open-files soft limit to the hard limit and returns
// the limit in force (the Go runtime does so too, on Linux; this says it).
func raiseNoFile() (cur, hard uint64, err error) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 1024, 1024, err
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &raised); err != nil {
			return lim.Cur, lim.Max, err
		}
		lim = raised
	}
	return lim.Cur, lim.Max, nil
}

// lockFile takes an exclusive lock on f, held until the process exits;
// busy: another process holds it.
func lockFile(f *os.File) (busy bool, err error) {
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	return errors.Is(err, unix.EWOULDBLOCK), err
}
