//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/taikai-dev/taikai/internal/testkit"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The helper process of TestParentKilled: a "server" that starts a sandbox
// and is then SIGKILLed by the test.
const helperEnv = "TAIKAI_SANDBOX_TEST_HELPER"

// helperExeEnv names the copy of the test binary that a root server's
// engines can run (see TestMain); children of the tests inherit it.
const helperExeEnv = "TAIKAI_SANDBOX_TEST_EXE"

func TestMain(m *testing.M) {
	MaybeHelper()
	if os.Getenv(noClone3Env) != "" {
		if err := refuseClone3(); err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
	}
	if exe := os.Getenv(helperExeEnv); exe != "" {
		executable = func() (string, error) { return exe, nil }
	}
	if os.Getenv(helperEnv) == "available" {
		fmt.Println(Available())
		os.Exit(0)
	}
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain(os.Getenv(helperEnv)))
	}
	// The engines' uid of a root server must be able to run the helper:
	// the test binary, copied where it can.
	if os.Geteuid() == 0 && os.Getenv(helperExeEnv) == "" {
		dir, err := os.MkdirTemp("", "taikai-sb-helper-")
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		var exe string
		var b []byte
		if err == nil {
			exe, err = os.Executable()
		}
		if err == nil {
			b, err = os.ReadFile(exe)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "taikai"), b, 0o755)
		}
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		os.Setenv(helperExeEnv, filepath.Join(dir, "taikai"))
		executable = func() (string, error) { return filepath.Join(dir, "taikai"), nil }
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// helperMain starts a sandbox that leaves a setsid double-forked sleep behind,
// prints "ready" and waits to be killed.
func helperMain(marker string) int {
	dir, err := os.MkdirTemp("", "taikai-sb-helper-")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer os.RemoveAll(dir)
	sb, err := Command(context.Background(), Config{}, "sh", "-c", doubleFork(marker))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	sb.Cmd.Stdout, sb.Cmd.Stderr = os.Stderr, os.Stderr
	if err := sb.Start(); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("ready %d\n", sb.Pid())
	_ = sb.Wait()
	return 0
}

// doubleFork is a script that leaves "sleep marker" as a setsid grandchild,
// orphaned, then sleeps itself.
func doubleFork(marker string) string {
	return fmt.Sprintf(`(setsid sleep %s >/dev/null 2>&1 </dev/null &) ; exec sleep 1000`, marker)
}

func requireSandbox(t testing.TB) {
	t.Helper()
	testkit.Need(t, "the sandbox", Available())
}

// testHelper is the helper binary (the test binary; see TestMain).
func testHelper(t testing.TB) string {
	t.Helper()
	exe, err := executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// publicDir makes a directory that the engine's uid can read (t.TempDir is
// private to root).
func publicDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "taikai-sb-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func putFile(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// buildC compiles a C program into dir/name.
func buildC(t testing.TB, dir, name, src string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	c := filepath.Join(dir, name+".c")
	putFile(t, c, src, 0o644)
	out, err := exec.Command("gcc", "-O1", "-o", filepath.Join(dir, name), c).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
}

// start starts a sandbox with its output collected.
func start(t testing.TB, cfg Config, argv ...string) (*Sandbox, *testkit.Buffer) {
	t.Helper()
	sb, err := Command(context.Background(), cfg, argv...)
	if err != nil {
		t.Fatal(err)
	}
	out := &testkit.Buffer{} // bwrap's copying goroutines write, the test reads
	sb.Cmd.Stdout, sb.Cmd.Stderr = out, out
	if err := sb.Start(); err != nil {
		t.Fatalf("start: %v\n%s", err, out)
	}
	t.Cleanup(func() { sb.Stop(0) })
	return sb, out
}

// waitDone waits for the sandbox's end, failing the test after timeout.
func waitDone(t testing.TB, sb *Sandbox, out *testkit.Buffer, timeout time.Duration) Report {
	t.Helper()
	select {
	case <-sb.Done():
	case <-time.After(timeout):
		sb.Stop(0)
		t.Fatalf("sandbox still running after %v; output:\n%s", timeout, out)
	}
	return sb.Report()
}

// run runs argv in a sandbox to its end and returns its output and usage.
func run(t testing.TB, cfg Config, timeout time.Duration, argv ...string) (string, Report) {
	t.Helper()
	sb, out := start(t, cfg, argv...)
	u := waitDone(t, sb, out, timeout)
	return out.String(), u
}

// hostPids lists the host processes whose command line is exactly argv.
func hostPids(argv ...string) []int {
	want := strings.Join(argv, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(b) == want {
			pids = append(pids, pid)
		}
	}
	return pids
}

// poll calls cond until it is true or the deadline passes.
// startedPid waits up to 5 s for the one host process whose command line
// is exactly argv, and returns its pid.
func startedPid(t testing.TB, argv ...string) int {
	t.Helper()
	var pids []int
	poll(t, 5*time.Second, strings.Join(argv, " ")+" started", func() bool { pids = hostPids(argv...); return len(pids) == 1 })
	return pids[0]
}

// exitWithin fails the test unless the process pid exits within timeout (a
// zombie counts: the host's init may reap it later). It waits on a pidfd
// rather than scanning /proc: reading a process's cmdline waits for its
// memory map's lock, which another test's engine busy allocating or dying
// of its memory limit may hold for long. (TestParentKilled failed once in
// CI at 1 s, where its kill chain takes 3–85 ms; such a scan is the likely
// cause, not a proven one.)
func exitWithin(t testing.TB, pid int, timeout time.Duration, what string) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return // already reaped
	}
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
}

func poll(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// alive is the shared helper (internal/testkit).
var alive = testkit.Alive

func marker() string { return strconv.Itoa(100000 + rand.IntN(800000)) }

// TestDescriptors: the engine gets stdin, stdout and stderr only, even when
// the server holds descriptors without close-on-exec.
func TestDescriptors(t *testing.T) {
	requireSandbox(t)
	dir := publicDir(t)
	putFile(t, filepath.Join(dir, "secret"), "TOPSECRET\n", 0o644)
	fd, err := syscall.Open(filepath.Join(dir, "secret"), syscall.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	for _, cfg := range []Config{{}, {Port: 46000}} {
		// Through /proc: dash's redirections take one-digit descriptors only,
		// and under CI's runner this one was past 9.
		out, _ := run(t, cfg, 10*time.Second, "sh", "-c", fmt.Sprintf("cat /proc/self/fd/%d; exec ls /proc/self/fd", fd))
		if strings.Contains(out, "TOPSECRET") || !strings.HasSuffix(out, "\n0\n1\n2\n3\n") { // 3: ls's own
			t.Errorf("helper %q: descriptors:\n%s", cfg.Helper, out)
		}
	}
}

// TestAvailableMessages: Available says what is missing.
func TestAvailableMessages(t *testing.T) {
	requireSandbox(t)
	t.Run("no bwrap", func(t *testing.T) {
		t.Setenv("PATH", "/nonexistent")
		if err := Available(); err == nil || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
			t.Errorf("%v", err)
		}
	})
	// An ordinary user has sandboxes too (root's engines run as 65534).
	t.Run("ordinary user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to become another user")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, testHelper(t), "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=available")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.WaitDelay = time.Second
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "<nil>" {
			t.Errorf("%v: %s", err, out)
		}
	})
}

