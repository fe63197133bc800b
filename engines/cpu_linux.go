package engines

import (
	"errors"
	"fmt"
	"os/exec"

	"golang.org/x/sys/unix"

	"github.com/taikai-dev/taikai/engines/sandbox"
)

// startOn starts cmd with its CPU affinity set to cpus (all CPUs if empty),
// as fastchess's -use-affinity does: the child inherits the affinity of the
// thread that forks it, set here for the moment of the fork, so that every
// thread the engine starts has it. Nothing changes it afterwards. The fork
// is on the sandbox package's fork thread, which never ends: the engine's
// parent-death signal (groupAttr) is that thread's.
func startOn(cmd *exec.Cmd, cpus []int) error {
	err := sandbox.ForkStart(cmd, cpus)
	var pin *sandbox.PinError
	if errors.As(err, &pin) {
		// A CPU that cannot be had (it left the server's cpuset) is the
		// server's problem, not the engine's: the engine then starts on any
		// CPU.
		return sandbox.ForkStart(cmd, nil)
	}
	return err
}

// AllowedCPUs returns the CPUs this process may run on, in order.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("read CPU affinity: %w", err)
	}
	var cpus []int
	for c := 0; len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
