//go:build !linux

package engines

import (
	"errors"
	"os/exec"
)

func startOn(cmd *exec.Cmd, cpus []int) (pinErr, err error) {
	if len(cpus) > 0 {
		pinErr = errors.New("CPU affinity is supported on Linux only")
	}
	return pinErr, cmd.Start()
}

// AllowedCPUs is supported on Linux only.
func AllowedCPUs() ([]int, error) {
	return nil, errors.New("CPU affinity is supported on Linux only")
}

// SetCPUs is supported on Linux only.
func (p *Process) SetCPUs(cpus []int) error {
	return errors.New("CPU affinity is supported on Linux only")
}