// The bwrap errors a container's defaults cause come with the fix.
func TestContainerHints(t *testing.T) {
	for out, want := range map[string]string{
		"bwrap: Can't mount proc on /newroot/proc: Operation not permitted": "systempaths=unconfined",
		"bwrap: No permissions to create new namespace, likely because":     "seccomp=unconfined",
		"bwrap: execvp true: No such file or directory":                     "",
	} {
		if got := containerHint(out); !strings.Contains(got, want) || (want == "") != (got == "") {
			t.Errorf("%q: hint %q, want one with %q", out, got, want)
		}
	}
}

func TestExitStatus(t *testing.T) {
	requireSandbox(t)
	_, u := run(t, Config{}, 10*time.Second, "sh", "-c", "exit 3")
	if !u.Exited || u.ExitCode != 3 || u.Signal != 0 || u.OOMKilled {
		t.Errorf("exit 3: %+v", u)
	}
	_, u = run(t, Config{}, 10*time.Second, "sh", "-c", "kill -TERM $$")
	if u.Signal != int(syscall.SIGTERM) {
		t.Errorf("kill -TERM: %+v", u)
	}
	out, u := run(t, Config{}, 10*time.Second, "no-such-engine")
	if u.ExitCode == 0 || !strings.Contains(out, "no-such-engine") {
		t.Errorf("missing command: %+v %q", u, out)
	}
}

// TestFiles: a hostile script tries to read and write what it must not.
func TestFiles(t *testing.T) {
	requireSandbox(t)
	outside := publicDir(t)
	secret := filepath.Join(outside, "secret")
	putFile(t, secret, "TOPSECRET\n", 0o644)
	eng := publicDir(t)
	putFile(t, filepath.Join(eng, "private"), "TOPSECRET\n", 0o600) // root's
	putFile(t, filepath.Join(eng, "hello.txt"), "hello\n", 0o644)
	scratch := publicDir(t)
	wd, _ := os.Getwd()
	if wd == "/" {
		wd = "/nonexistent" // in a container
	}
	script := `
leak() { echo "LEAK: $*"; }
cat "$1" 2>/dev/null && leak read secret outside
ls "$(dirname "$1")" 2>/dev/null && leak list the dir outside
cat /etc/shadow 2>/dev/null | grep -q . && leak /etc/shadow
ls /etc/ssh 2>/dev/null | grep -q . && leak /etc/ssh
[ "$3" = root ] && cat /engine/private 2>/dev/null && leak root-only file of the engine dir
ls "$2" 2>/dev/null && leak the server working directory
ls /root /work /home /var /run /sys 2>/dev/null && leak host dirs
for f in /engine/new /usr/new /etc/new /new /proc/new; do
  echo x 2>/dev/null > $f && leak wrote $f
done
echo x > /engine/hello.txt 2>/dev/null && leak overwrote the engine dir
mkdir /engine/d 2>/dev/null && leak mkdir in the engine dir
cat /engine/hello.txt
echo scratch > /tmp/out.txt && cat /tmp/out.txt
echo done
`
	putFile(t, filepath.Join(eng, "hostile.sh"), script, 0o644)
	// An ordinary user's engines run as that user: its files are theirs.
	owner := "user"
	if os.Geteuid() == 0 {
		owner = "root"
	}
	out, u := run(t, Config{EngineDir: eng, ScratchDir: scratch}, 10*time.Second, "sh", "hostile.sh", secret, wd, owner)
	if strings.Contains(out, "LEAK") || strings.Contains(out, "TOPSECRET") || !strings.Contains(out, "hello\nscratch\ndone") {
		t.Errorf("output:\n%s", out)
	}
	if u.ExitCode != 0 {
		t.Errorf("usage %+v", u)
	}
	if b, err := os.ReadFile(filepath.Join(scratch, "out.txt")); err != nil || string(b) != "scratch\n" {
		t.Errorf("scratch file on the host: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(eng, "hello.txt")); string(b) != "hello\n" {
		t.Errorf("engine dir changed: %q", b)
	}
}

// TestProcesses: the engine sees neither the server's processes nor its
// environment, and cannot signal a process outside.
func TestProcesses(t *testing.T) {
	requireSandbox(t)
	t.Setenv("TAIKAI_ADMIN_TOKEN", "TOPSECRET")
	m := marker()
	victim := exec.Command("sleep", m)
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()
	script := fmt.Sprintf(`
leak() { echo "LEAK: $*"; }
env | grep -q TOPSECRET && leak environment
for p in /proc/[0-9]*; do
  tr '\0' ' ' < $p/environ 2>/dev/null | grep -q TOPSECRET && leak environ of $p
  tr '\0' ' ' < $p/cmdline 2>/dev/null | grep -q "sandbox[.]te""st\|sle""ep %[1]s" && leak cmdline of $p
done
test -e /proc/%[2]d && leak sees host pid %[2]d
test %[3]d -gt 100 && test -e /proc/%[3]d && leak sees the test pid %[3]d
kill -9 %[2]d 2>/dev/null && leak killed the victim
unshare -U true 2>/dev/null && leak created a user namespace
unshare -n true 2>/dev/null && leak created a network namespace
kill -9 -1 2>/dev/null
echo procs $(ls -d /proc/[0-9]* | wc -l)
echo done
`, m, victim.Process.Pid, os.Getpid())
	out, _ := run(t, Config{Env: []string{"VISIBLE=1"}}, 10*time.Second, "sh", "-c", script)
	if strings.Contains(out, "LEAK") || !strings.Contains(out, "done") {
		t.Errorf("output:\n%s", out)
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process outside died: %v", err)
	}
	out, _ = run(t, Config{Env: []string{"VISIBLE=1"}}, 10*time.Second, "sh", "-c", "echo $VISIBLE; hostname")
	if out != "1\nengine\n" {
		t.Errorf("env/hostname: %q", out)
	}
}

// TestNetwork: the engine reaches its seat through the listener in its
// namespace, and nothing of the host network.
func TestNetwork(t *testing.T) {
	requireSandbox(t)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("LEAK host listener\n"))
			c.Close()
		}
	}()
	hostPort := host.Addr().(*net.TCPAddr).Port
	eng := publicDir(t)
	putFile(t, filepath.Join(eng, "client.py"), `
import socket, sys
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
    print("LEAK connected to the host:", s.recv(100))
except OSError as e:
    print("host refused:", e.errno)
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("LEAK internet")
except OSError as e:
    print("internet unreachable:", e.errno)
s = socket.create_connection(("127.0.0.1", 46000), timeout=5)
s.sendall(b"ping " + sys.argv[2].encode() + b"\n")
print("got", s.makefile().readline().strip())
`, 0o644)
	// Eight engines use the same fixed port at once, each in its own
	// namespace.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := Config{EngineDir: eng, Port: 46000}
			sb, out := start(t, cfg, "/usr/bin/python3", "client.py", strconv.Itoa(hostPort), strconv.Itoa(i))
			ln := sb.Listener()
			defer ln.Close()
			// Eight Pythons start at once: in user-mode Linux, on one slow
			// CPU, that took over 10 s beside other work (the bound scales).
			ln.(deadliner).SetDeadline(time.Now().Add(scaled(10 * time.Second)))
			c, err := ln.Accept()
			if err != nil {
				t.Errorf("accept: %v\n%s", err, out)
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(scaled(10 * time.Second)))
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || line != fmt.Sprintf("ping %d\n", i) {
				t.Errorf("read %q %v", line, err)
				return
			}
			io.WriteString(c, "pong\n")
			u := waitDone(t, sb, out, scaled(10*time.Second))
			if got := out.String(); strings.Contains(got, "LEAK") || !strings.Contains(got, "got pong") || u.ExitCode != 0 {
				t.Errorf("engine %d: %+v\n%s", i, u, got)
			}
		}()
	}
	wg.Wait()
}

