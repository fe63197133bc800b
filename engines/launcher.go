package engines

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/taikai-dev/taikai/engines/sandbox"
)

// Defaults of the launcher.
const (
	DefaultConnectTimeout = 15 * time.Second // enough for a JVM compiling a source file
	DefaultLogLimit       = 1 << 20          // bytes of output kept per seat and game
	DefaultExitGrace      = time.Second      // time an engine gets to exit after its game
)

// Errors of Start. A launch that fails wraps one of them.
var (
	// ErrNoConnect: the engine was started but did not connect in time.
	ErrNoConnect = errors.New("engine did not connect")
	// ErrCrash: the engine could not be started or exited before connecting.
	ErrCrash = errors.New("engine exited before connecting")
	// ErrMemory: the engine went over its sandbox's memory limit before it
	// connected (wrapped together with ErrCrash).
	ErrMemory = errors.New("engine went over its memory limit")
	// ErrRefused: the launcher does not run this engine here (no sandbox).
	ErrRefused = errors.New("engine refused")
)

// Launcher starts engine processes and hands out their connections. One
// Launcher is shared by all games of a server so that engines with a fixed port
// are launched one at a time.
type Launcher struct {
	Self           string        // the taikai binary that runs built-in engines; default os.Executable()
	Host           string        // address engines dial; default 127.0.0.1
	ConnectTimeout time.Duration // from process start to accepted connection; default 15 s
	LogLimit       int64         // output bytes kept per seat; default 1 MiB
	ExitGrace      time.Duration // after the game, time to exit before SIGKILL; default 1 s
	Env            []string      // extra environment for every engine
	Log            *slog.Logger

	// Sandbox runs every engine, built-ins included, in engines/sandbox:
	// its own directory read-only, a private scratch directory, its own
	// network namespace with its seat's listener inside, memory and process
	// limits (docs/SANDBOX.md).
	Sandbox bool
	// SandboxErr, if set, says why engines cannot be sandboxed on this host
	// although a sandbox was asked for: built-in engines (taikai's own code)
	// then run unsandboxed, and every other engine is refused with it.
	SandboxErr error
	// FoldersDir, if set, holds the engines' persistent folders: an engine
	// whose protocol tells it one (Protocol.Folder: pbrain's INFO folder) gets
	// FoldersDir/<engine id>, kept from game to game, of at most FolderLimit
	// bytes: a folder found over it when the engine starts is emptied first.
	FoldersDir string
	// FolderLimit is that size; default DefaultFolderLimit. FolderEntries
	// bounds its files and directories; default DefaultFolderEntries. Both
	// are also checked while the engine runs (watchFolder).
	FolderLimit   int64
	FolderEntries int
	// CPUQuota is the CPU time each sandboxed engine may use, in CPUs
	// (sandbox.Config.CPUQuota): 0 the default (one CPU's worth), negative
	// none.
	CPUQuota float64

	ending pending // sandboxes whose teardown may not be done
	mu     sync.Mutex
	ports  map[int]chan struct{} // fixed port -> a one-slot semaphore
}

// Close waits (a few seconds at most) for the teardown of the sandboxes
// that ran engines; Start must not be called after.
func (l *Launcher) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if l.ending.wait(ctx) != nil {
		l.logger().Warn("sandboxes still being removed at close; the next start sweeps what is left")
	}
}

// pending counts work left to a goroutine, like a sync.WaitGroup whose
// wait takes a deadline.
type pending struct {
	mu   sync.Mutex
	n    int
	none chan struct{} // closed when n comes back to 0; made by a waiter
}

func (p *pending) add(d int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += d
	if p.n == 0 && p.none != nil {
		close(p.none)
		p.none = nil
	}
}

