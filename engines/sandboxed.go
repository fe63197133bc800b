package engines

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/games"
)

// SandboxPort is the port a sandboxed engine without a fixed port dials
// ({port}): every sandbox has its own loopback, so all can use the same one.
const SandboxPort = 46000

// memoryPoll is how often a running sandbox is asked whether the kernel
// killed one of its processes for memory.
const memoryPoll = 100 * time.Millisecond

// Sandboxed reports whether the launcher starts e in a sandbox.
func (l *Launcher) Sandboxed(e Engine) bool { return l.Sandbox && l.SandboxErr == nil }

// SeatCPUs is how many CPUs of its own each sandboxed engine of a game is
// given (tournament.Runner): its CPU quota rounded up, 0 without a quota.
func (l *Launcher) SeatCPUs() int {
	q := l.CPUQuota
	if q == 0 {
		q = sandbox.DefaultCPUQuota
	}
	if q < 0 {
		return 0
	}
	return int(math.Ceil(q))
}

// Allowed says whether the launcher may start e here: nil, or a
// games.Error (code unavailable) saying why not and how to fix it. Built-in
// engines are always allowed: they are taikai's own code.
func (l *Launcher) Allowed(e Engine) error {
	if e.Builtin != "" || !l.Sandbox || l.SandboxErr == nil {
		return nil
	}
	return &games.Error{Code: games.EUnavailable, Message: fmt.Sprintf(
		"engine %q cannot run here: only built-in engines run without the engine sandbox, which is unavailable: %v "+
			"(fix that and restart the server, or start it with --sandbox=off to run every engine unsandboxed, with the server's rights: only for programs you trust)",
		e.Name, l.SandboxErr)}
}

// SandboxState is "on" if the launcher sandboxes engines, "unavailable" if
// it was asked to but cannot (only built-ins run, unsandboxed), else "off".
func (l *Launcher) SandboxState() string {
	switch {
	case l.Sandbox && l.SandboxErr == nil:
		return "on"
	case l.Sandbox:
		return "unavailable"
	}
	return "off"
}

// SandboxConfig is the sandbox an engine of this launcher runs in, without
// its command: its directory at /engine, the taikai binary as the helper
// (it also runs the built-ins, at sandbox.HelperPath), the engine's limits.
func (l *Launcher) SandboxConfig(e Engine) (sandbox.Config, error) {
	self, err := l.self()
	if err != nil {
		return sandbox.Config{}, err
	}
	cfg := sandbox.Config{
		EngineDir:   e.Dir,
		MemoryBytes: int64(e.MemoryMB) << 20,
		Pids:        e.MaxProcs,
		CPUQuota:    l.CPUQuota,
		Helper:      self,
	}
	if cfg.MemoryBytes == 0 {
		cfg.MemoryBytes = sandbox.DefaultMemory
	}
	// Also at its own path, for commands that name it there (as before
	// /.taikai/taikai), where anyone may reach it: a binary in a private
	// directory stays at /.taikai/taikai alone, so that no engine learns or
	// lists the path (bwrap makes the directories it is mounted in).
	if reachableByOthers(self) {
		cfg.ReadOnly = []string{self}
	}
	return cfg, nil
}

// reachableByOthers tells whether a user other than the owner of p and of
// its directories may execute p.
func reachableByOthers(p string) bool {
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm()&0o001 == 0 {
		return false
	}
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == "/" {
			return true
		}
	}
}

