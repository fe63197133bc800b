package engines

import "syscall"

// groupAttr puts the engine in a process group of its own (killed whole at
// the end of a game) and has the kernel kill it if the thread that started
// it dies, so that an engine never outlives the server.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// maxrssUnit: Linux reports ru_maxrss in KiB.
const maxrssUnit = 1024