// TestDev: a sandbox's /dev has the devices and links of bwrap's --dev,
// and a /dev/shm of its own.
func TestDev(t *testing.T) {
	requireSandbox(t)
	script := `
for n in null zero full random urandom tty fd stdin stdout stderr shm; do [ -e /dev/$n ] || [ -L /dev/$n ] || echo "MISSING $n"; done
echo x > /dev/null || echo "FAIL write null"
[ "$(head -c 16 /dev/urandom | wc -c)" = 16 ] || echo "FAIL urandom"
[ "$(readlink /dev/fd)" = /proc/self/fd ] || echo "FAIL fd link"
ls /dev/shm | grep -q . && echo "LEAK shm holds $(ls /dev/shm)"
echo x > /dev/shm/mine || echo "FAIL write shm"
touch /dev/other 2>/dev/null && echo "WROTE /dev"
echo done
`
	for i := range 2 {
		out, u := run(t, Config{}, 10*time.Second, "sh", "-c", script)
		bad := strings.Contains(out, "MISSING") || strings.Contains(out, "FAIL") || strings.Contains(out, "LEAK")
		if u.ExitCode != 0 || !strings.HasSuffix(out, "done\n") || bad {
			t.Errorf("sandbox %d: exit %d\n%s", i, u.ExitCode, out)
		}
	}
}

// allocC touches 2 GiB page by page, printing the monotonic clock (shared
// with the host) every 64 MiB.
// TestConnectThenExit: an engine that connects, writes and exits at once is
// still accepted after its sandbox has ended.
func TestConnectThenExit(t *testing.T) {
	requireSandbox(t)
	eng := publicDir(t)
	putFile(t, filepath.Join(eng, "once.py"), `
import socket
s = socket.create_connection(("127.0.0.1", 46000), timeout=5)
s.sendall(b"move d3\n")
`, 0o644)
	{
		sb, out := start(t, Config{EngineDir: eng, Port: 46000}, "/usr/bin/python3", "once.py")
		ln := sb.Listener()
		defer ln.Close()
		if u := waitDone(t, sb, out, 10*time.Second); u.ExitCode != 0 {
			t.Fatalf("%+v\n%s", u, out)
		}
		ln.(deadliner).SetDeadline(time.Now().Add(5 * time.Second))
		c, err := ln.Accept()
		if err != nil {
			t.Fatalf("accept after the end: %v", err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b, err := io.ReadAll(c)
		c.Close()
		if string(b) != "move d3\n" {
			t.Errorf("read %q %v", b, err)
		}
	}
}

const allocC = `
#include <stdlib.h>
#include <stdio.h>
#include <time.h>
int main(void) {
	size_t n = (size_t)2 << 30;
	char *p = malloc(n);
	if (!p) { puts("malloc failed"); return 2; }
	volatile char *q = p;
	for (size_t i = 0; i < n; i += 4096) {
		q[i] = 1;
		if (i % (4 << 20) == 0) {
			struct timespec t;
			clock_gettime(CLOCK_MONOTONIC, &t);
			printf("%zu %lld\n", i >> 20, (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
			fflush(stdout);
		}
	}
	puts("LEAK allocated 2 GiB");
	return 0;
}
`

// scaled is d times TAIKAI_TEST_TIME_SCALE (as setupTimeout is 10 s times
// it): 1 but where a harness on a slow kernel sets it (deploy/uml).
func scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * float64(setupTimeout) / float64(10*time.Second))
}

func TestMemory(t *testing.T) {
	requireSandbox(t)
	eng := publicDir(t)
	buildC(t, eng, "alloc", allocC)
	t0 := time.Now()
	sb, out := start(t, Config{EngineDir: eng}, "./alloc")
	// 64 MiB a second was seen under the whole suite and a docker build;
	// in user-mode Linux touching the 1 GiB took 66 s of CPU time alone,
	// and over 90 s beside other work: the bound scales there.
	u := waitDone(t, sb, out, scaled(90*time.Second))
	var now unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
	took := time.Since(t0)
	// The time to touch 1 GiB depends on the machine's load; the time from
	// the limit to the kill and its report does not.
	var mib, ns int64
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		fmt.Sscanf(l, "%d %d", &mib, &ns)
	}
	afterLimit := time.Duration(now.Nano() - ns)
	t.Logf("2 GiB allocation ended after %v, %v after passing %d MiB: %+v", took, afterLimit, mib, u)
	if !u.OOMKilled || u.Signal != int(syscall.SIGKILL) || strings.Contains(out.String(), "LEAK") {
		t.Errorf("not OOM killed: %+v\n%s", u, out)
	}
	// The allocation says when it passed each 4 MiB (so that the time left
	// to touch up to the limit is small even where the engine gets a small
	// share of a loaded machine's CPUs: one process's, its cgroup's weight).
	// Within 2 s of crossing the limit, as issue 15 asks: on a busy machine
	// (the whole suite beside it) 0.5 s was exceeded once. Times
	// TAIKAI_TEST_TIME_SCALE in user-mode Linux, where touching the last
	// 64 MiB alone took over a second (3.1 s seen in all).
	if mib < 900 || afterLimit > scaled(2*time.Second) {
		t.Errorf("took %v, %v after passing %d MiB", took, afterLimit, mib)
	}
	if u.PeakMemory < 900<<20 || u.PeakMemory > DefaultMemory+(64<<20) {
		t.Errorf("peak memory %d", u.PeakMemory)
	}
	// A tmpfs scratch counts against the limit too.
	_, u = run(t, Config{MemoryBytes: 64 << 20}, 10*time.Second, "sh", "-c", "head -c 100000000 /dev/zero > /tmp/big; echo rc=$?")
	if u.PeakMemory > 64<<20 {
		t.Errorf("tmpfs scratch beyond the limit: %+v", u)
	}
}

const forkC = `
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
int main(void) {
	pid_t kids[150];
	int ok = 0, fail = 0;
	for (int i = 0; i < 150; i++) {
		pid_t p = fork();
		if (p == 0) { pause(); _exit(0); }
		if (p < 0) fail++; else kids[ok++] = p;
	}
	printf("ok=%d fail=%d\n", ok, fail);
	for (int i = 0; i < ok; i++) kill(kids[i], SIGKILL);
	while (wait(NULL) > 0) {}
	puts("survived");
	return 0;
}
`

// socketsPy pins kernel memory in unread TCP connections to itself: 200
// connections, each filled until its buffers are full.
const socketsPy = `
import socket, time
ln = socket.socket()
ln.bind(("127.0.0.1", 0))
ln.listen(256)
keep = []
chunk = b"x" * (1 << 20)
total = 0
for i in range(200):
    c = socket.create_connection(ln.getsockname())
    s, _ = ln.accept()
    c.setblocking(False)
    keep += [c, s]
    while True:
        try:
            total += c.send(chunk)
        except BlockingIOError:
            break
        except OSError as e:
            print("send refused:", e, flush=True)
            break
    print("queued", i + 1, total >> 20, "MiB", flush=True)
print("LEAK queued", total >> 20, "MiB unread", flush=True)
time.sleep(5)
`