var cgroupName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// startSandboxed starts an engine in a fresh sandbox. A TCP engine dials
// 127.0.0.1 and its port (its fixed one, else SandboxPort) inside its own
// network namespace, where the server's listener is: fixed-port engines do
// not take turns. A stdio engine gets pipes.
func (l *Launcher) startSandboxed(ctx context.Context, la Launch) (*Process, Stream, error) {
	p, _ := LookupProtocol(la.Engine.Protocol)
	stdio := p.Transport == Stdio
	timeout := la.ConnectTimeout
	if timeout <= 0 {
		timeout = l.ConnectTimeout
	}
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	deadline := time.Now().Add(timeout)
	port := 0
	if !stdio {
		port = la.Engine.Port
		if port == 0 {
			port = SandboxPort
		}
	}
	fail := func(err error) (*Process, Stream, error) {
		return nil, nil, fmt.Errorf("%w: start %s in its sandbox: %v", ErrCrash, la.Engine.Name, err)
	}
	v := l.vars(la, port)
	v["host"] = "127.0.0.1"
	argv, err := l.argv(la, v)
	if err != nil {
		return fail(err)
	}
	if la.Engine.Builtin != "" {
		argv[0] = sandbox.HelperPath // the taikai binary, inside
	}
	cfg, err := l.SandboxConfig(la.Engine)
	if err != nil {
		return fail(err)
	}
	cfg.Port = port
	cfg.CPUs = la.CPUs
	cfg.Name = cgroupName.ReplaceAllString(la.Engine.Name, "") + "-" + la.Color
	// The engine's whole environment: nothing of the server's.
	cfg.Env = append([]string{EngineLocale}, l.Env...)
	cfg.Env = append(cfg.Env,
		"TAIKAI_HOST="+v["host"], "TAIKAI_PORT="+v["port"], "TAIKAI_COLOR="+v["color"],
		"TAIKAI_GAME_ID="+v["game_id"], "TAIKAI_GAME="+la.Engine.Game, "TAIKAI_RULE="+v["rule"],
		"TAIKAI_SIZE="+v["size"], "TAIKAI_TIME_MS="+v["time_ms"], "TAIKAI_NAME="+v["name"])
	cfg.Env = append(cfg.Env, la.Env...)
	if !slices.ContainsFunc(cfg.Env, func(kv string) bool { return strings.HasPrefix(kv, "JAVA_TOOL_OPTIONS=") }) {
		// The JVM cannot see the cgroup limit (no /sys inside) and would size
		// its heap from the host's memory: a big heap would be an OOM kill
		// rather than an OutOfMemoryError.
		cfg.Env = append(cfg.Env, fmt.Sprintf("JAVA_TOOL_OPTIONS=-XX:MaxRAM=%d -XX:MaxRAMPercentage=75", cfg.MemoryBytes))
	}
	out, err := newCappedWriter(la.LogPath, l.logLimit())
	if err != nil {
		return fail(err)
	}
	folder, err := l.folderFor(la, out)
	if err != nil {
		out.Close()
		return fail(err)
	}
	if folder != "" {
		cfg.FolderDir = folder
		folder = sandbox.FolderMount
	}
	// The Process outlives Start's context: Stop ends it.
	sb, err := sandbox.Command(context.Background(), cfg, argv...)
	if err != nil {
		out.Close()
		return fail(err)
	}
	var inR, inW, outR, outW *os.File
	if stdio {
		if inR, inW, err = os.Pipe(); err != nil {
			out.Close()
			return fail(err)
		}
		if outR, outW, err = os.Pipe(); err != nil {
			inR.Close()
			inW.Close()
			out.Close()
			return fail(err)
		}
		sb.Cmd.Stdin, sb.Cmd.Stdout, sb.Cmd.Stderr = inR, outW, out
	} else {
		sb.Cmd.Stdout, sb.Cmd.Stderr = out, out
	}
	sb.Cmd.WaitDelay = 2 * time.Second
	shown := argv
	if la.Engine.Builtin != "" {
		// The helper's path inside the sandbox means nothing to the reader.
		shown = append([]string{"taikai"}, argv[1:]...)
	}
	fmt.Fprintf(out, "[taikai] %s: sandboxed (memory %d MiB, %d processes): %s\n", time.Now().UTC().Format(time.RFC3339Nano),
		cfg.MemoryBytes>>20, max(cfg.Pids, sandbox.DefaultPids), QuoteCommand(shown))
	err = sb.Start()
	if stdio {
		inR.Close()
		outW.Close()
	}
	if err != nil {
		if stdio {
			inW.Close()
			outR.Close()
		}
		fmt.Fprintf(out, "[taikai] %v\n", err)
		out.Close()
		return fail(err)
	}
	proc := &Process{sb: sb, done: make(chan struct{}), out: out, folder: folder}
	go func() {
		proc.err = sb.Wait()
		close(proc.done)
	}()
	var in, outFromEngine *os.File
	if stdio {
		in, outFromEngine = inW, outR
	}
	return l.connectSandboxed(ctx, la, proc, in, outFromEngine, deadline, timeout)
}

// connectSandboxed watches a started sandboxed engine and, for a TCP engine,
// waits for its connection; a stdio engine's stream is in and out.
func (l *Launcher) connectSandboxed(ctx context.Context, la Launch, proc *Process, inW, outR *os.File, deadline time.Time, timeout time.Duration) (*Process, Stream, error) {
	sb, out, stdio := proc.sb, proc.out, inW != nil
	l.ending.add(1)
	go func() {
		<-sb.Done()
		l.ending.add(-1)
	}()
	go proc.watchMemory()
	if stdio {
		l.logger().Debug("sandboxed engine started on pipes", "engine", la.Engine.Name, "color", la.Color, "game", la.GameID, "pid", proc.Pid())
		return proc, &pipeStream{r: outR, w: inW, log: out}, nil
	}
	ln := sb.Listener()
	defer ln.Close()
	conn, err := accept(ctx, ln, proc, deadline)
	if err != nil {
		proc.Stop(0)
		switch {
		case errors.Is(err, ErrCrash) && proc.Usage().OOMKilled:
			err = fmt.Errorf("%w: %w (%s)", err, ErrMemory, proc.ExitStatus())
		case errors.Is(err, ErrCrash):
			err = fmt.Errorf("%w (%s)", err, proc.ExitStatus())
		case errors.Is(err, ErrNoConnect):
			err = fmt.Errorf("%w within %v", err, timeout)
		}
		return nil, nil, fmt.Errorf("engine %s (%s): %w", la.Engine.Name, la.Color, err)
	}
	l.logger().Debug("sandboxed engine connected", "engine", la.Engine.Name, "color", la.Color, "game", la.GameID, "pid", proc.Pid())
	return proc, conn, nil
}

