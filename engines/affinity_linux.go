package engines

import (
	"fmt"
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// startOn starts cmd with its CPU affinity set to cpus (all CPUs if empty).
// The child inherits the affinity of the thread that forks it, set here for
// the moment of the fork, so that every thread the engine ever starts has it.
// Setting it on the child afterwards would miss threads started in between.
func startOn(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("read CPU affinity: %w", err)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("set CPU affinity %v: %w", cpus, err)
	}
	err := cmd.Start()
	// The thread must live on: its exit would kill the engine (Pdeathsig is
	// per thread). Should restoring fail (it cannot: the old set was valid),
	// the thread works on with fewer CPUs, which is only slower.
	_ = unix.SchedSetaffinity(0, &old)
	runtime.UnlockOSThread()
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
