//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// eachWaiter runs f with each shell a prepared sandbox's waiter may run
// in: klibc's sh (where waiterShell picks it) and the system's sh.
func eachWaiter(t *testing.T, f func(t *testing.T)) {
	picked := waiterShell()
	defer func() { waiterShell = func() string { return picked } }()
	for _, sh := range []string{klibcSh, ""} {
		name := "system-sh"
		if sh != "" {
			name = "klibc-sh"
		}
		t.Run(name, func(t *testing.T) {
			if sh != "" && picked == "" {
				if os.Getenv("CI") == "true" {
					t.Fatal("klibc's sh is not the waiter's in CI: install klibc-utils, and run the tests as root")
				}
				t.Skip("klibc's sh is not the waiter's here: klibc-utils missing, or the server cannot set the limit (see canSetRlimits)")
			}
			waiterShell = func() string { return sh }
			f(t)
		})
	}
}

// prepare makes a prepared sandbox, stopped at the test's end.
func prepare(t testing.TB, cfg Config, stdio bool) *Sandbox {
	t.Helper()
	sb, err := Prepare(cfg, stdio)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Stop(0) })
	return sb
}

// execLogged runs argv in a prepared sandbox and reads its log into out
// until the sandbox ends; it returns the engine's other streams.
func execLogged(t testing.TB, sb *Sandbox, env []string, argv ...string) (*syncBuf, Streams) {
	t.Helper()
	st, err := sb.Exec(argv, env)
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuf{eof: make(chan struct{})}
	go func() {
		io.Copy(out, st.Log) // ends at end of file: when the sandbox is gone
		close(out.eof)
	}()
	t.Cleanup(func() {
		st.Log.Close()
		if st.Stdin != nil {
			st.Stdin.Close()
			st.Stdout.Close()
		}
	})
	return out, st
}

// A prepared sandbox runs its engine as Command's would: its seat's listener
// (opened by the server or by the helper), its environment and nothing of
// the server's, the engine directory as working directory, the engine's uid,
// and its exit status.
func TestPrepareExec(t *testing.T) {
	requireSandbox(t)
	eachWaiter(t, func(t *testing.T) {
		helper := testHelper(t)
		eng := publicDir(t)
		putFile(t, filepath.Join(eng, "client.sh"), `
	exec 3<>/dev/tcp/127.0.0.1/46000
	echo "hello $GREETING from $(pwd) uid $(id -u) pid $$ home $HOME secret=${TAIKAI_SANDBOX_TEST_SECRET:-none}" >&3
	read -r reply <&3
	echo "got $reply"
	exit 7
	`, 0o644)
		t.Setenv("TAIKAI_SANDBOX_TEST_SECRET", "server-only")
		setnsErr := Check(Config{Port: 46000})
		for _, helperListens := range []bool{false, true} {
			if !helperListens && setnsErr != nil {
				t.Logf("no listener through setns here: %v", setnsErr)
				continue
			}
			cfg := Config{EngineDir: eng, Port: 46000}
			if helperListens {
				cfg.Helper = helper
			}
			sb := prepare(t, cfg, false)
			ln := sb.Listener()
			if ln == nil {
				t.Fatal("a prepared sandbox with a port has no listener")
			}
			defer ln.Close()
			out, _ := execLogged(t, sb, []string{"GREETING=world"}, "bash", "client.sh")
			ln.(deadliner).SetDeadline(time.Now().Add(20 * time.Second))
			c, err := ln.Accept()
			if err != nil {
				t.Fatalf("accept: %v\n%s", err, out)
			}
			c.SetDeadline(time.Now().Add(20 * time.Second))
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				t.Fatalf("read: %v\n%s", err, out)
			}
			// The engine is not the sandbox's init (pid 1): the waiter is
			// (with a helper, after the helper's threads have taken pids).
			want := "hello world from /engine uid " // uid checked below
			if !strings.HasPrefix(line, want) || !strings.Contains(line, " home /tmp secret=none") || strings.Contains(line, " pid 1 ") {
				t.Errorf("helper listens %v: engine said %q", helperListens, line)
			}
			if os.Geteuid() == 0 && !strings.Contains(line, "uid 65534 ") {
				t.Errorf("engine not run as 65534: %q", line)
			}
			io.WriteString(c, "pong\n")
			c.Close()
			u := waitDone(t, sb, out, 20*time.Second)
			if u.ExitCode != 7 || !strings.Contains(out.String(), "got pong") {
				t.Errorf("helper listens %v: usage %+v, output:\n%s", helperListens, u, out)
			}
		}
	})
}