// wait returns once nothing is pending, or with ctx's error.
func (p *pending) wait(ctx context.Context) error {
	p.mu.Lock()
	if p.n == 0 {
		p.mu.Unlock()
		return nil
	}
	if p.none == nil {
		p.none = make(chan struct{})
	}
	none := p.none
	p.mu.Unlock()
	select {
	case <-none:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Launch is one seat's request to start an engine.
type Launch struct {
	Engine  Engine
	Color   string // black or white
	GameID  int64
	TimeMS  int64  // the move time, for {time_ms}
	Rule    string // game option, for {rule}
	Size    int    // board size, for {size}
	LogPath string // where the engine's output goes; "" discards it
	// ConnectTimeout overrides the launcher's for this launch when positive.
	ConnectTimeout time.Duration
	Env            []string // extra environment, e.g. protocol options built-ins read
	// CPUs, if set, are the only CPUs the engine process may run on (Linux).
	CPUs []int
}

// DefaultFolderLimit is the Gomocup's limit on a brain's folder.
const DefaultFolderLimit = 20 << 20

// folderFor returns the host directory of la's engine's persistent folder,
// created and within its limit, or "" if it has none.
func (l *Launcher) folderFor(la Launch, out io.Writer) (string, error) {
	p, _ := LookupProtocol(la.Engine.Protocol)
	if !p.Folder || l.FoldersDir == "" || la.Engine.ID == 0 {
		return "", nil
	}
	dir := filepath.Join(l.FoldersDir, strconv.FormatInt(la.Engine.ID, 10))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("engine folder: %w", err)
	}
	limit, maxEntries := l.folderLimits()
	size, entries := folderUsage(dir, maxEntries)
	if size > limit || entries > maxEntries {
		if size > limit {
			fmt.Fprintf(out, "[taikai] the engine's folder held %d bytes, over its %d: emptied\n", size, limit)
		} else {
			fmt.Fprintf(out, "[taikai] the engine's folder held more than %d files and directories: emptied\n", maxEntries)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return "", fmt.Errorf("empty the engine folder: %w", err)
			}
		}
	}
	return dir, nil
}

// Process is a started engine. Stop must be called once the game is over.
type Process struct {
	cmd  *exec.Cmd
	sb   *sandbox.Sandbox // nil for an unsandboxed engine
	pgrp *procGroup
	done chan struct{} // closed when Wait has returned
	err  error         // Wait's result, valid after done
	at   time.Time     // when Wait returned, valid after done
	out  *cappedWriter
	once sync.Once

	folderOver atomic.Bool // stopped for filling its folder (watchFolder)

	// folder is the engine's persistent folder as the engine sees it, "" if
	// it has none.
	folder string
}

// Folder is the engine's persistent folder, as the engine sees it ("" if none).
func (p *Process) Folder() string { return p.folder }

// LogLine keeps a line in the engine's log, among its own output: what the
// server told it that a reader of the log needs (a refusal's ERROR line).
func (p *Process) LogLine(line string) {
	if p.out != nil {
		fmt.Fprintf(p.out, "%s\n", line)
	}
}

func (l *Launcher) self() (string, error) {
	if l.Self != "" {
		return l.Self, nil
	}
	return os.Executable()
}

func (l *Launcher) host() string {
	if l.Host != "" {
		return l.Host
	}
	return "127.0.0.1"
}

func (l *Launcher) logger() *slog.Logger {
	if l.Log != nil {
		return l.Log
	}
	return slog.New(slog.DiscardHandler)
}

// argv returns the command line a launch runs, placeholders filled in from v.
func (l *Launcher) argv(la Launch, v map[string]string) ([]string, error) {
	argv := la.Engine.Command
	if la.Engine.Builtin != "" {
		self, err := l.self()
		if err != nil {
			return nil, fmt.Errorf("find taikai binary for built-in %s: %w", la.Engine.Builtin, err)
		}
		argv = BuiltinCommand(self, la.Engine.Builtin, la.Engine.Protocol)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("engine %s has no command", la.Engine.Name)
	}
	return Expand(argv, v), nil
}

func (l *Launcher) vars(la Launch, port int) map[string]string {
	flag, num := "-b", "1"
	if la.Color == "white" {
		flag, num = "-w", "-1"
	}
	return map[string]string{
		"host": l.host(), "port": strconv.Itoa(port), "color": la.Color,
		"colorflag": flag, "colornum": num, "name": la.Engine.Name,
		"time_ms": strconv.FormatInt(la.TimeMS, 10), "game_id": strconv.FormatInt(la.GameID, 10),
		"rule": la.Rule, "size": strconv.Itoa(la.Size),
	}
}

