package engines_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/internal/testkit"
)

// The test binary doubles as the engine under test: started with
// TAIKAI_TEST_HELPER set, it acts out one behaviour and exits.
// The shared helpers (internal/testkit).
var (
	alive    = testkit.Alive
	freePort = testkit.FreePort
)

func TestMain(m *testing.M) {
	sandbox.MaybeHelper() // the helper of prepared sandboxes
	if mode := os.Getenv("TAIKAI_TEST_HELPER"); mode != "" {
		os.Exit(helper(mode, os.Args[1:]))
	}
	// A race-enabled binary sleeps a second at exit unless told not to; the
	// helpers are this binary.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}

func helper(mode string, args []string) int {
	out := os.Stdout
	if mode == "stdio" {
		out = os.Stderr // stdout is the protocol's
	}
	fmt.Fprintf(out, "args=%q\n", args)
	for _, k := range []string{"TAIKAI_HOST", "TAIKAI_PORT", "TAIKAI_COLOR", "TAIKAI_GAME_ID", "TAIKAI_RULE", "TAIKAI_SIZE", "TAIKAI_TIME_MS", "TAIKAI_ADMIN_TOKEN"} {
		fmt.Fprintf(out, "%s=%s\n", k, os.Getenv(k))
	}
	switch mode {
	case "stdio":
		// A pipe engine: it echoes its first line on stdout, logs on stderr.
		fmt.Fprintln(os.Stderr, "stderr: ready")
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil {
			return 1
		}
		os.Stdout.WriteString("ECHO " + line)
		// Then wait for the server to close our stdin.
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "exit":
		fmt.Fprintln(os.Stderr, "giving up at once")
		return 3
	case "silent":
		time.Sleep(time.Minute)
		return 0
	case "flood-output":
		line := strings.Repeat("z", 1023) + "\n"
		for range 3 << 10 {
			os.Stdout.WriteString(line)
		}
	}
	c, err := net.Dial("tcp", net.JoinHostPort(os.Getenv("TAIKAI_HOST"), os.Getenv("TAIKAI_PORT")))
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	fmt.Fprintf(c, "HELLO %s %d\n", os.Getenv("TAIKAI_COLOR"), os.Getpid())
	if mode == "spawn" {
		// A grandchild in the same process group, which Stop must kill too.
		self, _ := os.Executable()
		child := exec.Command(self)
		child.Env = append(os.Environ(), "TAIKAI_TEST_HELPER=silent")
		if err := child.Start(); err != nil {
			fmt.Println("spawn:", err)
			return 1
		}
		fmt.Fprintf(c, "CHILD %d\n", child.Process.Pid)
	}
	if mode == "hog" {
		// Memory, 16 MiB at a time, each page touched, up to 2 GiB.
		var keep [][]byte
		for range 128 {
			b := make([]byte, 16<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		fmt.Fprintf(c, "ALLOCATED %d\n", len(keep))
	}
	// Stay until the server closes the connection.
	buf := make([]byte, 64)
	for {
		if _, err := c.Read(buf); err != nil {
			return 0
		}
	}
}

func launcher(tb testing.TB) *engines.Launcher {
	tb.Helper()
	return &engines.Launcher{ConnectTimeout: 5 * time.Second, ExitGrace: 100 * time.Millisecond}
}

func helperEngine(tb testing.TB, mode string, port int) engines.Engine {
	tb.Helper()
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return engines.Engine{
		Name: "helper-" + mode, Game: "othello", Protocol: "othello-board", Port: port,
		Command: []string{"env", "TAIKAI_TEST_HELPER=" + mode, self, "{host}", "{port}", "{color}", "{colorflag}", "{colornum}", "{name}", "{time_ms}", "{game_id}"},
	}
}

// hello reads the helper's first line: "HELLO <color> <pid>".
func hello(tb testing.TB, c engines.Stream) (color string, pid int) {
	tb.Helper()
	c.(net.Conn).SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		tb.Fatalf("read hello: %v", err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "HELLO" {
		tb.Fatalf("hello line %q", line)
	}
	pid, _ = strconv.Atoi(f[2])
	return f[1], pid
}

func TestLaunchPlaceholdersAndEnv(t *testing.T) {
	t.Setenv("TAIKAI_ADMIN_TOKEN", "server-secret")
	l := launcher(t)
	logPath := filepath.Join(t.TempDir(), "logs", "7-white.log")
	p, c, err := l.Start(context.Background(), engines.Launch{
		Engine: helperEngine(t, "connect", 0), Color: "white", GameID: 7, TimeMS: 1500, Rule: "renju", Size: 15, LogPath: logPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	color, pid := hello(t, c)
	if color != "white" || pid != p.Pid() {
		t.Errorf("connection from %s pid %d, want white pid %d", color, pid, p.Pid())
	}
	c.Close()
	p.Stop(time.Second)
	if alive(pid) {
		t.Errorf("pid %d still alive after Stop", pid)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	port := c.(net.Conn).LocalAddr().(*net.TCPAddr).Port
	if strings.Contains(string(log), "server-secret") {
		t.Errorf("the engine saw the server's admin token:\n%s", log)
	}
	for _, want := range []string{
		fmt.Sprintf(`args=["127.0.0.1" "%d" "white" "-w" "-1" "helper-connect" "1500" "7"]`, port),
		"TAIKAI_HOST=127.0.0.1", fmt.Sprintf("TAIKAI_PORT=%d", port), "TAIKAI_COLOR=white",
		"TAIKAI_GAME_ID=7", "TAIKAI_RULE=renju", "TAIKAI_SIZE=15", "TAIKAI_TIME_MS=1500",
	} {
		if !strings.Contains(string(log), want+"\n") {
			t.Errorf("engine output lacks %q:\n%s", want, log)
		}
	}
}

func TestLaunchCrash(t *testing.T) {
	l := launcher(t)
	start := time.Now()
	_, _, err := l.Start(context.Background(), engines.Launch{Engine: helperEngine(t, "exit", 0), Color: "black"})
	if !errors.Is(err, engines.ErrCrash) {
		t.Fatalf("err = %v, want ErrCrash", err)
	}
	if !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("err = %v, want it to name the exit status", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("crash noticed after %v: it should not wait for the connect timeout", d)
	}
	// A command that does not exist is a crash too.
	e := helperEngine(t, "exit", 0)
	e.Command = []string{"/nonexistent/engine"}
	if _, _, err := l.Start(context.Background(), engines.Launch{Engine: e, Color: "black"}); !errors.Is(err, engines.ErrCrash) {
		t.Errorf("missing binary: err = %v, want ErrCrash", err)
	}
}

func TestLaunchNoConnect(t *testing.T) {
	l := launcher(t)
	start := time.Now()
	_, _, err := l.Start(context.Background(), engines.Launch{Engine: helperEngine(t, "silent", 0), Color: "black", ConnectTimeout: 300 * time.Millisecond})
	if !errors.Is(err, engines.ErrNoConnect) {
		t.Fatalf("err = %v, want ErrNoConnect", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
		t.Errorf("gave up after %v, want about the 300ms connect timeout", d)
	}
}

func TestStopKillsProcessGroup(t *testing.T) {
	l := launcher(t)
	p, c, err := l.Start(context.Background(), engines.Launch{Engine: helperEngine(t, "spawn", 0), Color: "black"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	child := spawnedChild(t, c)
	if !alive(child) {
		t.Fatalf("grandchild %d not running", child)
	}
	// The helper would exit when the connection closes, but its child would not.
	p.Stop(50 * time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for alive(child) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived Stop", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// With CPUs, an engine starts with that affinity, and so does every process
// it starts.
func TestStartOnCPU(t *testing.T) {
	cpus, err := engines.AllowedCPUs()
	if err != nil || len(cpus) < 2 {
		t.Skipf("needs two CPUs: %v %v", cpus, err)
	}
	want := cpus[len(cpus)-1]
	l := launcher(t)
	p, c, err := l.Start(context.Background(), engines.Launch{Engine: helperEngine(t, "spawn", 0), Color: "black", CPUs: []int{want}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(50 * time.Millisecond)
	defer c.Close()
	child := spawnedChild(t, c)
	for _, pid := range []string{strconv.Itoa(p.Pid()), strconv.Itoa(child)} {
		b, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			t.Fatal(err)
		}
		if got := cpusAllowed(string(b)); got != strconv.Itoa(want) {
			t.Errorf("process %s may run on CPUs %q, want %d", pid, got, want)
		}
	}
	// The server's own threads are not left on that CPU.
	b, _ := os.ReadFile("/proc/self/status")
	if got := cpusAllowed(string(b)); got == strconv.Itoa(want) {
		t.Errorf("the launcher itself was left on CPU %s", got)
	}
}

// spawnedChild reads the "spawn" helper's HELLO and CHILD lines and returns
// the pid of the grandchild it started.
func spawnedChild(t *testing.T, c engines.Stream) int {
	t.Helper()
	r := bufio.NewReader(c)
	c.(net.Conn).SetReadDeadline(time.Now().Add(5 * time.Second))
	r.ReadString('\n')
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "CHILD ") {
		t.Fatalf("child line %q, %v", line, err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "CHILD ")))
	if err != nil {
		t.Fatalf("child line %q: %v", line, err)
	}
	return child
}

func cpusAllowed(status string) string {
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// A stdio engine's stream is its stdin and stdout; only its stderr (and
// the launcher's own line) reaches the log.
func TestStdioTransport(t *testing.T) {
	l := launcher(t)
	e := helperEngine(t, "stdio", 0)
	e.Protocol = "test-stdio"
	path := filepath.Join(t.TempDir(), "out.log")
	p, s, err := l.Start(context.Background(), engines.Launch{Engine: e, Color: "white", LogPath: path})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	if _, err := s.Write([]byte("PING 1\n")); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(s).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if line != "ECHO PING 1\n" {
			t.Errorf("engine answered %q, want the echo", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer on stdout within 10s")
	}
	s.Close()
	p.Stop(5 * time.Second)
	if st := p.ExitStatus(); st != "exit status 0" {
		t.Errorf("engine ended with %q, want exit status 0 once its stdin closed", st)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if log := string(b); !strings.Contains(log, "stderr: ready") || strings.Contains(log, "ECHO") {
		t.Errorf("log %q: want stderr only, not the protocol's stdout", log)
	}
}

func TestLogIsCapped(t *testing.T) {
	l := launcher(t)
	l.LogLimit = 64 << 10
	path := filepath.Join(t.TempDir(), "out.log")
	p, c, err := l.Start(context.Background(), engines.Launch{Engine: helperEngine(t, "flood-output", 0), Color: "black", LogPath: path})
	if err != nil {
		t.Fatal(err)
	}
	hello(t, c)
	c.Close()
	p.Stop(time.Second)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 64<<10 || fi.Size() > 64<<10+200 {
		t.Errorf("log is %d bytes, want the 64 KiB cap plus a note", fi.Size())
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "output truncated at 65536 bytes") {
		t.Errorf("log does not say it was truncated")
	}
}

// Engines with a fixed port are handed out one launch at a time: concurrent
// launches each get their own process's connection.
func TestFixedPortHandsOutOneAtATime(t *testing.T) {
	l := launcher(t)
	port := freePort(t)
	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		color := []string{"black", "white"}[i%2]
		wg.Go(func() {
			p, c, err := l.Start(context.Background(), engines.Launch{Engine: helperEngine(t, "connect", port), Color: color})
			if err != nil {
				errs <- err
				return
			}
			defer p.Stop(time.Second)
			defer c.Close()
			if got := c.(net.Conn).LocalAddr().(*net.TCPAddr).Port; got != port {
				errs <- fmt.Errorf("connection on port %d, want %d", got, port)
			}
			gotColor, pid := hello(t, c)
			if gotColor != color || pid != p.Pid() {
				errs <- fmt.Errorf("launch of %s pid %d got the connection of %s pid %d", color, p.Pid(), gotColor, pid)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Waiting for a fixed port another launch holds is not the engine's fault: its
// time to connect starts once the port is its own.
func TestFixedPortWaitIsNotConnectTime(t *testing.T) {
	l := launcher(t)
	port := freePort(t)
	log := filepath.Join(t.TempDir(), "first.log")
	first := make(chan error, 1)
	go func() {
		// Holds the port for its whole 4 s and never connects.
		_, _, err := l.Start(context.Background(), engines.Launch{Engine: helperEngine(t, "silent", port), Color: "black", LogPath: log, ConnectTimeout: 4 * time.Second})
		first <- err
	}()
	// The first launch writes its log once it holds the port and starts its engine.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if fi, err := os.Stat(log); err == nil && fi.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first launch did not start in 10 s")
		}
	}
	// 3 s to connect (1 s failed once at a load average of 50), less than
	// the 4 s it waits for the port: counting the wait would fail it.
	p, c, err := l.Start(context.Background(), engines.Launch{Engine: helperEngine(t, "connect", port), Color: "white", ConnectTimeout: 3 * time.Second})
	if err != nil {
		t.Fatalf("second launch, 3 s to connect after a 4 s wait for the port: %v", err)
	}
	c.Close()
	p.Stop(time.Second)
	if err := <-first; !errors.Is(err, engines.ErrNoConnect) {
		t.Errorf("first launch: %v, want ErrNoConnect", err)
	}
}

// A pbrain engine gets its persistent folder, kept from launch to launch,
// and emptied when it is found over its limit.
func TestEngineFolder(t *testing.T) {
	dir := t.TempDir()
	l := &engines.Launcher{FoldersDir: dir, FolderLimit: 10}
	folder := filepath.Join(dir, "7")
	if err := os.MkdirAll(filepath.Join(folder, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "sub", "big"), make([]byte, 20), 0o644); err != nil {
		t.Fatal(err)
	}
	e := engines.Engine{ID: 7, Name: "b", Game: "gomoku", Protocol: "pbrain", Command: []string{"sh", "-c", "cat >/dev/null"}}
	launch := func() string {
		t.Helper()
		log := filepath.Join(t.TempDir(), "e.log")
		p, st, err := l.Start(context.Background(), engines.Launch{Engine: e, Color: "black", LogPath: log})
		if err != nil {
			t.Fatal(err)
		}
		if p.Folder() != folder {
			t.Errorf("folder %q, want %q", p.Folder(), folder)
		}
		st.Close()
		p.Stop(time.Second)
		b, _ := os.ReadFile(log)
		return string(b)
	}
	if log := launch(); !strings.Contains(log, "over its 10: emptied") {
		t.Errorf("log %q: want the folder emptied", log)
	}
	if _, err := os.Stat(filepath.Join(folder, "sub")); !os.IsNotExist(err) {
		t.Errorf("the folder over its limit still holds sub: %v", err)
	}
	if err := os.WriteFile(filepath.Join(folder, "small"), make([]byte, 5), 0o644); err != nil {
		t.Fatal(err)
	}
	if log := launch(); strings.Contains(log, "emptied") {
		t.Errorf("a folder within its limit emptied: %s", log)
	}
	if _, err := os.Stat(filepath.Join(folder, "small")); err != nil {
		t.Errorf("the folder within its limit lost its file: %v", err)
	}
	// An engine of a protocol without folders gets none.
	e.Protocol, e.Game = "test-stdio", "othello"
	p, st, err := l.Start(context.Background(), engines.Launch{Engine: e, Color: "black"})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	p.Stop(time.Second)
	if p.Folder() != "" {
		t.Errorf("a test-stdio engine got folder %q", p.Folder())
	}
}

// The log of an engine outside the sandbox says how it ended when it ended
// by itself: its exit status, or the signal something else killed it with
// (an engine that left mid-game). One that Stop had to kill gets no line.
func TestLogSaysHowTheEngineEnded(t *testing.T) {
	l := launcher(t)
	start := func(t *testing.T) (*engines.Process, engines.Stream, string, int) {
		path := filepath.Join(t.TempDir(), "out.log")
		p, c, err := l.Start(context.Background(), engines.Launch{Engine: helperEngine(t, "connect", 0), Color: "black", LogPath: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Stop(0) })
		_, pid := hello(t, c)
		return p, c, path, pid
	}
	ended := func(t *testing.T, path string) []string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "[taikai] ") && strings.Contains(line, ": the engine exited: ") {
				lines = append(lines, line[strings.Index(line, ": the engine exited: ")+2:])
			}
		}
		return lines
	}
	t.Run("by itself", func(t *testing.T) {
		p, c, path, _ := start(t)
		c.Close() // the helper exits 0 when the server closes
		p.Stop(10 * time.Second)
		if got := ended(t, path); len(got) != 1 || got[0] != "the engine exited: exit status 0" {
			t.Errorf("log's end lines %q, want one saying exit status 0", got)
		}
	})
	t.Run("killed from outside", func(t *testing.T) {
		p, c, path, pid := start(t)
		defer c.Close()
		proc, err := os.FindProcess(pid)
		if err != nil {
			t.Fatal(err)
		}
		if err := proc.Kill(); err != nil {
			t.Fatal(err)
		}
		p.Stop(10 * time.Second)
		if got := ended(t, path); len(got) != 1 || got[0] != "the engine exited: signal: killed" {
			t.Errorf("log's end lines %q, want one saying signal: killed", got)
		}
	})
	t.Run("stopped", func(t *testing.T) {
		p, c, path, _ := start(t)
		defer c.Close()
		p.Stop(50 * time.Millisecond) // still connected: it does not exit
		if got := ended(t, path); len(got) != 0 {
			t.Errorf("log's end lines %q, want none for an engine Stop killed", got)
		}
	})
}

// An engine outlives the OS threads that end while it plays. Its
// parent-death signal is that of the thread that forked it. Go ends a
// thread when a goroutine locked to it returns, as a staged sandbox's does
// (sandbox.onOwnThread) on whatever thread it started. Before the engines
// were forked on a thread that never ends, such an ending killed engines
// forked earlier on it: a match's engine lost by "disconnect" mid-game.
func TestEngineOutlivesEndedThreads(t *testing.T) {
	l := launcher(t)
	p, c, err := l.Start(context.Background(), engines.Launch{Engine: helperEngine(t, "connect", 0), Color: "black"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(0)
	defer c.Close()
	hello(t, c)
	// Goroutines that lock their thread and return: each ends its thread,
	// and the runtime starts others as needed. 64 of them end, between
	// them, every thread this test process had.
	for range 64 {
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			runtime.LockOSThread()
		}()
		<-ended
	}
	// A killed engine's connection ends: it must not within a second.
	c.(net.Conn).SetReadDeadline(time.Now().Add(time.Second))
	if n, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the engine's connection: %d bytes, %v; want it open and silent (the engine alive), exit status %s", n, err, p.ExitStatus())
	}
}