// TestSocketBuffers: unread TCP buffers count against the memory limit
// (issue 35, item 8): an engine limited to 128 MiB that queues data in its
// own connections is over its limit (v1: memory.kmem.tcp refuses it and
// counts; v2 counts it in memory.current; polling counts the queues).
func TestSocketBuffers(t *testing.T) {
	requireSandbox(t)
	eng := publicDir(t)
	putFile(t, filepath.Join(eng, "sockets.py"), socketsPy, 0o644)
	sb, out := start(t, Config{EngineDir: eng, MemoryBytes: 128 << 20}, "/usr/bin/python3", "sockets.py")
	// The kernel refuses the buffers (cgroup) or polling kills the sandbox:
	// either way the sandbox is over its limit before the script is done.
	poll(t, 60*time.Second, "over the memory limit", sb.OverMemory)
	sb.Stop(0)
	u := waitDone(t, sb, out, 10*time.Second)
	if !u.OOMKilled {
		t.Errorf("usage %+v, want over the memory limit\n%s", u, out)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	t.Logf("%+v; last: %q", u, lines[len(lines)-1])
}

// TestTmpfsFiles: files written to the tmpfs /tmp count against the memory
// limit (cgroup: shmem pages; polling: the tmpfs's used blocks).
func TestTmpfsFiles(t *testing.T) {
	requireSandbox(t)
	// 200 MiB of files, then 100 MiB of the process's own: over 256 MiB
	// only if the files count.
	script := "open('/tmp/f', 'wb').write(b'x' * (200 << 20)); b = bytearray(100 << 20); import time; time.sleep(5); print('LEAK kept 300 MiB')"
	out, u := run(t, Config{MemoryBytes: 256 << 20}, 30*time.Second, "/usr/bin/python3", "-c", script)
	if !u.OOMKilled || strings.Contains(out, "LEAK") {
		t.Errorf("200 MiB in /tmp and 100 MiB of memory with a 256 MiB limit: %+v\n%s", u, out)
	}
}

func TestPids(t *testing.T) {
	requireSandbox(t)
	eng := publicDir(t)
	buildC(t, eng, "forks", forkC)
	t.Logf("limits here: %+v", HostGuarantees())
	out, u := run(t, Config{EngineDir: eng, Pids: 64}, 10*time.Second, "./forks")
	var ok, fail int
	fmt.Sscanf(out, "ok=%d fail=%d", &ok, &fail)
	t.Logf("%q %+v", out, u)
	if ok == 0 || ok >= 64 || fail == 0 || ok+fail != 150 || !strings.Contains(out, "survived") || u.ExitCode != 0 {
		t.Errorf("forks under a limit of 64: %q %+v", out, u)
	}
	// The open files limit holds too.
	out, _ = run(t, Config{NoFile: 50}, 10*time.Second, "sh", "-c", "ulimit -n; ulimit -Hn; ulimit -n 5000 2>/dev/null && echo LEAK raised")
	if out != "50\n50\n" {
		t.Errorf("open files: %q", out)
	}
}

// TestStop: a setsid double-forked grandchild is gone within 1 s after Stop.
func TestStop(t *testing.T) {
	requireSandbox(t)
	m := marker()
	sb, out := start(t, Config{}, "sh", "-c", doubleFork(m))
	grandchild := startedPid(t, "sleep", m)
	t0 := time.Now()
	sb.Stop(0)
	exitWithin(t, grandchild, time.Second, "grandchild gone")
	poll(t, time.Second, "sleep 1000 gone", func() bool { return len(hostPids("sleep", "1000")) == 0 })
	t.Logf("stopped in %v", time.Since(t0))
	if u := sb.Report(); !u.Exited || u.OOMKilled {
		t.Errorf("usage %+v\n%s", u, out)
	}
	// The engine's own exit also ends its orphans.
	m = marker()
	sb, out = start(t, Config{}, "sh", "-c", fmt.Sprintf("(setsid sleep %s &) ; sleep 0.3", m))
	grandchild = startedPid(t, "sleep", m)
	select {
	case <-sb.exited:
	case <-time.After(5 * time.Second):
		t.Fatalf("the engine did not exit\n%s", out)
	}
	exitWithin(t, grandchild, time.Second, "orphan gone after the engine's exit")
	waitDone(t, sb, out, 5*time.Second)
}

// TestStopGrace: Stop waits for an engine that ends within the grace, and
// kills one that does not when the grace is over.
func TestStopGrace(t *testing.T) {
	requireSandbox(t)
	sb, _ := start(t, Config{}, "sh", "-c", "sleep 0.2; exit 5")
	t0 := time.Now()
	sb.Stop(5 * time.Second)
	if u, d := sb.Report(), time.Since(t0); u.ExitCode != 5 || d > 3*time.Second {
		t.Errorf("ended by itself: %+v after %v", u, d)
	}
	sb, _ = start(t, Config{}, "sleep", "1000")
	t0 = time.Now()
	sb.Stop(100 * time.Millisecond)
	if u, d := sb.Report(), time.Since(t0); u.Signal != int(syscall.SIGKILL) || d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("killed: %+v after %v", u, d)
	}
	if err := sb.Wait(); err == nil {
		t.Error("Wait after a kill: no error")
	}
}

