//go:build unix

package tournament_test

import "syscall"

// processExists reports whether pid names a process (a zombie too).
func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }
