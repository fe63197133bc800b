//go:build !linux

package main

import (
	"os/exec"
	"testing"
)

// osUser is an ordinary user to run serve as: the tests that need one are
// Linux's (sandbox_test.go).
type osUser struct{}

// own would run cmd as u: not on this system.
func (u *osUser) own(tb testing.TB, cmd *exec.Cmd) {
	tb.Helper()
	tb.Fatal("running serve as another user is tested on Linux only")
}

// delegate would start cmd in a delegated cgroup v2: Linux's.
func delegate(tb testing.TB, cmd *exec.Cmd, u *osUser) bool { return false }

// sandboxErr says why engines cannot be sandboxed here: the sandbox is
// Linux's.
func sandboxErr(tb testing.TB) error { return platformSandbox() }
