//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// waiter is what a prepared sandbox runs until its game comes (see
// Prepare): a shell started in well under a millisecond (the taikai binary
// took ten), as the sandbox's init (pid 1). It tells the server it is ready
// (one byte, "r", on fd 6, the server's socket; Prepare waits for it), then
// reads one line from fd 6: a shell command line made by Exec that exports
// the engine's environment and runs its command, as the waiter's child (not
// pid 1, which would ignore the signals it has no handler for, such as one
// it sends itself, or abort's). The waiter reaps orphans while it waits for
// the engine, and exits with its status (128+n if a signal n killed it);
// the kernel then kills whatever is left in the sandbox. A line that never
// ends (the server stopped the sandbox, or died, before or while writing
// it) runs nothing: the waiter exits, and the sandbox with it.
const waiter = `printf r >&6 && IFS= read -r c <&6 || exit 0; exec 6<&-; eval "$c"`

// klibcSh is klibc's sh (Debian's klibc-utils), a dash built on klibc: it
// starts in about 0.1 ms of CPU where the system's sh, on glibc, took 1 ms
// on a VM that traps cpuid (glibc's start reads the CPU's caches with it,
// a hundred times). It has no ulimit.
const klibcSh = "/usr/lib/klibc/bin/sh"

// waiterShell is the shell the waiter runs in: klibc's sh where it is
// installed, works, and the server can set the sandbox's open files limit
// itself (see canSetRlimits); else "": the system's sh, which sets the
// limit with ulimit.
var waiterShell = sync.OnceValue(func() string {
	if !canSetRlimits() {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, klibcSh, "-c", "printf ok").Output(); err != nil || string(out) != "ok" {
		return ""
	}
	return klibcSh
})

// waiterArgv is the waiter's command line for cfg.
func waiterArgv(cfg Config) []string {
	if sh := waiterShell(); sh != "" {
		return []string{sh, "-c", waiter}
	}
	return []string{"/bin/sh", "-c", `ulimit -n "$1" && ` + waiter, "sh", strconv.Itoa(cfg.NoFile)}
}

// Prepare sets up a sandbox for cfg ahead of its engine: bwrap's
// namespaces and mounts, the cgroups and limits, the seat's listener (with
// cfg.Port) and the engine's standard streams are made, and the sandbox
// waits with a shell (the waiter) as its init until Exec gives it the
// engine's command, which the shell then runs. Most of a sandbox's start is
// paid then, not when the game waits for its engine.
//
// With stdio, the engine's standard input and output are pipes to the
// server; without, its input is /dev/null and its output goes to its log.
// With cfg.Helper (no setns here), the helper, as the init, opens the
// listener, then execs sh. Until Exec, the sandbox is a process of the
// server's like any other: Stop ends it, and it dies with the server.
func Prepare(cfg Config, stdio bool) (*Sandbox, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	helper, argv := "", waiterArgv(cfg)
	if cfg.Port != 0 && cfg.Helper != "" {
		helper, argv = cfg.Helper, append([]string{helperMount, HelperArg, strconv.Itoa(cfg.Port), helperWaitArg}, argv...)
	}
	s, err := command(context.Background(), cfg, helper, argv, true)
	if err != nil {
		return nil, err
	}
	s.waiting = true
	// The server's ends are kept until Exec; the sandbox's are closed once
	// bwrap has them.
	var theirs []*os.File
	defer func() {
		for _, f := range theirs {
			f.Close()
		}
	}()
	logR, logW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	theirs = append(theirs, logW)
	st := Streams{Log: logR}
	s.Cmd.Stdout, s.Cmd.Stderr = logW, logW
	if stdio {
		inR, inW, err := os.Pipe()
		if err != nil {
			logR.Close()
			return nil, err
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			logR.Close()
			inR.Close()
			inW.Close()
			return nil, err
		}
		theirs = append(theirs, inR, outW)
		st.Stdin, st.Stdout = inW, outR
		s.Cmd.Stdin, s.Cmd.Stdout = inR, outW
	}
	s.streams = st
	if err := s.Start(); err != nil {
		// bwrap's own messages, should it fail before sh runs: everything
		// of the sandbox is gone, so the log ends.
		for _, f := range theirs {
			f.Close()
		}
		theirs = nil
		_ = logR.SetReadDeadline(time.Now().Add(time.Second))
		b, _ := io.ReadAll(io.LimitReader(logR, 1024))
		if msg := strings.TrimSpace(string(b)); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		st.close()
		return nil, err
	}
	// Prepared means ready: bwrap's mounts and the waiter's start, which go
	// on after Start has released bwrap, are done. The pool's Settle, and so
	// taikai bench, count that work with the games that caused it.
	if err := s.ready(); err != nil {
		s.Stop(0)
		<-s.Done()
		return nil, fmt.Errorf("sandbox: the prepared sandbox did not start its waiter: %w", err)
	}
	return s, nil
}

