//go:build unix

package testkit

import "syscall"

// EPERM: the process exists but belongs to another user.
func exists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