// Prepare returns once the sandbox is made: bwrap's init has become the
// waiting sh (bwrap's setup goes on after Start has released it; the
// pool's Settle, and so the bench, count on that work being done).
func TestPrepareReady(t *testing.T) {
	requireSandbox(t)
	eachWaiter(t, func(t *testing.T) {
		sh, err := filepath.EvalSymlinks("/bin/sh")
		if err != nil {
			t.Fatal(err)
		}
		if waiterShell() != "" {
			sh = klibcSh
		}
		for range 5 {
			sb := prepare(t, Config{}, false)
			bwrap := sb.Pid()
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", bwrap, bwrap))
			if err != nil {
				t.Fatal(err) // the kernel's CONFIG_PROC_CHILDREN
			}
			kids := strings.Fields(string(b))
			if len(kids) != 1 {
				t.Fatalf("bwrap %d has children %v, want its init alone", bwrap, kids)
			}
			exe, err := os.Readlink("/proc/" + kids[0] + "/exe")
			if err != nil || exe != sh {
				t.Errorf("the sandbox's init runs %q (%v) once Prepare has returned, want %s", exe, err, sh)
			}
			sb.Stop(0)
		}
	})
}

// An engine in a prepared sandbox ends as under Command: its exit status,
// the signal that killed it (one it sent itself too: it is not the
// sandbox's init), and nothing of it left, an orphan of it neither.
func TestPrepareExitStatus(t *testing.T) {
	requireSandbox(t)
	eachWaiter(t, func(t *testing.T) {
		for _, tc := range []struct {
			script       string
			code, signal int
		}{
			{"exit 3", 3, 0},
			{"kill -TERM $$", 128 + 15, 15},
			{"kill -ABRT $$", 128 + 6, 6},
		} {
			sb := prepare(t, Config{}, false)
			out, _ := execLogged(t, sb, nil, "sh", "-c", tc.script)
			u := waitDone(t, sb, out, 20*time.Second)
			if !u.Exited || u.ExitCode != tc.code || u.Signal != tc.signal {
				t.Errorf("%q: %+v\n%s", tc.script, u, out)
			}
		}
		// A setsid orphan of the engine's is gone within 1 s of its exit
		// (read ends at end of file: the script exits 1).
		m := marker()
		sb := prepare(t, Config{}, true)
		out, st := execLogged(t, sb, nil, "sh", "-c", fmt.Sprintf("(setsid sleep %s >/dev/null 2>&1 </dev/null &); read -r x", m))
		orphan := startedPid(t, "sleep", m)
		st.Stdin.Close()
		exitWithin(t, orphan, time.Second, "orphan gone after the engine's exit")
		if u := waitDone(t, sb, out, 20*time.Second); u.ExitCode != 1 {
			t.Errorf("orphan's parent: %+v\n%s", u, out)
		}
		// exec runs programs, not the waiter's builtins.
		sb = prepare(t, Config{}, false)
		out, _ = execLogged(t, sb, nil, "echo", "--version")
		waitDone(t, sb, out, 20*time.Second)
		if !strings.Contains(out.String(), "GNU coreutils") {
			t.Errorf("echo --version ran sh's echo: %q", out)
		}
	})
}

// A stdio engine gets its pipes; a missing executable exits with 127 and
// says so in the engine's output, as under Command; a word the waiter's
// command line cannot carry is refused before the sandbox is used.
func TestPrepareStdioAndMissing(t *testing.T) {
	requireSandbox(t)
	eachWaiter(t, func(t *testing.T) {
		sb := prepare(t, Config{}, true)
		for _, bad := range [][2][]string{
			{{"-x"}, nil},
			{{"sh", "a\nb"}, nil},
			{{"sh"}, {"A-B=1"}},
		} {
			if _, err := sb.Exec(bad[0], bad[1]); err == nil || Execable(bad[0], bad[1]) == nil {
				t.Errorf("Exec(%q, %q) accepted", bad[0], bad[1])
			}
		}
		log, st := execLogged(t, sb, []string{"Q=it's \"quoted\" $HOME"}, "sh", "-c", `read -r x; echo "echo $x $Q"; echo "to the log" >&2`)
		io.WriteString(st.Stdin, "ping\n")
		st.Stdout.SetReadDeadline(time.Now().Add(20 * time.Second))
		line, err := bufio.NewReader(st.Stdout).ReadString('\n')
		if want := "echo ping it's \"quoted\" $HOME\n"; err != nil || line != want {
			t.Errorf("read %q, %v; want %q", line, err, want)
		}
		if u := waitDone(t, sb, log, 20*time.Second); u.ExitCode != 0 || !strings.Contains(log.String(), "to the log") {
			t.Errorf("usage %+v, log %q", u, log)
		}
		if _, err := sb.Exec([]string{"true"}, nil); err == nil {
			t.Error("a second Exec was accepted")
		}

		sb = prepare(t, Config{}, false)
		out, _ := execLogged(t, sb, nil, "./no-such-engine")
		u := waitDone(t, sb, out, 20*time.Second)
		if u.ExitCode != 127 || !strings.Contains(out.String(), "no-such-engine: not found") {
			t.Errorf("missing engine: usage %+v, output %q", u, out)
		}
	})
}

