//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// groupAttr starts a bench client in a process group of its own.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the process group of cmd, started with groupAttr.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// stopWorker asks a worker process to stop (it finishes its games' records).
func stopWorker(cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGTERM) }
