// Package testkit holds the helpers taikai's tests share: what a test needs
// from the machine (skipped here, required under CI=true), a free loopback
// port, whether a process still runs.
package testkit

import (
	"bytes"
	"context"
	"flag"
	"math/rand/v2"
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
)

// Need skips tb when err says that something it needs (what) is missing on
// this machine, except under CI=true, where CI installs everything and a
// missing thing fails the test instead.
func Need(tb testing.TB, what string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s is required when CI=true: %v", what, err)
	}
	tb.Skipf("%s unavailable: %v", what, err)
}

// Parallel lets up to n parallel tests run at once (-test.parallel, which
// defaults to GOMAXPROCS: 2 on a 2-core machine) unless the command line
// sets -test.parallel. It is for a package whose parallel tests spend most
// of their time waiting (on engine processes, clocks, a browser) rather
// than computing. Call it from TestMain, before m.Run.
func Parallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && n > runtime.GOMAXPROCS(0) {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// Group runs subtests at once. Subtests that call t.Parallel start only when
// a slot of -test.parallel is free, behind every parallel test of the
// package not yet started: subtests of a test that waits on a server's games
// (rather than computing) then spend most of the package's run paused. A
// Group's subtests start at once, each in its own goroutine (t.Run may be
// called from several goroutines), and do not call t.Parallel.
type Group struct {
	t  *testing.T
	wg sync.WaitGroup
}

// Concurrent returns a Group of subtests of t; call Wait before t ends.
func Concurrent(t *testing.T) *Group { return &Group{t: t} }

// Run starts f as the subtest name of the group's test, and returns at once.
func (g *Group) Run(name string, f func(t *testing.T)) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.t.Run(name, f)
	}()
}

// Wait returns when every subtest started by Run has finished.
func (g *Group) Wait() { g.wg.Wait() }

// Tool returns the path of the program tool, as Need would have it.
func Tool(tb testing.TB, tool string) string {
	tb.Helper()
	path, err := exec.LookPath(tool)
	Need(tb, tool, err)
	return path
}

// Python returns the path of the interpreter the tests run as python3, as
// Tool would have it (skipped without python3, except under CI=true): see
// interpreter.
func Python(tb testing.TB) string {
	tb.Helper()
	path := Tool(tb, "python3")
	if p, err := interpreter(); err == nil {
		return p
	}
	return path
}

// PythonOnPath puts the interpreter Python returns first on PATH as
// python3, for the engines the tests register as `python3 FILE` (as users
// do) and run outside the sandbox. Call it from TestMain, before m.Run; the
// function it returns removes what it made. Without python3 it does
// nothing: the tests that need one skip or fail by Python.
func PythonOnPath() func() {
	p, err := interpreter()
	if err != nil {
		return func() {}
	}
	if onPath, err := exec.LookPath("python3"); err == nil && onPath == p {
		return func() {}
	}
	dir, err := os.MkdirTemp("", "taikai-python-")
	if err != nil {
		return func() {}
	}
	// Servers the tests run as an ordinary user find it too.
	if os.Chmod(dir, 0o755) != nil || os.Symlink(p, filepath.Join(dir, "python3")) != nil {
		os.RemoveAll(dir)
		return func() {}
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() { os.RemoveAll(dir) }
}

// interpreter is the Python the tests run, found once: the system's
// /usr/bin/python3 where there is one, else the interpreter behind
// PATH's python3. Test engines need only the standard library, and every
// start counts (hundreds of games start one): a version manager's shim
// (pyenv's is a shell script running pyenv) costs 150 ms of CPU a start
// here, and pyenv's interpreter, which imports certifi from a .pth file at
// every start, 50 ms; /usr/bin/python3 takes 16 ms.
var interpreter = sync.OnceValues(func() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if runtime.GOOS == "linux" {
		if err := exec.CommandContext(ctx, "/usr/bin/python3", "-c", "import sys; sys.exit(sys.version_info < (3, 8))").Run(); err == nil {
			return "/usr/bin/python3", nil
		}
	}
	path, err := exec.LookPath("python3")
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, path, "-c", "import sys; print(sys.executable)").Output()
	if p := strings.TrimSpace(string(out)); err == nil && p != "" {
		return p, nil
	}
	return path, nil
})

// JavaClasses compiles the Java source file src with javac into a new
// temporary directory, which it returns with a copy of src beside the
// classes: a directory that runs as `java CLASS`, where `java FILE.java`
// would compile the source again at every start (seconds of CPU each).
func JavaClasses(tb testing.TB, src string) string {
	tb.Helper()
	javac := Tool(tb, "javac")
	b, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), b, 0o644); err != nil {
		tb.Fatal(err)
	}
	if out, err := exec.Command(javac, "-d", dir, filepath.Join(dir, filepath.Base(src))).CombinedOutput(); err != nil {
		tb.Fatalf("javac %s: %v\n%s", src, err, out)
	}
	return dir
}

// FreePort is a loopback TCP port nothing listens on now, for a server a
// test starts later on it (a NATS server given its address; a server
// restarted on the same port). It is taken below 32768, under the ephemeral
// ports of Linux (32768-60999), macOS and Windows (49152-65535): the kernel
// gives those to outgoing connections and to listeners on port 0, so another
// test could take one before the server binds it (seen once, in the
// eighth suite run of a session: "bind: address already in use" for the
// embedded NATS).
func FreePort(tb testing.TB) int {
	tb.Helper()
	for range 100 {
		port := 10000 + rand.IntN(22768)
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			ln.Close()
			return port
		}
	}
	tb.Fatal("no free loopback port in 10000-32767 after 100 tries")
	return 0
}

// Alive reports whether pid is a running process: it exists and, where
// /proc tells, is neither a zombie (Z: a killed orphan stays one until init
// reaps it, which can take a while) nor dead (X). Without /proc (macOS,
// Windows) it reports false, as the tests that use it expect.
func Alive(pid int) bool {
	if pid <= 0 || !exists(pid) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}

// Exists reports whether pid names a process that has not been reaped (a
// zombie too); on Windows, one that has not exited.
func Exists(pid int) bool { return pid > 0 && exists(pid) }

// Tail is the last n bytes of s, marked as cut when it is: for a failure
// message that shows the end of a log.
func Tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// Buffer is a bytes.Buffer safe for writers and a reader at once: a
// process's or a logger's output that a test reads while it runs.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
