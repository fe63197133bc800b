package tournament

import "golang.org/x/sys/unix"

// osYield gives this thread's CPU to another thread ready to run on it, if
// any (sched_yield(2)); runtime.Gosched yields only to goroutines.
func osYield() { _, _, _ = unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
