package engines

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procGroup is an unsandboxed engine's job object: the engine and every
// process it starts are in it, TerminateJobObject kills them all, and
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE kills them when the job's last handle
// closes, which the system does when the server exits however it exits.
type procGroup struct {
	mu   sync.Mutex
	job  windows.Handle // 0 once released
	peak int64          // the job's peak memory, kept at release
}

// groupAttr starts the engine suspended, so that it starts nothing before
// startGroup has put it in its job, and in a console process group of its
// own, so that Ctrl+C in the server's console reaches the server only (which
// then stops its engines), as Setpgid does on Unix.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
}

// startGroup puts the suspended engine in a new job and resumes it. On
// failure the engine is killed and reaped.
func startGroup(cmd *exec.Cmd) (*procGroup, error) {
	g, err := newJob(uint32(cmd.Process.Pid))
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("engine's job object: %w", err)
	}
	return g, nil
}

func newJob(pid uint32) (g *procGroup, err error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("CreateJobObject: %w", err)
	}
	defer func() {
		if err != nil {
			windows.CloseHandle(job)
		}
	}()
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return nil, fmt.Errorf("SetInformationJobObject: %w", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return nil, fmt.Errorf("OpenProcess: %w", err)
	}
	err = windows.AssignProcessToJobObject(job, h)
	windows.CloseHandle(h)
	if err != nil {
		return nil, fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	if err := resume(pid); err != nil {
		return nil, err
	}
	return &procGroup{job: job}, nil
}

// resume resumes the threads of a process started suspended (its one thread:
// os/exec closes the handle CreateProcess gave, so it is found again).
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("CreateToolhelp32Snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	n := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("OpenThread: %w", err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("ResumeThread: %w", err)
		}
		n++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("Thread32Next: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("no thread of process %d to resume", pid)
	}
	return nil
}

// kill terminates every process of the job, even when the engine has exited.
func (g *procGroup) kill() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job != 0 {
		_ = windows.TerminateJobObject(g.job, 1)
	}
}

// release keeps the job's peak memory and closes the job (which kills what
// is left in it). Called once the engine is reaped.
func (g *procGroup) release() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job == 0 {
		return
	}
	g.peak = g.jobPeak()
	windows.CloseHandle(g.job)
	g.job = 0
}

// peakMemory is the peak committed memory of the engine's job (all its
// processes): Windows reports no peak resident set of an exited process.
func (g *procGroup) peakMemory(*os.ProcessState) int64 {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job == 0 {
		return g.peak
	}
	return g.jobPeak()
}

func (g *procGroup) jobPeak() int64 {
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if windows.QueryInformationJobObject(g.job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil) != nil {
		return 0
	}
	return int64(info.PeakJobMemoryUsed)
}

// isAddrInUse reports whether a listen failed because the port is taken.
func isAddrInUse(err error) bool { return errors.Is(err, windows.WSAEADDRINUSE) }