// Start launches the engine of one seat and waits until it has connected. On
// success the caller owns the connection and must call Process.Stop. On failure
// everything started has been stopped and the error wraps ErrNoConnect or ErrCrash
// (or the context's error).
func (l *Launcher) Start(ctx context.Context, la Launch) (started *Process, _ Stream, err error) {
	defer func() {
		if err == nil {
			l.watchFolder(started, la)
		}
	}()
	if err := l.Allowed(la.Engine); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if l.Sandboxed(la.Engine) {
		return l.startSandboxed(ctx, la)
	}
	if p, _ := LookupProtocol(la.Engine.Protocol); p.Transport == Stdio {
		return l.startStdio(la)
	}
	timeout := la.ConnectTimeout
	if timeout <= 0 {
		timeout = l.ConnectTimeout
	}
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	if p := la.Engine.Port; p != 0 {
		release, err := l.lockPort(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		defer release()
	}
	// The engine's time to connect starts once the port is its own.
	deadline := time.Now().Add(timeout)
	ln, err := l.listen(ctx, la.Engine.Port, deadline)
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	proc, err := l.spawn(la, port, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: start %s: %w", ErrCrash, la.Engine.Name, err)
	}
	conn, err := accept(ctx, ln, proc, deadline)
	if err != nil {
		// An engine that crashed has its output in the log; say where to look.
		proc.Stop(0)
		switch {
		case errors.Is(err, ErrCrash):
			err = fmt.Errorf("%w (%s)", err, proc.ExitStatus())
		case errors.Is(err, ErrNoConnect):
			err = fmt.Errorf("%w within %v", err, timeout)
		}
		return nil, nil, fmt.Errorf("engine %s (%s): %w", la.Engine.Name, la.Color, err)
	}
	l.logger().Debug("engine connected", "engine", la.Engine.Name, "color", la.Color, "game", la.GameID, "pid", proc.Pid())
	return proc, conn, nil
}

// lockPort takes the one-slot semaphore of a fixed port so that only one launch
// at a time waits for a connection there.
func (l *Launcher) lockPort(ctx context.Context, port int) (func(), error) {
	l.mu.Lock()
	if l.ports == nil {
		l.ports = make(map[int]chan struct{})
	}
	sem, ok := l.ports[port]
	if !ok {
		sem = make(chan struct{}, 1)
		l.ports[port] = sem
	}
	l.mu.Unlock()
	// Waiting for the port is not the engine's fault: other games hold it while
	// their engines connect. Wait as long as the caller lets us.
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for fixed port %d: %w", port, ctx.Err())
	}
}

// listen opens the seat's listener. A fixed port may be held for a moment by
// another process (another taikai, a test); retry until the deadline.
func (l *Launcher) listen(ctx context.Context, port int, deadline time.Time) (net.Listener, error) {
	addr := net.JoinHostPort(l.host(), strconv.Itoa(port))
	var lc net.ListenConfig
	for {
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err == nil {
			return ln, nil
		}
		if port == 0 || !isAddrInUse(err) || time.Now().After(deadline) {
			return nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("listen on %s: %w", addr, ctx.Err())
		}
	}
}

// startStdio starts an engine that speaks on its standard input and output:
// its stream is ready at once, and its standard error is its log.
func (l *Launcher) startStdio(la Launch) (*Process, Stream, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	proc, err := l.spawn(la, 0, &pipes{stdin: inR, stdout: outW})
	// The child has its ends now (or failed to start): the parent's copies go.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, fmt.Errorf("%w: start %s: %w", ErrCrash, la.Engine.Name, err)
	}
	l.logger().Debug("engine started on pipes", "engine", la.Engine.Name, "color", la.Color, "game", la.GameID, "pid", proc.Pid())
	return proc, &pipeStream{r: outR, w: inW, log: proc.out}, nil
}

// LineLogger is implemented by a pipe engine's stream: lines kept in the
// engine's log, after its standard error: what the protocol read and dropped
// of its output (thinking output, a brain's MESSAGE), marked "[stdout]", and
// what the referee told it that a reader of the log needs (INFO rule),
// marked "[sent]".
type LineLogger interface{ LogLine(line string) }

// pipes are the child's ends of a stdio engine's stream.
type pipes struct{ stdin, stdout *os.File }

// pipeStream is a stdio engine's stream: its stdout to read, its stdin to
// write (os.Pipe files are pollable, so write deadlines work), and its log.
type pipeStream struct {
	r, w *os.File
	log  io.Writer
}

