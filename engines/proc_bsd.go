//go:build unix && !linux && !darwin

package engines

import "syscall"

// groupAttr puts the engine in a process group of its own (killed whole at
// the end of a game); there is no Pdeathsig here.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// maxrssUnit: the BSDs report ru_maxrss in KiB.
const maxrssUnit = 1024