// TestParentKilled: everything dies with a SIGKILLed server.
func TestParentKilled(t *testing.T) {
	requireSandbox(t)
	m := marker()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(exe, "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+m)
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { helper.Process.Kill(); helper.Wait() }()
	lines := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- l
	}()
	var bwrapPid int
	select {
	case l := <-lines:
		if _, err := fmt.Sscanf(l, "ready %d", &bwrapPid); err != nil {
			t.Fatalf("helper: %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("helper not ready")
	}
	grandchild := startedPid(t, "sleep", m)
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	exitWithin(t, grandchild, time.Second, "grandchild gone after SIGKILL of the server")
	poll(t, time.Second, "bwrap gone", func() bool { return !alive(bwrapPid) })
	// The dead server's cgroups empty once the host's init has reaped the
	// zombies; Sweep removes them.
	var err2 error
	poll(t, 5*time.Second, "Sweep", func() bool { err2 = Sweep(); return err2 == nil })
	cg := hostCgroups()
	parent := cg.v1["memory"]
	if cg.v2 {
		parent = cg.parent
	}
	left, _ := filepath.Glob(filepath.Join(parent, strconv.Itoa(helper.Process.Pid)+"-*"))
	if len(left) != 0 {
		t.Errorf("cgroups left: %v", left)
	}
}

func TestRuntimes(t *testing.T) {
	requireSandbox(t)
	eng := publicDir(t)
	buildC(t, eng, "hello", `#include <stdio.h>
int main(int argc, char **argv) { printf("c %s\n", argv[1]); return 0; }`)
	putFile(t, filepath.Join(eng, "hello.py"), "import sys, json\nprint('python', json.dumps([1]), sys.argv[1])\n", 0o644)
	putFile(t, filepath.Join(eng, "Hello.java"), `public class Hello {
	public static void main(String[] args) throws Exception {
		Thread t = new Thread(() -> System.out.println("java " + args[0]));
		t.start(); t.join();
	}
}
`, 0o644)
	putFile(t, filepath.Join(eng, "hello.sh"), "#!/bin/sh\necho sh \"$1\"\n", 0o755)
	cases := [][]string{
		{"./hello", "x"},
		{"/usr/bin/python3", "hello.py", "x"},
		{"./hello.sh", "x"},
		{"java", "Hello.java", "x"},
	}
	for _, argv := range cases {
		t.Run(argv[0], func(t *testing.T) {
			if _, err := exec.LookPath(argv[0]); err != nil && !strings.HasPrefix(argv[0], ".") {
				t.Skipf("%s not installed", argv[0])
			}
			t0 := time.Now()
			out, u := run(t, Config{EngineDir: eng}, 60*time.Second, argv...)
			t.Logf("%s: %v, peak %d MiB, cpu %v", argv[0], time.Since(t0).Round(time.Millisecond), u.PeakMemory>>20, u.CPUTime)
			if !strings.HasSuffix(out, " x\n") || u.ExitCode != 0 {
				t.Errorf("%v: %+v\n%s", argv, u, out)
			}
		})
	}
}

func TestCPU(t *testing.T) {
	requireSandbox(t)
	out, u := run(t, Config{CPUs: []int{0}}, 10*time.Second, "sh", "-c",
		"grep Cpus_allowed_list /proc/self/status; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done")
	t.Logf("%q %+v", out, u)
	if !strings.Contains(out, "Cpus_allowed_list:\t0\n") {
		t.Errorf("CPUs: %q", out)
	}
	if u.CPUTime < 50*time.Millisecond {
		t.Errorf("CPU time %v", u.CPUTime)
	}
}

// allCPUs returns the CPUs the test may run on, skipping the test where
// there are fewer than two.
func allCPUs(t testing.TB) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() < 2 {
		t.Skipf("needs two CPUs: %d %v", set.Count(), err)
	}
	var all []int
	for c := 0; len(all) < set.Count(); c++ {
		if set.IsSet(c) {
			all = append(all, c)
		}
	}
	return all
}

// TestSetAffinity: a hostile engine that widens its affinity to every CPU
// (os.sched_setaffinity, in its process and in a child it forks after) is
// refused with EPERM by the sandbox's seccomp filter and stays on its
// Config.CPUs, however the host holds them (HostGuarantees' CPUs: cpuset
// or affinity); sched_getaffinity works. Where there is a cpuset, it is
// the engine's CPUs too.
func TestSetAffinity(t *testing.T) {
	requireSandbox(t)
	all := allCPUs(t)
	own := all[len(all)-1]
	script := `import errno, os, sys, time
def widen(who):
    before = sorted(os.sched_getaffinity(0))
    try:
        os.sched_setaffinity(0, range(os.cpu_count()))
        got = "widened"
    except OSError as e:
        got = errno.errorcode[e.errno]
    print(who, before, got, sorted(os.sched_getaffinity(0)), flush=True)
widen("engine")
if os.fork() == 0:
    widen("child")
    os._exit(0)
os.wait()
` + ioUring + `time.sleep(60)
`
	sb, out := start(t, Config{CPUs: []int{own}}, "/usr/bin/python3", "-c", script)
	poll(t, 30*time.Second, "three lines", func() bool { return strings.Count(out.String(), "\n") >= 3 })
	held := HostGuarantees().CPUs
	if held == "cpuset" {
		dir := sb.watched.dirs["cpuset"]
		if sb.watched.v2 {
			dir = sb.watched.dirs[""]
		}
		b, err := os.ReadFile(filepath.Join(dir, "cpuset.cpus"))
		if got := strings.TrimSpace(string(b)); err != nil || got != strconv.Itoa(own) {
			t.Errorf("cpuset.cpus %q %v, want %d", got, err, own)
		}
	}
	sb.Stop(0)
	t.Logf("CPUs held by %s: %q", held, out)
	one := fmt.Sprintf("[%d]", own)
	want := "engine " + one + " EPERM " + one + "\nchild " + one + " EPERM " + one + "\nio_uring_setup EPERM\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out, want)
	}
	// Outside the sandbox the same call makes a ring, where the kernel
	// offers io_uring (else the refusal above shows nothing of the filter:
	// TestAffinityFilter still does).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	plain, err := exec.CommandContext(ctx, "/usr/bin/python3", "-c", ioUring).CombinedOutput()
	t.Logf("outside the sandbox: %q %v", plain, err)
	if err != nil || !strings.HasPrefix(string(plain), "io_uring_setup ") {
		t.Errorf("outside the sandbox: %q %v", plain, err)
	}
}

// ioUring is Python that makes an io_uring (io_uring_setup, 425 on x86-64
// and arm64 alike) and prints ok or the error's name.
const ioUring = `import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
r = libc.syscall(425, 8, params)
print("io_uring_setup", "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()], flush=True)
`

// affinityC calls sched_setaffinity (to every CPU) and sched_getaffinity
// in each ABI of x86-64: its own, i386's through int $0x80 (numbers 241
// and 242; the mask below 4 GiB) and x32's (the x86-64 numbers with bit
// 0x40000000), printing ok or the error's name for each, then its CPUs.
const affinityC = `#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long i386(long nr, long a, long b, long c) {
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return ret;
}

static long native(long nr, long a, long b, long c) {
	long r = syscall(nr, a, b, c);
	return r < 0 ? -errno : r;
}

static void report(const char *what, long r) {
	printf("%s %s\n", what, r < 0 ? strerrorname_np(-r) : "ok");
}

int main(void) {
	unsigned char *mask = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (mask == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	// Some kernels (a PVM guest's) kill a process at int $0x80: try it in a
	// child first.
	int status = 0;
	pid_t pid = fork();
	if (pid == 0) {
		i386(242, 0, 128, (long)mask);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	int has_i386 = WIFEXITED(status);
	if (has_i386)
		report("i386 getaffinity", i386(242, 0, 128, (long)mask));
	else
		printf("i386 getaffinity %s\n", sigabbrev_np(WTERMSIG(status)));
	report("x32 getaffinity", native(0x40000000 | SYS_sched_getaffinity, 0, 128, (long)mask));
	report("x86_64 getaffinity", native(SYS_sched_getaffinity, 0, 128, (long)mask));
	memset(mask, 0xff, 128);
	if (has_i386)
		report("i386 setaffinity", i386(241, 0, 128, (long)mask));
	report("x32 setaffinity", native(0x40000000 | SYS_sched_setaffinity, 0, 128, (long)mask));
	report("x86_64 setaffinity", native(SYS_sched_setaffinity, 0, 128, (long)mask));
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "Cpus_allowed_list:", 18) == 0)
			fputs(line, stdout);
	return 0;
}
`

// TestSetAffinityABIs: sched_setaffinity is refused in every ABI an x86-64
// process can use, the i386 one through int $0x80 and x32's, not only its
// own, while sched_getaffinity answers in the sandbox as outside it. The
// same program run outside the sandbox first shows what each call does
// there: widening works natively and through int $0x80 (where the kernel
// runs i386 code at all: a PVM guest's kills the process with SIGSEGV,
// tried in a child), and x32's answer (ENOSYS where the kernel does
// not run x32, as Debian's by default) is what x32's sched_getaffinity must
// answer inside.
func TestSetAffinityABIs(t *testing.T) {
	requireSandbox(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("x86-64 only (int $0x80, x32)")
	}
	all := allCPUs(t)
	own := all[len(all)-1]
	eng := publicDir(t)
	buildC(t, eng, "affinity", affinityC)
	results := func(out string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if i := strings.LastIndexAny(l, " \t"); i > 0 {
				m[strings.TrimSuffix(l[:i], ":")] = l[i+1:]
			}
		}
		return m
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	plain, err := exec.CommandContext(ctx, filepath.Join(eng, "affinity")).CombinedOutput()
	if err != nil {
		t.Fatalf("outside the sandbox: %v\n%s", err, plain)
	}
	outside := results(string(plain))
	out, u := run(t, Config{EngineDir: eng, CPUs: []int{own}}, 30*time.Second, "./affinity")
	inside := results(out)
	t.Logf("outside:\n%s\ninside (CPUs held by %s):\n%s", plain, HostGuarantees().CPUs, out)
	if u.ExitCode != 0 {
		t.Fatalf("exit %d", u.ExitCode)
	}
	if outside["x86_64 setaffinity"] != "ok" {
		t.Fatalf("outside the sandbox, sched_setaffinity: %s", outside["x86_64 setaffinity"])
	}
	abis := []string{"x86_64", "x32"}
	if outside["i386 getaffinity"] == "ok" {
		if outside["i386 setaffinity"] != "ok" {
			t.Errorf("outside the sandbox, i386's sched_setaffinity: %s", outside["i386 setaffinity"])
		}
		abis = append(abis, "i386")
	} else {
		t.Logf("this kernel runs no i386 code (int $0x80: %s): that ABI is not tried", outside["i386 getaffinity"])
	}
	for _, abi := range abis {
		if got := inside[abi+" setaffinity"]; got != "EPERM" {
			t.Errorf("%s sched_setaffinity in the sandbox: %q, want EPERM", abi, got)
		}
		if got, want := inside[abi+" getaffinity"], outside[abi+" getaffinity"]; got != want {
			t.Errorf("%s sched_getaffinity in the sandbox: %q, outside %q", abi, got, want)
		}
	}
	if got := inside["Cpus_allowed_list"]; got != strconv.Itoa(own) {
		t.Errorf("CPUs at the end: %q, want %d", got, own)
	}
}

