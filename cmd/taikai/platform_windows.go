package main

import (
	"errors"
	"golang.org/x/sys/windows"
	"os"
	"os/exec"
	"syscall"
)

// groupAttr: a bench client (a built-in engine, which starts no process) needs
// no group on Windows.
func groupAttr() *syscall.SysProcAttr { return nil }

// killGroup kills cmd's process.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// stopWorker stops a worker process: Windows has no SIGTERM to send another
// process, so it is killed (its lost games are played again, as after a crash).
func stopWorker(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// raiseNoFile: Windows has no open-files limit of this kind (a process may
// hold millions of handles); the number sizes the HTTP connection caps.
func raiseNoFile() (cur, hard uint64, err error) { return 16384, 16384, nil }

// lockFile takes an exclusive lock on one byte of f far past its contents
// (so that the pid written at its start stays readable), held until the
// process exits; busy: another process holds it.
func lockFile(f *os.File) (busy bool, err error) {
	ol := windows.Overlapped{OffsetHigh: 1}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	return errors.Is(err, windows.ERROR_LOCK_VIOLATION), err
}