// watchMemory ends a sandboxed engine as soon as the kernel has killed one
// of its processes for memory (on cgroup v1 that may be a child only), so
// that the game ends by reason memory at once.
func (p *Process) watchMemory() {
	t := time.NewTicker(memoryPoll)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			if p.sb.OverMemory() {
				fmt.Fprintf(p.out, "[taikai] %s: over the memory limit: the engine is stopped\n", time.Now().UTC().Format(time.RFC3339Nano))
				p.sb.Stop(0)
				return
			}
		}
	}
}

// Usage is how an engine's process ended and what it used.
type Usage struct {
	Sandboxed bool
	// ExitCode of the main process; 128+n when killed by signal n.
	ExitCode int
	// Signal that killed the main process, 0 if it exited.
	Signal int
	// OOMKilled: the kernel killed a process of the engine's sandbox for
	// reaching its memory limit.
	OOMKilled bool
	// PeakMemory in bytes: of the whole sandbox; unsandboxed, the main
	// process's peak resident set.
	PeakMemory int64
	// CPUTime (user + system): of every process of the sandbox;
	// unsandboxed, the main process and the children it waited for.
	CPUTime time.Duration
}

// Status says how the engine ended, in the words of os/exec.
func (u Usage) Status() string {
	switch {
	case u.OOMKilled && u.Signal != 0:
		return "signal: " + syscall.Signal(u.Signal).String() + " (over its memory limit)"
	case u.OOMKilled:
		return fmt.Sprintf("exit status %d (over its memory limit)", u.ExitCode)
	case u.Signal != 0:
		return "signal: " + syscall.Signal(u.Signal).String()
	}
	return "exit status " + strconv.Itoa(u.ExitCode)
}

type usageJSON struct {
	Sandboxed  bool    `json:"sandboxed"`
	Status     string  `json:"status"`
	ExitCode   int     `json:"exit_code"`
	Signal     int     `json:"signal,omitempty"`
	SignalName string  `json:"signal_name,omitempty"`
	OOMKilled  bool    `json:"oom_killed"`
	PeakMemory int64   `json:"peak_memory_bytes"`
	CPUMS      float64 `json:"cpu_ms"`
}

// MarshalJSON writes the usage as the API shows it.
func (u Usage) MarshalJSON() ([]byte, error) {
	j := usageJSON{Sandboxed: u.Sandboxed, Status: u.Status(), ExitCode: u.ExitCode, Signal: u.Signal, OOMKilled: u.OOMKilled,
		PeakMemory: u.PeakMemory, CPUMS: float64(u.CPUTime.Microseconds()) / 1000}
	if u.Signal != 0 {
		j.SignalName = syscall.Signal(u.Signal).String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (u *Usage) UnmarshalJSON(b []byte) error {
	var j usageJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*u = Usage{Sandboxed: j.Sandboxed, ExitCode: j.ExitCode, Signal: j.Signal, OOMKilled: j.OOMKilled, PeakMemory: j.PeakMemory,
		CPUTime: time.Duration(j.CPUMS * float64(time.Millisecond))}
	return nil
}

// OverMemory reports whether the kernel has killed a process of the
// engine's sandbox for reaching its memory limit so far (false unsandboxed).
// watchMemory stops the engine when it sees that, within memoryPoll; a
// referee that ends a game sooner asks here.
func (p *Process) OverMemory() bool { return p.sb != nil && p.sb.OverMemory() }

// Usage reports how the engine ended and what it used; the zero Usage while
// it runs.
func (p *Process) Usage() Usage {
	select {
	case <-p.done:
	default:
		return Usage{}
	}
	if p.sb != nil {
		u := p.sb.Report()
		return Usage{Sandboxed: true, ExitCode: u.ExitCode, Signal: u.Signal, OOMKilled: u.OOMKilled, PeakMemory: u.PeakMemory, CPUTime: u.CPUTime}
	}
	var u Usage
	ps := p.cmd.ProcessState
	if ps == nil {
		return u
	}
	u.ExitCode = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		u.Signal = int(ws.Signal())
		u.ExitCode = 128 + u.Signal
	}
	u.CPUTime = ps.UserTime() + ps.SystemTime()
	u.PeakMemory = p.pgrp.peakMemory(ps)
	return u
}