// TestAffinityFilter runs the seccomp program on every system call number
// below 1024 (and each with x32's bit) of each architecture it knows and
// of one it does not: only sched_setaffinity's numbers, as the kernel's
// tables give them here, are refused, with EPERM.
func TestAffinityFilter(t *testing.T) {
	prog, err := affinityProgram()
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	// sched_setaffinity, then io_uring_setup (425 in every ABI).
	refused := map[[2]uint32]bool{
		{unix.AUDIT_ARCH_X86_64, 203}: true, {unix.AUDIT_ARCH_X86_64, 0x40000000 | 203}: true,
		{unix.AUDIT_ARCH_I386, 241}: true, {unix.AUDIT_ARCH_AARCH64, 122}: true, {unix.AUDIT_ARCH_ARM, 241}: true,
		{unix.AUDIT_ARCH_X86_64, 425}: true, {unix.AUDIT_ARCH_X86_64, 0x40000000 | 425}: true,
		{unix.AUDIT_ARCH_I386, 425}: true, {unix.AUDIT_ARCH_AARCH64, 425}: true, {unix.AUDIT_ARCH_ARM, 425}: true,
	}
	n := 0
	for _, arch := range []uint32{unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_AARCH64, unix.AUDIT_ARCH_ARM, unix.AUDIT_ARCH_RISCV64} {
		for nr := range uint32(1024) {
			for _, nr := range []uint32{nr, nr | 0x40000000} {
				// The VM loads words big-endian, the kernel in its own order:
				// the program is the same.
				data := make([]byte, 64) // struct seccomp_data
				binary.BigEndian.PutUint32(data[0:], nr)
				binary.BigEndian.PutUint32(data[4:], arch)
				got, err := vm.Run(data)
				want := unix.SECCOMP_RET_ALLOW
				if refused[[2]uint32{arch, nr}] {
					want = unix.SECCOMP_RET_ERRNO | int(unix.EPERM)
					n++
				}
				if err != nil || got != want {
					t.Fatalf("arch %#x, call %#x: %#x %v, want %#x", arch, nr, got, err, want)
				}
			}
		}
	}
	if n != len(refused) {
		t.Errorf("%d calls refused, want %d", n, len(refused))
	}
	if b, err := affinityFilter(); err != nil || len(b) != 8*len(prog) {
		t.Errorf("filter of %d bytes, %v; want %d", len(b), err, 8*len(prog))
	}
}

func TestConfigErrors(t *testing.T) {
	requireSandbox(t)
	// An engine directory its uid cannot read itself is refused.
	private := filepath.Join(t.TempDir(), "engine")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if _, err := Command(context.Background(), Config{EngineDir: private}, "true"); err == nil || !strings.Contains(err.Error(), "not accessible") {
			t.Errorf("engine dir 0700: %v", err)
		}
	}
	if _, err := Command(context.Background(), Config{}); err == nil {
		t.Error("empty command accepted")
	}
	if _, err := Command(context.Background(), Config{Env: []string{"NOEQUALS"}}, "true"); err == nil {
		t.Error("bad env accepted")
	}
	// A context's end kills the sandbox.
	ctx, cancel := context.WithCancel(context.Background())
	sb, err := Command(ctx, Config{}, "sleep", "1000")
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Start(); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-sb.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not end the sandbox")
	}
}

// BenchmarkStart: start to exit of /bin/true, sandboxed and not, with and
// without a listener, with the test binary (41 MB for cmd/taikai's) and
// with cmd/taikai-sandbox-helper as the helper.
func BenchmarkStart(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	requireSandbox(b)
	small := smallHelper(b)
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"sandboxed", Config{}},
		{"sandboxed-port", Config{Port: 46000}},
		{"small-helper", Config{Helper: small}},
		{"small-helper-port", Config{Helper: small, Port: 46000}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				sb, err := Command(ctx, c.cfg, "/bin/true")
				if err != nil {
					b.Fatal(err)
				}
				if err := sb.Start(); err != nil {
					b.Fatal(err)
				}
				err = sb.Wait()
				cancel()
				if ln := sb.Listener(); ln != nil {
					ln.Close()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Sweep kills a process left in the cgroup of a dead server's sandbox (an
// init orphaned when its server died in the instant after bwrap's clone)
// and removes the cgroup.
func TestSweepKillsLeftovers(t *testing.T) {
	requireSandbox(t)
	// A server pid that is not running: a process that has exited.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%d-77", gone.Process.Pid)
	cg := hostCgroups()
	if cg.none != "" {
		t.Skipf("no cgroups here: %s", cg.none)
	}
	g, err := newGroup(cg, name, &Config{MemoryBytes: DefaultMemory, Pids: DefaultPids})
	if err != nil {
		t.Fatal(err)
	}
	left := exec.Command("sleep", "60")
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	defer left.Process.Kill()
	if g.v2 {
		err = writeFile(filepath.Join(g.dirs[""], "cgroup.procs"), strconv.Itoa(left.Process.Pid))
	} else {
		err = g.add(left.Process.Pid)
	}
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- left.Wait() }()
	if err := Sweep(); err != nil {
		t.Errorf("Sweep: %v", err)
	}
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("the leftover process still runs after Sweep")
	}
	for _, dir := range g.dirs {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s left", dir)
		}
	}
}

// deadliner is what a sandbox's Listener has besides net.Listener.
type deadliner interface{ SetDeadline(time.Time) error }

// noClone3Env makes TestMain refuse clone3 to the whole test process (see
// TestNoClone3).
const noClone3Env = "TAIKAI_SANDBOX_TEST_NO_CLONE3"

// refuseClone3 installs a seccomp filter on every thread of the process
// that answers clone3 with ENOSYS, as Docker's default profile does.
func refuseClone3() error {
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_CLONE3, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	return nil
}

