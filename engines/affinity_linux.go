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
//
// If the affinity cannot be set (the CPU left the server's cpuset since it
// was chosen), the engine starts on any CPU and pinErr says why: that is the
// server's problem, not the engine's, and must not score as a crash.
func startOn(cmd *exec.Cmd, cpus []int) (pinErr, err error) {
	if len(cpus) == 0 {
		return nil, cmd.Start()
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("read CPU affinity: %w", err), cmd.Start()
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("set CPU affinity %v: %w", cpus, err), cmd.Start()
	}
	err = cmd.Start()
	// The thread must live on, so it is unlocked, not left to end with this
	// goroutine: its exit would kill the engine (Pdeathsig is per thread).
	// Should restoring fail (the cpuset shrank meanwhile), the thread works on
	// with fewer CPUs, which is only slower.
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil {
		pinErr = fmt.Errorf("restore a launcher thread's CPU affinity: %w", rerr)
	}
	return pinErr, err
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
