//go:build !linux

package engines

import (
	"errors"
	"os/exec"
)

func startOn(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) > 0 {
		return errors.New("CPU affinity is supported on Linux only")
	}
	return cmd.Start()
}

// AllowedCPUs is supported on Linux only.
func AllowedCPUs() ([]int, error) {
	return nil, errors.New("CPU affinity is supported on Linux only")
}