// LogLine keeps a line in the engine's log.
func (p *pipeStream) LogLine(line string) {
	if p.log != nil {
		fmt.Fprintf(p.log, "%s\n", line)
	}
}

func (p *pipeStream) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeStream) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p *pipeStream) SetWriteDeadline(t time.Time) error { return p.w.SetWriteDeadline(t) }

// Close closes both pipes: the engine reads EOF, a blocked Read returns.
func (p *pipeStream) Close() error { return errors.Join(p.w.Close(), p.r.Close()) }

func (l *Launcher) spawn(la Launch, port int, stdio *pipes) (*Process, error) {
	v := l.vars(la, port)
	argv, err := l.argv(la, v)
	if err != nil {
		return nil, err
	}
	out, err := newCappedWriter(la.LogPath, l.logLimit())
	if err != nil {
		return nil, err
	}
	folder, err := l.folderFor(la, out)
	if err != nil {
		out.Close()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = la.Engine.Dir
	cmd.Stdout = out
	cmd.Stderr = out
	if stdio != nil {
		// The protocol's stream; the log keeps standard error only.
		cmd.Stdin, cmd.Stdout = stdio.stdin, stdio.stdout
	}
	cmd.SysProcAttr = groupAttr()
	// Output copying must not outlive the process by long, even if a grandchild
	// holds the pipe open.
	cmd.WaitDelay = 2 * time.Second
	cmd.Env = append(append(engineEnviron(), EngineLocale), l.Env...)
	cmd.Env = append(cmd.Env,
		"TAIKAI_HOST="+v["host"], "TAIKAI_PORT="+v["port"], "TAIKAI_COLOR="+v["color"],
		"TAIKAI_GAME_ID="+v["game_id"], "TAIKAI_GAME="+la.Engine.Game, "TAIKAI_RULE="+v["rule"],
		"TAIKAI_SIZE="+v["size"], "TAIKAI_TIME_MS="+v["time_ms"], "TAIKAI_NAME="+v["name"])
	cmd.Env = append(cmd.Env, la.Env...)
	fmt.Fprintf(out, "[taikai] %s: %s\n", time.Now().UTC().Format(time.RFC3339Nano), QuoteCommand(argv))
	if err := startOn(cmd, la.CPUs); err != nil {
		out.Close()
		return nil, err
	}
	group, err := startGroup(cmd)
	if err != nil {
		out.Close()
		return nil, err
	}
	p := &Process{cmd: cmd, pgrp: group, done: make(chan struct{}), out: out, folder: folder}
	go func() {
		p.err = cmd.Wait()
		p.at = time.Now()
		close(p.done)
	}()
	return p, nil
}

func (l *Launcher) logLimit() int64 {
	if l.LogLimit > 0 {
		return l.LogLimit
	}
	return DefaultLogLimit
}

// accept waits for the engine's connection, its death, or the deadline.
func accept(ctx context.Context, ln net.Listener, proc *Process, deadline time.Time) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	got := make(chan result, 1)
	// A *net.TCPListener, or a sandbox's (sandbox.Listener).
	tl, ok := ln.(interface{ SetDeadline(time.Time) error })
	if !ok {
		return nil, fmt.Errorf("listener %T has no deadline", ln)
	}
	if err := tl.SetDeadline(deadline); err != nil {
		return nil, err
	}
	go func() {
		c, err := ln.Accept()
		got <- result{c, err}
	}()
	// Closing the listener unblocks Accept; the deferred Close in Start does that
	// on every path, and the goroutine's send never blocks (buffered).
	select {
	case r := <-got:
		if r.err != nil {
			var ne net.Error
			if errors.As(r.err, &ne) && ne.Timeout() {
				return nil, ErrNoConnect
			}
			return nil, r.err
		}
		if tc, ok := r.c.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		return r.c, nil
	case <-proc.done:
		// A process can exit right after connecting (a client that writes one line
		// and quits): prefer the connection if it is already there.
		// Accept sends once: whichever receive gets it is the last.
		var r result
		select {
		case r = <-got:
		case <-time.After(20 * time.Millisecond):
			ln.Close()
			r = <-got
		}
		if r.err == nil {
			return r.c, nil
		}
		return nil, ErrCrash
	case <-ctx.Done():
		ln.Close()
		if r := <-got; r.err == nil {
			r.c.Close()
		}
		return nil, ctx.Err()
	}
}