// TestNoClone3: where clone3 is refused (Docker's default seccomp profile),
// engines still start in their cgroup and its memory limit holds. The test
// reruns itself in a child process whose every thread has a seccomp filter
// answering clone3 with ENOSYS. On cgroup v2, where the sandbox is born in
// its cgroup with clone3, the child must have taken the fallback (bwrap
// moved into the cgroup before it has its arguments); v1 never uses clone3.
func TestNoClone3(t *testing.T) {
	requireSandbox(t)
	cg := hostCgroups()
	if cg.none != "" {
		t.Skipf("no cgroups here: %s", cg.none)
	}
	if os.Getenv(noClone3Env) == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, testHelper(t), "-test.run=^TestNoClone3$", "-test.v")
		cmd.Env = append(os.Environ(), noClone3Env+"=1")
		if cg.v2 {
			// The child must be alone in a cgroup of its own to make its
			// sandboxes' cgroups: a new one beside this process's sandboxes.
			dir := filepath.Join(cg.parent, fmt.Sprintf("noclone3-%d", os.Getpid()))
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(dir)
			defer os.Remove(filepath.Join(dir, serverLeaf))
			f, err := os.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(f.Fd())}
		}
		out, err := cmd.CombinedOutput()
		t.Logf("child:\n%s", out)
		if err != nil || !strings.Contains(string(out), "--- PASS: TestNoClone3") {
			t.Errorf("child: %v", err)
		}
		return
	}
	if _, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0); e != unix.ENOSYS {
		t.Fatalf("clone3 not refused: %v", e)
	}
	eng := publicDir(t)
	buildC(t, eng, "alloc", allocC)
	sb, out := start(t, Config{EngineDir: eng, MemoryBytes: 64 << 20}, "./alloc")
	u := waitDone(t, sb, out, 90*time.Second)
	t.Logf("cgroup v2 %v, clone3 fallback taken %v: %+v", cg.v2, noClone3.Load(), u)
	if !u.OOMKilled || strings.Contains(out.String(), "LEAK") {
		t.Errorf("not killed over its memory limit: %+v\n%s", u, out)
	}
	if cg.v2 && !noClone3.Load() {
		t.Error("cgroup v2 without clone3, and no fallback taken")
	}
}

// smallHelper builds cmd/taikai-sandbox-helper into a public directory
// beside a link to the test binary, and returns the link: as Config.Helper,
// the small helper beside it runs first in the sandbox.
func smallHelper(tb testing.TB) string {
	tb.Helper()
	dir := publicDir(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// From the module's source (this file's), wherever the test binary runs:
	// the helper needs nothing but the standard library.
	_, src, _, _ := runtime.Caller(0)
	out, err := exec.CommandContext(ctx, "go", "build", "-C", filepath.Join(filepath.Dir(src), "..", ".."), "-o", filepath.Join(dir, HelperProgram), "./cmd/taikai-sandbox-helper").CombinedOutput()
	if err != nil {
		tb.Fatalf("build the small helper: %v\n%s", err, out)
	}
	if err := os.Symlink(testHelper(tb), filepath.Join(dir, "taikai")); err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(dir, "taikai")
}

// acceptRead accepts the engine's connection on the sandbox's listener
// (closed when the test ends) and reads it to its end.
func acceptRead(t *testing.T, sb *Sandbox, out *testkit.Buffer) ([]byte, error) {
	t.Helper()
	ln := sb.Listener()
	t.Cleanup(func() { ln.Close() })
	ln.(deadliner).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatalf("accept: %v\n%s", err, out)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	return io.ReadAll(c)
}

// TestSmallHelper: with cmd/taikai-sandbox-helper beside Config.Helper, it
// is the helper: the listener, the limits, the CPUs and the descriptors are
// as with the taikai binary, which stays at HelperPath.
func TestSmallHelper(t *testing.T) {
	requireSandbox(t)
	eng := publicDir(t)
	putFile(t, filepath.Join(eng, "once.py"), `
import os, resource, socket
print(sorted(os.listdir("/.taikai")), resource.getrlimit(resource.RLIMIT_NOFILE), resource.getrlimit(resource.RLIMIT_NPROC), os.sched_getaffinity(0), sorted(os.listdir("/proc/self/fd")))
s = socket.create_connection(("127.0.0.1", 46000), timeout=5)
s.sendall(b"move d3\n")
`, 0o644)
	sb, out := start(t, Config{EngineDir: eng, Port: 46000, Helper: smallHelper(t), CPUs: []int{0}, NoFile: 100, Pids: 50}, "python3", "once.py")
	if sb.cfg.small == "" {
		t.Fatal("small helper not found")
	}
	b, err := acceptRead(t, sb, out)
	u := waitDone(t, sb, out, 10*time.Second)
	want := "['helper', 'taikai'] (100, 100) (50, 50) {0} ['0', '1', '2', '3']\n"
	if string(b) != "move d3\n" || out.String() != want || u.ExitCode != 0 {
		t.Errorf("read %q %v; %+v, output %q, want %q", b, err, u, out, want)
	}
}

// TestPrivateHome: everything a sandbox mounts (the engine's directory, its
// scratch and persistent folders, the taikai binary and the small helper)
// under a 0700 directory, as in root's home: no directory on the path needs
// to be searchable by others, for a root server (whose engines run as uid
// 65534) too.
func TestPrivateHome(t *testing.T) {
	requireSandbox(t)
	home := t.TempDir()
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for _, d := range []string{"engine", "scratch", "folder", "bin"} {
		dirs[d] = filepath.Join(home, "data", d)
		if err := os.MkdirAll(dirs[d], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(home, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	putFile(t, filepath.Join(dirs["engine"], "eng.py"), `
import os, socket
print(os.getuid(), sorted(os.listdir("/.taikai")), open("/engine/eng.py").read().count("socket"), flush=True)
open("/tmp/x", "w").write("scratch")
open("/folder/y", "w").write("folder")
s = socket.create_connection(("127.0.0.1", 46000), timeout=5)
s.sendall(b"hello\n")
`, 0o644)
	link := smallHelper(t)
	b, err := os.ReadFile(link) // the test binary
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, filepath.Join(dirs["bin"], "taikai"), string(b), 0o755)
	small, err := os.ReadFile(filepath.Join(filepath.Dir(link), HelperProgram))
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, filepath.Join(dirs["bin"], HelperProgram), string(small), 0o755)
	sb, out := start(t, Config{EngineDir: dirs["engine"], ScratchDir: dirs["scratch"], FolderDir: dirs["folder"],
		Helper: filepath.Join(dirs["bin"], "taikai"), Port: 46000}, "python3", "eng.py")
	got, err := acceptRead(t, sb, out)
	u := waitDone(t, sb, out, 10*time.Second)
	uid := os.Geteuid()
	if uid == 0 {
		uid = DefaultUID
	}
	want := fmt.Sprintf("%d ['helper', 'taikai'] 3\n", uid)
	if string(got) != "hello\n" || out.String() != want || u.ExitCode != 0 {
		t.Errorf("read %q %v; %+v; output %q, want %q", got, err, u, out, want)
	}
	for f, content := range map[string]string{filepath.Join(dirs["scratch"], "x"): "scratch", filepath.Join(dirs["folder"], "y"): "folder"} {
		if b, err := os.ReadFile(f); string(b) != content {
			t.Errorf("%s: %q %v", f, b, err)
		}
	}
	// The staging is the sandbox's alone: nothing is mounted on the host.
	if mi, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mi), stageDir) {
		t.Errorf("%s mounted on the host:\n%s", stageDir, mi)
	}
}

