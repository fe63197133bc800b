package engines

import "syscall"

// groupAttr puts the engine in a process group of its own (killed whole at
// the end of a game). macOS has no Pdeathsig: an engine outlives a server
// that is killed with SIGKILL (a server that stops normally stops its
// engines); docs/DEPLOY.md, Platforms, says so.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// maxrssUnit: macOS reports ru_maxrss in bytes.
const maxrssUnit = 1
