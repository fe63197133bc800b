package main

import "golang.org/x/sys/unix"

// nonDumpable forbids core dumps of the server and ptrace or reading
// /proc/PID/environ|mem by other users' processes.
func nonDumpable() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
