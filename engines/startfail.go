package engines

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/taikai-dev/taikai/engines/sandbox"
)

// Wait waits up to d for the process to exit and reports whether it has.
func (p *Process) Wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// execFailed is what the sandbox prints when the engine's program, named by
// a path, cannot be run inside it: the taikai helper that execs the engine
// (Go's exec error), or bubblewrap itself (execvp).
var execFailed = regexp.MustCompile(`(?m)^(?:bwrap: execvp (/.*)|taikai sandbox: exec: "(/[^"]*)": stat [^:]*): ((?i:No such file or directory|Not a directory|Permission denied))$`)

// NotFoundInSandbox reads the start of an engine's log for the sandbox's word
// that the engine's program could not be run in the sandbox and says so, with
// what the sandbox sees; "" if the log does not say that. It is keyed on
// the messages of the sandbox's helper and of bubblewrap.
func NotFoundInSandbox(log string) string {
	m := execFailed.FindStringSubmatch(log)
	if m == nil {
		return ""
	}
	m[1] += m[2]
	m[2] = m[3]
	return fmt.Sprintf("the program %s could not be run in the sandbox (%s): the sandbox shows an engine only its own directory, at %s (its working directory), "+
		"the system's /usr, /bin, /lib and /etc read-only, and a private /tmp; no other path of the host. "+
		"Give the program relative to the engine's directory (./brain), or one installed under /usr", m[1], m[2], sandbox.EngineMount)
}

// Head is the first 4 KiB of the engine's output (its log's start, where
// the launcher's and bubblewrap's own lines are), kept even when its log is
// discarded.
func (p *Process) Head() string {
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	return string(p.out.head)
}

// NotFoundInSandboxLog is NotFoundInSandbox of the first 16 KiB of the log
// file at path ("" if it cannot be read).
func NotFoundInSandboxLog(path string) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 16<<10))
	return NotFoundInSandbox(string(b))
}
