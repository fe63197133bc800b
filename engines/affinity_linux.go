package engines

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"

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

// SetCPUs sets the CPUs the engine may run on, as it runs: every thread of its
// process and of the processes its main thread started (and theirs, and so
// on) that are still in its process group. A thread or process that ends
// meanwhile is skipped, and so is an engine that has exited (its process id
// may be another's by then). A thread that cannot be set does not stop the
// others; the errors are returned together.
//
// Only a process's main thread is asked for its children
// (/proc/PID/task/PID/children): asking every thread left the kernel that
// many more /proc entries to drop when the engine is reaped, and reaping
// became slow enough to hold a CPU for milliseconds (taikai bench's clock
// part, traced with perf: 47-92 ms in shrink_dcache_parent a run, against
// 2-3.5 ms without placement and 1.5-2 ms asking main threads only). A
// process started by another thread (a Go or Java engine's exec, often) is
// not seen.
//
// Threads inherit the affinity of the thread that starts them, so a thread
// started during the walk by one not yet set would keep the old one: the
// walk is repeated until it finds no thread it had not seen (4 times at
// most).
func (p *Process) SetCPUs(cpus []int) error {
	if len(cpus) == 0 {
		return errors.New("set CPU affinity: no CPUs")
	}
	select {
	case <-p.done:
		return nil
	default:
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	seen := make(map[int]bool)
	var errs error // of the last walk: the threads still not set
	for range 4 {
		var found bool
		found, errs = setTree(p.Pid(), p.pgid, &set, seen)
		if !found {
			break
		}
	}
	if errs != nil {
		return fmt.Errorf("set CPU affinity %v of engine process %d: %w", cpus, p.Pid(), errs)
	}
	return nil
}

// maxTree bounds the processes setTree visits.
const maxTree = 256

// setTree sets the affinity of every thread of process pid and of the
// descendants its main thread started, in process group pgid, and reports
// whether it met a thread not in seen (which it adds). A thread it cannot set
// is skipped, its error kept.
func setTree(pid, pgid int, set *unix.CPUSet, seen map[int]bool) (found bool, err error) {
	queue := []int{pid}
	visited := 0
	for len(queue) > 0 && visited < maxTree {
		proc := queue[0]
		queue = queue[1:]
		visited++
		// A descendant is taken only while it is in the engine's group: it
		// may have ended and its id been reused since it was listed. The
		// engine's own process, not yet reaped (SetCPUs), is taken even if
		// it left its group.
		if proc != pid && processGroup(proc) != pgid {
			continue
		}
		dir := "/proc/" + strconv.Itoa(proc) + "/task"
		tasks, rerr := os.ReadDir(dir)
		if rerr != nil {
			continue // it ended
		}
		for _, t := range tasks {
			tid, aerr := strconv.Atoi(t.Name())
			if aerr != nil {
				continue
			}
			if !seen[tid] {
				seen[tid], found = true, true
			}
			if serr := unix.SchedSetaffinity(tid, set); serr != nil && !errors.Is(serr, unix.ESRCH) {
				err = errors.Join(err, fmt.Errorf("thread %d of process %d: %w", tid, proc, serr))
			}
			if tid != proc {
				continue // see SetCPUs on why only the main thread's children
			}
			kids, _ := os.ReadFile(dir + "/" + t.Name() + "/children")
			for _, f := range bytes.Fields(kids) {
				if k, kerr := strconv.Atoi(string(f)); kerr == nil {
					queue = append(queue, k)
				}
			}
		}
	}
	return found, err
}

// processGroup returns the process group of a process, or -1 if it cannot be
// read (the process ended).
func processGroup(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 {
		return -1
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return -1
	}
	return g
}