// ready waits for the waiter's byte.
func (s *Sandbox) ready() error {
	s.mu.Lock()
	ctl := s.ctl
	s.mu.Unlock()
	if ctl == nil {
		return errors.New("it has ended")
	}
	_ = ctl.SetReadDeadline(time.Now().Add(setupTimeout))
	var b [1]byte
	if _, err := io.ReadFull(ctl, b[:]); err != nil {
		return err
	}
	if b[0] != 'r' {
		return fmt.Errorf("got %q", b[:])
	}
	return ctl.SetReadDeadline(time.Time{})
}

// Streams are the server's ends of a prepared engine's standard streams.
// The caller of Exec owns them.
type Streams struct {
	Stdin  *os.File // the engine's standard input (stdio engines only)
	Stdout *os.File // its standard output (stdio engines only)
	// Log is its standard error, and its standard output unless stdio; it
	// ends once every process of the sandbox is gone.
	Log *os.File
}

func (st Streams) close() {
	for _, f := range []*os.File{st.Stdin, st.Stdout, st.Log} {
		if f != nil {
			f.Close()
		}
	}
}

// Exec hands a prepared sandbox its engine: argv (looked up in the
// environment's PATH, relative to /engine) with env as its whole
// environment (HOME, TMPDIR and PATH are added as Config.Env's are when
// missing). It returns once sh has the command; the engine's start from
// there is a fork and an exec. An error means the sandbox is unusable (the
// caller stops it and starts another); an engine that cannot be run (no
// such file) exits with status 127 and says why in its log, as a command
// run by Command does.
func (s *Sandbox) Exec(argv, env []string) (Streams, error) {
	if !s.waiting {
		return Streams{}, errors.New("sandbox: Exec needs a sandbox made by Prepare")
	}
	env, err := s.cfg.engineEnv(env)
	if err != nil {
		return Streams{}, err
	}
	line, err := execLine(argv, env)
	if err != nil {
		return Streams{}, err
	}
	s.mu.Lock()
	ctl, st := s.ctl, s.streams
	s.ctl, s.streams = nil, Streams{}
	s.mu.Unlock()
	if ctl == nil {
		return Streams{}, errors.New("sandbox: Exec called twice, or the sandbox has ended")
	}
	defer ctl.Close()
	select {
	case <-s.exited:
		st.close()
		return Streams{}, errors.New("sandbox: the prepared sandbox has ended")
	default:
	}
	// What the waiting sh used does not count as the engine's.
	base := s.group.cpuTime()
	s.mu.Lock()
	s.cpuBase = base
	s.mu.Unlock()
	s.group.resetPeak()
	_ = ctl.SetWriteDeadline(time.Now().Add(setupTimeout))
	if _, err := io.WriteString(ctl, line); err != nil {
		st.close()
		return Streams{}, fmt.Errorf("sandbox: hand the prepared sandbox its command: %w", err)
	}
	s.mu.Lock()
	s.handed = true
	s.mu.Unlock()
	return st, nil
}

// Execable says whether Exec can run argv with env (a prepared sandbox
// cannot run every command a cold one can; see execLine).
func Execable(argv, env []string) error {
	_, err := execLine(argv, env)
	return err
}

var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// maxExecLine bounds Exec's command line: command and environment.
const maxExecLine = 60 << 10

// execLine is the waiter's command line for argv and env: the variables
// exported, then the command exec'd in a subshell, every word
// single-quoted. It is one line, so no word may hold a newline (or NUL);
// the names must be the shell's, and the command must not start with "-"
// (dash's exec takes no "--").
func execLine(argv, env []string) (string, error) {
	if len(argv) == 0 {
		return "", errors.New("sandbox: empty command")
	}
	if strings.HasPrefix(argv[0], "-") {
		return "", fmt.Errorf("sandbox: a prepared sandbox cannot run a command named %q", argv[0])
	}
	var b strings.Builder
	word := func(w string) error {
		if strings.ContainsAny(w, "\n\x00") {
			return fmt.Errorf("sandbox: a prepared sandbox cannot pass %q (a newline or NUL)", w)
		}
		b.WriteString(" '")
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteString("'")
		return nil
	}
	if len(env) > 0 {
		b.WriteString("export")
		for _, kv := range env {
			if k, _, _ := strings.Cut(kv, "="); !shellName.MatchString(k) {
				return "", fmt.Errorf("sandbox: a prepared sandbox cannot set the variable %q", k)
			}
			if err := word(kv); err != nil {
				return "", err
			}
		}
		b.WriteString("; ")
	}
	// A subshell that execs: the engine is the waiter's child, and
	// always a program (exec runs no builtin of sh's).
	b.WriteString("(exec")
	for _, a := range argv {
		if err := word(a); err != nil {
			return "", err
		}
	}
	b.WriteString(")\n")
	if b.Len() > maxExecLine {
		return "", fmt.Errorf("sandbox: command and environment too long (%d bytes)", b.Len())
	}
	return b.String(), nil
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

// resetPeak starts the group's peak memory afresh where the kernel allows
// it (cgroup v1); on v2 the peak includes the waiting sh's few hundred KiB.
func (g *group) resetPeak() {
	if !g.setup.v2 {
		_ = writeFile(filepath.Join(g.dirs[g.setup.memory], "memory.max_usage_in_bytes"), "0")
	}
}
