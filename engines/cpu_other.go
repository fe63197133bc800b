//go:build !linux

package engines

import (
	"errors"
	"os/exec"
)

// startOn starts cmd; CPU affinity is Linux only.
func startOn(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) > 0 {
		return errors.New("CPU affinity is supported on Linux only")
	}
	return cmd.Start()
}

// AllowedCPUs is Linux only.
func AllowedCPUs() ([]int, error) { return nil, errors.New("CPU affinity is supported on Linux only") }
