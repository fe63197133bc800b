package main

import (
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