// A prepared sandbox that is never used is stopped with nothing left: its
// helper and its cgroups are gone.
func TestPrepareStopUnused(t *testing.T) {
	requireSandbox(t)
	for _, helper := range []string{testHelper(t), ""} {
		sb := prepare(t, Config{Port: 46000, Helper: helper}, true)
		dirs := make([]string, 0, len(sb.group.dirs))
		for _, d := range sb.group.dirs {
			dirs = append(dirs, d)
		}
		if len(sb.group.procs()) == 0 {
			t.Fatal("no process in the prepared sandbox's cgroups")
		}
		var ns *os.File // its network namespace, if of the pool
		if sb.netns != nil {
			ns = sb.netns.ns
		}
		sb.Stop(0)
		select {
		case <-sb.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("prepared sandbox still running 10 s after Stop")
		}
		for _, d := range dirs {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("cgroup %s left behind (%v)", d, err)
			}
		}
		if _, err := sb.Exec([]string{"true"}, nil); err == nil {
			t.Error("Exec on a stopped sandbox succeeded")
		}
		// Nobody got its listener: the sandbox closed it (and a namespace
		// of the pool went back).
		ln := sb.Listener()
		ln.(deadliner).SetDeadline(time.Now().Add(time.Second))
		if c, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("helper %q: the unused sandbox's listener is open: %v %v", helper, c, err)
		}
		if (ns != nil) != (helper == "" && pooledNetns()) {
			t.Errorf("helper %q: network namespace of the pool: %v", helper, ns)
		}
		if ns != nil {
			netnsPool.mu.Lock()
			back := slices.Contains(netnsPool.idle, ns)
			netnsPool.mu.Unlock()
			if !back {
				t.Error("the unused sandbox's network namespace is not back in the pool")
			}
		}
	}
}

// orphaned tells whether pid and its ancestors up to pid 1 are all
// prepared sandboxes' processes (bwrap, its init and the waiter, whose
// command lines hold the waiter's): nobody's, once their server is dead;
// those of a live server (another test's) have it among their ancestors.
func orphaned(pid int) bool {
	for range 10 {
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !bytes.Contains(cmd, []byte(waiter)) {
			return false
		}
		if pid, err = parentPid(pid); err != nil {
			return false
		}
		if pid == 1 {
			return true
		}
	}
	return false
}

// BenchmarkPreparedStart is the part of a sandbox's start that a game waits
// for when the sandbox was prepared ahead: Exec of /bin/true to its end
// (compare BenchmarkStart/plain, an unsandboxed /bin/true, in the same run).
func BenchmarkPreparedStart(b *testing.B) {
	requireSandbox(b)
	for b.Loop() {
		b.StopTimer()
		sb, err := Prepare(Config{}, false)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := sb.Exec([]string{"/bin/true"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := sb.Wait(); err != nil {
			b.Fatal(err)
		}
		st.Log.Close()
	}
}

// A server killed by SIGKILL while it prepares sandboxes leaves nothing
// once Sweep has run (as the next server's start does). A sandbox's init
// released before the server's death finds the server gone and ends by
// itself; one killed in bwrap's own setup (waiting for the uid map its dead
// parent was to write) sleeps, running nothing, in the dead server's
// cgroups or, killed before bwrap had its arguments, outside them, as an
// orphan: Sweep kills both. The test logs how many there were.
func TestPrepareServerKilled(t *testing.T) {
	requireSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		server := exec.Command(exe, "-test.run=^$")
		server.Env = append(os.Environ(), helperEnv+"=prepare")
		if err := server.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+10*i) * time.Millisecond) // some prepared, some on their way
		server.Process.Kill()
		server.Wait()
		prefix := fmt.Sprintf("/%d-", server.Process.Pid)
		// Left by the dead server: orphans, or processes in its cgroups.
		left := func() []string {
			var out []string
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				pid, err := strconv.Atoi(e.Name())
				if err != nil {
					continue
				}
				cg, err := os.ReadFile("/proc/" + e.Name() + "/cgroup")
				cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
				if err != nil || !bytes.Contains(cmd, []byte(waiter)) {
					continue
				}
				if orphaned(pid) || strings.Contains(string(cg), prefix) {
					out = append(out, fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
				}
			}
			return out
		}
		// Those that can end by themselves do so at once; give them 100 ms.
		time.Sleep(100 * time.Millisecond)
		t.Logf("kill %d: %d left before Sweep", i, len(left()))
		// A bwrap killed in a slow clone(2) (the kernel's network namespace
		// lock is contended under load) may leave its child's orphaning
		// until after a first Sweep: a server's next start is later still.
		poll(t, 5*time.Second, "nothing left after Sweep", func() bool { return Sweep() == nil && len(left()) == 0 })
		if l := left(); len(l) > 0 {
			t.Errorf("kill %d: left after Sweep: %v", i, l)
		}
		if dirs, _ := filepath.Glob(filepath.Join(hostCgroups().memory.parent, strconv.Itoa(server.Process.Pid)+"-*")); len(dirs) > 0 {
			t.Errorf("kill %d: cgroups left after Sweep: %v", i, dirs)
		}
	}
}
