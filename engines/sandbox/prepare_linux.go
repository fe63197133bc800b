//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Prepare sets up a sandbox for cfg ahead of its engine: bwrap's
// namespaces and mounts, the cgroups and limits, and (with cfg.Port) the
// seat's listener are made, and the binary at helper (the taikai binary;
// its main calls MaybeHelper) waits inside as the sandbox's pid 2 until
// Exec gives it the engine's command, which it then execs in place. Most of
// a sandbox's start (about 10 ms here) is paid then, not when the game
// waits for its engine.
//
// The caller sets nothing on Cmd: Exec passes the engine its stdin, stdout
// and stderr. Until Exec, the sandbox is a process of the server's like any
// other: Stop ends it, and it dies with the server.
func Prepare(cfg Config, helper string) (*Sandbox, error) {
	if helper == "" {
		return nil, errors.New("sandbox: Prepare needs the helper binary")
	}
	abs, err := filepath.Abs(helper)
	if err != nil {
		return nil, err
	}
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if err := searchable(filepath.Dir(abs), cfg.UID, cfg.GID, false); err != nil {
		return nil, fmt.Errorf("sandbox: helper: %w", err)
	}
	// The helper opens the listener itself only when cfg.Helper says so.
	port := 0
	if cfg.Port != 0 && cfg.Helper != "" {
		port = cfg.Port
	}
	argv := []string{helperMount, HelperArg, strconv.Itoa(port), helperWaitArg}
	s, err := command(context.Background(), cfg, abs, argv)
	if err != nil {
		return nil, err
	}
	s.waiting = true
	// bwrap's own messages, should it fail before the helper runs: a file,
	// not a pipe, so that Wait does not wait for the sandbox's init (which
	// holds it) to be gone.
	fd, err := unix.MemfdCreate("taikai-sandbox-setup", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	out := os.NewFile(uintptr(fd), "setup")
	defer out.Close()
	s.Cmd.Stdout, s.Cmd.Stderr = out, out
	if err := s.Start(); err != nil {
		b := make([]byte, 1024)
		n, _ := out.ReadAt(b, 0)
		if msg := strings.TrimSpace(string(b[:n])); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	return s, nil
}

// ExecRequest is the engine's command that Exec runs in a prepared sandbox.
type ExecRequest struct {
	Argv []string // looked up in the environment's PATH, relative to /engine
	// Env is the engine's whole environment; HOME, TMPDIR and PATH are
	// added as Config.Env's are when missing.
	Env []string
	// Stdin, Stdout and Stderr become the engine's 0, 1 and 2; nil is
	// /dev/null.
	Stdin, Stdout, Stderr *os.File
}

// execMsg is ExecRequest on the wire to the helper.
type execMsg struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
}

// Exec hands a prepared sandbox its engine. It returns once the helper has
// the command; the engine's start from there is an exec. An error means the
// sandbox is unusable (the caller stops it and starts another); an engine
// that cannot be run (no such file) exits with status 127 and says why on
// its stderr, as a command run by Command does.
func (s *Sandbox) Exec(req ExecRequest) error {
	if !s.waiting {
		return errors.New("sandbox: Exec needs a sandbox made by Prepare")
	}
	if len(req.Argv) == 0 {
		return errors.New("sandbox: empty command")
	}
	env, err := s.cfg.engineEnv(req.Env)
	if err != nil {
		return err
	}
	msg, err := json.Marshal(execMsg{Argv: req.Argv, Env: env})
	if err != nil {
		return err
	}
	if len(msg) > helperMsgMax {
		return fmt.Errorf("sandbox: command and environment too long (%d bytes)", len(msg))
	}
	s.mu.Lock()
	ctl := s.ctl
	s.ctl = nil
	s.mu.Unlock()
	if ctl == nil {
		return errors.New("sandbox: Exec called twice, or the sandbox has ended")
	}
	defer ctl.Close()
	select {
	case <-s.exited:
		return errors.New("sandbox: the prepared sandbox has ended")
	default:
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devnull.Close()
	fds := make([]int, 3)
	for i, f := range []*os.File{req.Stdin, req.Stdout, req.Stderr} {
		if f == nil {
			f = devnull
		}
		fds[i] = int(f.Fd())
	}
	// What the waiting helper used does not count as the engine's.
	base := s.group.cpuTime()
	s.mu.Lock()
	s.cpuBase = base
	s.mu.Unlock()
	s.group.resetPeak()
	if err := unix.Sendmsg(int(ctl.Fd()), msg, unix.UnixRights(fds...), nil, 0); err != nil {
		return fmt.Errorf("sandbox: hand the prepared sandbox its command: %w", err)
	}
	return nil
}

// engineEnv is env with the defaults Config.Env gets (see bwrapArgs).
func (cfg *Config) engineEnv(env []string) ([]string, error) {
	have := map[string]bool{}
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("sandbox: bad environment entry %q", kv)
		}
		have[k] = true
	}
	out := append([]string{}, env...)
	for _, kv := range [][2]string{{"HOME", ScratchMount}, {"TMPDIR", ScratchMount}, {"PATH", "/usr/local/bin:/usr/bin:/bin"}} {
		if !have[kv[0]] {
			out = append(out, kv[0]+"="+kv[1])
		}
	}
	return out, nil
}

// cpuTime is the group's CPU time so far.
func (g *group) cpuTime() time.Duration {
	var u Usage
	g.usage(&u)
	return u.CPUTime
}

// resetPeak starts the group's peak memory afresh where the kernel allows
// it (cgroup v1); on v2 the peak includes the waiting helper's few MiB.
func (g *group) resetPeak() {
	if !g.setup.v2 {
		_ = writeFile(filepath.Join(g.dirs[g.setup.memory], "memory.max_usage_in_bytes"), "0")
	}
}