// EngineLocale is every engine's locale, whatever the server's (often none,
// under a service manager or env -i): UTF-8, so that a Java engine writes
// Japanese to its log as UTF-8, not "???". The launcher's Env, and an
// engine's command (env LANG=ja_JP.UTF-8 java ...), may set another.
const EngineLocale = "LANG=C.UTF-8"

// engineEnviron is the server's environment without the server's own
// settings: an engine must never see the admin token (uploaded engines are
// other people's code), and TAIKAI_* names are the launch contract's. The
// server's LC_ALL is left out too: it would override the engines' LANG.
func engineEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TAIKAI_") && !strings.HasPrefix(kv, "LC_ALL=") {
			env = append(env, kv)
		}
	}
	return env
}

// Pid returns the process id (of bwrap for a sandboxed engine).
func (p *Process) Pid() int {
	if p.sb != nil {
		return p.sb.Pid()
	}
	return p.cmd.Process.Pid
}

// ExitStatus describes how the process ended, for logs and error messages.
func (p *Process) ExitStatus() string {
	select {
	case <-p.done:
	default:
		return "running"
	}
	if p.sb != nil {
		return p.Usage().Status()
	}
	if p.err == nil {
		return "exit status 0"
	}
	return p.err.Error()
}

// Stop gives the process grace to exit by itself, then kills its whole process
// group and reaps it. It is safe to call more than once.
func (p *Process) Stop(grace time.Duration) {
	p.once.Do(func() {
		if p.sb != nil {
			p.sb.Stop(grace)
			<-p.done
			p.out.Close()
			return
		}
		if grace > 0 {
			t := time.NewTimer(grace)
			select {
			case <-p.done:
			case <-t.C:
			}
			t.Stop()
		}
		// How the engine ended, in its log, when it ended by itself: an
		// engine that left mid-game says why here (its exit status, or the
		// signal that killed it).
		select {
		case <-p.done:
			fmt.Fprintf(p.out, "[taikai] %s: the engine exited: %s\n", p.at.UTC().Format(time.RFC3339Nano), p.ExitStatus())
		default:
		}
		// Kill the group even when the leader has exited: its children may live on.
		p.pgrp.kill()
		<-p.done // bounded: SIGKILL cannot be ignored and WaitDelay bounds the pipes
		p.pgrp.release()
		p.out.Close()
	})
}

// cappedWriter keeps the first limit bytes of an engine's output in a file and
// discards the rest, so that a chatty engine cannot fill the disk.
type cappedWriter struct {
	mu      sync.Mutex
	f       *os.File
	limit   int64
	n       int64
	dropped bool
	head    []byte // the first headSize bytes, kept even when the log is discarded
}

// headSize is how much of an engine's first output is kept in memory (Process.Head).
const headSize = 4 << 10

func newCappedWriter(path string, limit int64) (*cappedWriter, error) {
	w := &cappedWriter{limit: limit}
	if path == "" {
		return w, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("engine log: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("engine log: %w", err)
	}
	w.f = f
	return w, nil
}

func (w *cappedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := headSize - len(w.head); room > 0 {
		w.head = append(w.head, b[:min(room, len(b))]...)
	}
	if w.f == nil {
		return len(b), nil
	}
	keep := b
	if room := w.limit - w.n; int64(len(keep)) > room {
		keep = keep[:max(room, 0)]
	}
	if len(keep) > 0 {
		if _, err := w.f.Write(keep); err != nil {
			return len(b), nil // the engine must not fail because its log did
		}
		w.n += int64(len(keep))
	}
	if len(keep) < len(b) && !w.dropped {
		w.dropped = true
		fmt.Fprintf(w.f, "\n[taikai] output truncated at %d bytes\n", w.limit)
	}
	return len(b), nil
}

func (w *cappedWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

var _ io.Writer = (*cappedWriter)(nil)

// ServerFault reports whether err is the server's own failure, not an
// engine's: it ran out of descriptors or memory (or the kernel of buffers or
// processes) creating a seat's listener, pipes, log or process, accepting
// the engine's connection, or reading or writing it mid-game (issue 36).
func ServerFault(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.ENOBUFS, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