// BenchmarkCPUHog measures how much a hostile engine, 32 processes that
// try to widen their affinity to every CPU and spin, slows a single-threaded
// opponent's fixed work in another sandbox: with CPUs of its own for each,
// as tournament.Runner gives a game's seats (the opponent on the first
// allowed CPU, the hog on the second, each with the default quota), and
// with neither pinned (the default quota alone, as before the seats had
// CPUs), and the machine's own floor: the same hog and work with no sandbox
// at all, each process pinned to its CPU by its affinity (the hog does not
// widen it). Each is the ratio of medians against the work alone, measured
// in turn in the same run (issue 35 asks for at most 1.10x). The floor is
// what the hardware charges: on a 2-vCPU VM it was 1.01x-1.20x from run to
// run (2 spinners: 1.04x, 8: 1.06x, at the same rate of context switches),
// and separate scheduling domains (a cpuset with sched_load_balance=0) did
// not lower it (docs/SANDBOX.md); so "beyond the floor" is what the sandbox
// adds. A benchmark, not a test: a machine busy with other work
// moves it.
// go test -run '^$' -bench CPUHog -benchtime 1x ./engines/sandbox
func BenchmarkCPUHog(b *testing.B) {
	requireSandbox(b)
	cpus := allCPUs(b)[:2]
	// The opponent: a fixed loop of about a second (a move at a one-second
	// clock), timed inside, in ms. At 100 ms, as until 2026-11-29, the few
	// milliseconds a run that do not grow with the work (among them the two
	// date processes, which start slower beside the spinners) were several
	// percent of it (docs/SANDBOX.md, CPUs).
	work := `t0=$(date +%s%N); i=0; while [ $i -lt 1000000 ]; do i=$((i+1)); done; echo $(( ($(date +%s%N) - t0) / 1000000 ))`
	timed := func(cpus []int) time.Duration {
		out, u := run(b, Config{CPUs: cpus}, 5*time.Minute, "sh", "-c", work)
		ms, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil || u.ExitCode != 0 {
			b.Fatalf("%q %+v", out, u)
		}
		return time.Duration(ms) * time.Millisecond
	}
	hog := `import os
def widen():
    try:
        os.sched_setaffinity(0, range(os.cpu_count()))
        return "widened"
    except OSError as e:
        return e.strerror
for i in range(32):
    if os.fork() == 0:
        widen()
        while True:
            pass
print("spinning:", widen(), sorted(os.sched_getaffinity(0)), flush=True)
os.wait()
`
	// The floor: the same work and hog with no sandbox, on their CPUs by
	// their affinity alone.
	pinned := func(cpus []int, cmd *exec.Cmd) {
		restore, err := PinThread(cpus)
		if err != nil {
			b.Fatal(err)
		}
		defer restore()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
	}
	timedBare := func(cpus []int) time.Duration {
		var out bytes.Buffer
		c := exec.Command("sh", "-c", work)
		c.Stdout = &out
		pinned(cpus, c)
		if err := c.Wait(); err != nil {
			b.Fatal(err)
		}
		ms, err := strconv.Atoi(strings.TrimSpace(out.String()))
		if err != nil {
			b.Fatalf("%q: %v", out.String(), err)
		}
		return time.Duration(ms) * time.Millisecond
	}
	const widening = "os.sched_setaffinity(0, range(os.cpu_count()))"
	if !strings.Contains(hog, widening) {
		b.Fatal("the hog no longer widens its affinity as the floor's hog expects")
	}
	besideBare := func(mine, its []int) time.Duration {
		c := exec.Command("/usr/bin/python3", "-c", strings.ReplaceAll(hog, widening, "pass"))
		stdout, err := c.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		pinned(its, c)
		defer func() {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			_ = c.Wait()
		}()
		if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil { // "spinning: ..."
			b.Fatal(err)
		}
		return timedBare(mine)
	}
	// beside times the work on mine beside a hog on its.
	hogSays := map[string]bool{}
	beside := func(mine, its []int) time.Duration {
		sb, out := start(b, Config{CPUs: its}, "/usr/bin/python3", "-c", hog)
		defer sb.Stop(0)
		poll(b, 30*time.Second, "the hog spinning", func() bool { return strings.Contains(out.String(), "\n") })
		hogSays[strings.TrimSpace(out.String())] = true
		return timed(mine)
	}
	loadavg := func() string {
		l, _ := os.ReadFile("/proc/loadavg")
		f := strings.Fields(string(l))
		return strings.Join(f[:min(3, len(f))], " ")
	}
	load := loadavg()
	var alone, seats, aloneFree, shared, aloneBare, bare []time.Duration
	for range max(b.N, 7) {
		alone = append(alone, timed(cpus[:1]))
		seats = append(seats, beside(cpus[:1], cpus[1:2]))
		aloneBare = append(aloneBare, timedBare(cpus[:1]))
		bare = append(bare, besideBare(cpus[:1], cpus[1:2]))
		aloneFree = append(aloneFree, timed(nil))
		shared = append(shared, beside(nil, nil))
	}
	median := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	ratio := float64(median(seats)) / float64(median(alone))
	unpinned := float64(median(shared)) / float64(median(aloneFree))
	floor := float64(median(bare)) / float64(median(aloneBare))
	b.ReportMetric(ratio, "slowdown-x")
	b.ReportMetric(unpinned, "slowdown-unpinned-x")
	b.ReportMetric(floor, "floor-x")
	b.Logf("on %d CPUs, CPUs held by %s, cgroups: %s, load average %s then %s", runtime.NumCPU(), HostGuarantees().CPUs,
		cmp.Or(hostCgroups().none, "yes"), load, loadavg())
	b.Logf("the hog: %v", slices.Sorted(maps.Keys(hogSays)))
	b.Logf("seats on CPUs of their own: work alone %v, beside the hog %v: %.2fx", alone, seats, ratio)
	b.Logf("neither pinned (default quota only): work alone %v, beside the hog %v: %.2fx", aloneFree, shared, unpinned)
	b.Logf("the floor, no sandbox, each pinned: work alone %v, beside the hog %v: %.2fx; the sandbox beyond it: %.2fx", aloneBare, bare, floor, ratio/floor)
}

// TestCPUQuota: Config.CPUQuota is the kernel's quota of the sandbox's cpu
// cgroup, and holds: four spinning processes under a quarter of a CPU use
// at most about a quarter of the time that passes.
func TestCPUQuota(t *testing.T) {
	requireSandbox(t)
	if why := hostCgroups().none; why != "" {
		t.Skipf("no cgroup here, so no CPU quota: %s", why)
	}
	sb, out := start(t, Config{CPUQuota: 0.25}, "sh", "-c", `for i in 1 2 3 4; do (while :; do :; done) & done; echo spinning; wait`)
	defer sb.Stop(0)
	t0 := time.Now()
	poll(t, 30*time.Second, "the hog spinning", func() bool { return strings.Contains(out.String(), "spinning") })
	g := sb.watched
	file, want := filepath.Join(g.dirs[""], "cpu.max"), "25000 100000"
	if !g.v2 {
		if g.dirs["cpu"] == "" {
			t.Skip("no cpu hierarchy of cgroup v1 here")
		}
		file, want = filepath.Join(g.dirs["cpu"], "cpu.cfs_quota_us"), "25000"
	}
	if b, err := os.ReadFile(file); err != nil || strings.TrimSpace(string(b)) != want {
		t.Errorf("%s: %q %v, want %q", file, b, err, want)
	}
	var u Report
	poll(t, time.Minute, "half a second of CPU time", func() bool { g.usage(&u); return u.CPUTime >= 500*time.Millisecond })
	wall := time.Since(t0)
	t.Logf("%v of CPU time in %v (%.2f CPUs)", u.CPUTime, wall, u.CPUTime.Seconds()/wall.Seconds())
	if u.CPUTime.Seconds() > 0.25*1.2*wall.Seconds()+0.1 {
		t.Errorf("%v of CPU time in %v: over a quarter of a CPU", u.CPUTime, wall)
	}
}
