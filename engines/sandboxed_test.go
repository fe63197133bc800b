package engines_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/games"
)

// sandboxed returns a launcher that sandboxes every engine and a copy of
// the test binary (the helper engine) that the sandbox's uid can run.
func sandboxed(t *testing.T) (*engines.Launcher, string) {
	t.Helper()
	if err := sandbox.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the engine sandbox is required when CI=true: %v", err)
		}
		t.Skipf("engine sandbox unavailable: %v", err)
	}
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "engine-helper")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return &engines.Launcher{Self: bin, ConnectTimeout: 10 * time.Second, ExitGrace: 100 * time.Millisecond, Sandbox: true}, bin
}

func sandboxedEngine(bin, mode string, port int) engines.Engine {
	return engines.Engine{
		Name: "helper-" + mode, Game: "othello", Protocol: "othello-board", Port: port,
		Command: []string{"env", "TAIKAI_TEST_HELPER=" + mode, bin, "{host}", "{port}", "{color}"},
	}
}

// Eight engines with the same fixed port connect at once, each to its own
// seat in its own network namespace; the server's environment (the admin
// token) reaches none of them.
func TestSandboxedFixedPortAtOnce(t *testing.T) {
	l, bin := sandboxed(t)
	t.Setenv("TAIKAI_ADMIN_TOKEN", "secret-token")
	const n = 8
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	var mu sync.Mutex
	var procs []*engines.Process
	for i := range n {
		color := []string{"black", "white"}[i%2]
		wg.Go(func() {
			la := engines.Launch{Engine: sandboxedEngine(bin, "connect", 46000), Color: color, LogPath: filepath.Join(dir, color+strings.Repeat("x", i)+".log")}
			p, c, err := l.Start(context.Background(), la)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			procs = append(procs, p) // all stay up until every one has connected
			mu.Unlock()
			defer c.Close()
			if got, _ := hello(t, c); got != color {
				errs <- errors.New("launch of " + color + " got the connection of " + got)
			}
		})
	}
	wg.Wait()
	for _, p := range procs {
		p.Stop(time.Second)
		if u := p.Usage(); !u.Sandboxed || u.CPUTime <= 0 {
			t.Errorf("usage %+v, want a sandboxed engine's", u)
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, path := range logs {
		b, _ := os.ReadFile(path)
		log := string(b)
		if strings.Contains(log, "secret-token") || !strings.Contains(log, "TAIKAI_HOST=127.0.0.1\n") || !strings.Contains(log, "TAIKAI_PORT=46000\n") {
			t.Errorf("%s:\n%s", path, log)
		}
	}
}

// A stdio engine speaks on its pipes inside the sandbox.
func TestSandboxedStdio(t *testing.T) {
	l, bin := sandboxed(t)
	e := sandboxedEngine(bin, "stdio", 0)
	e.Protocol = "test-stdio"
	p, s, err := l.Start(context.Background(), engines.Launch{Engine: e, Color: "white"})
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
	if st, u := p.ExitStatus(), p.Usage(); st != "exit status 0" || !u.Sandboxed {
		t.Errorf("engine ended with %q (%+v), want exit status 0 in the sandbox", st, u)
	}
}

// An engine over its memory limit is killed, and says so.
func TestSandboxedMemoryLimit(t *testing.T) {
	l, bin := sandboxed(t)
	e := sandboxedEngine(bin, "hog", 0)
	e.MemoryMB = 128
	p, c, err := l.Start(context.Background(), engines.Launch{Engine: e, Color: "black"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	c.(net.Conn).SetReadDeadline(time.Now().Add(20 * time.Second))
	out, _ := io.ReadAll(c) // until the engine dies
	p.Stop(time.Second)
	if strings.Contains(string(out), "ALLOCATED") {
		t.Errorf("the engine allocated 2 GiB under a 128 MiB limit")
	}
	if u := p.Usage(); !u.OOMKilled || u.PeakMemory > 129<<20 || u.PeakMemory < 100<<20 {
		t.Errorf("usage %+v, want killed for memory with a peak near 128 MiB", u)
	}
	if st := p.ExitStatus(); !strings.Contains(st, "memory") {
		t.Errorf("exit status %q does not say memory", st)
	}
}

// Without a sandbox where one was asked for, only built-ins start.
func TestSandboxUnavailableRefuses(t *testing.T) {
	l := &engines.Launcher{Sandbox: true, SandboxErr: errors.New("sandbox: bwrap not found")}
	e := engines.Engine{Name: "prog", Game: "othello", Protocol: "othello-board", Command: []string{"prog"}}
	err := l.Allowed(e)
	if games.ErrorCode(err) != games.EUnavailable || !strings.Contains(err.Error(), "bwrap not found") || !strings.Contains(err.Error(), "--sandbox=off") {
		t.Errorf("Allowed: %v", err)
	}
	if _, _, err := l.Start(context.Background(), engines.Launch{Engine: e, Color: "black"}); !errors.Is(err, engines.ErrRefused) {
		t.Errorf("Start: %v, want ErrRefused", err)
	}
	if err := l.Allowed(engines.Engine{Name: "b", Builtin: "othello-random"}); err != nil || l.Sandboxed(e) || l.SandboxState() != "unavailable" {
		t.Errorf("built-in: %v; sandboxed %v, state %s", err, l.Sandboxed(e), l.SandboxState())
	}
}

// The per-engine sandbox limits are checked field by field.
func TestEngineLimitsValidate(t *testing.T) {
	base := engines.Engine{Name: "e", Game: "othello", Command: []string{"prog"}}
	for _, tc := range []struct {
		memory, procs int
		field         string
	}{{0, 0, ""}, {16, 4, ""}, {65536, 32768, ""}, {15, 0, "memory_mb"}, {-1, 0, "memory_mb"}, {1 << 20, 0, "memory_mb"}, {0, 3, "max_procs"}, {0, 1 << 16, "max_procs"}} {
		e := base
		e.MemoryMB, e.MaxProcs = tc.memory, tc.procs
		err := e.Validate()
		var ge *games.Error
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("memory %d procs %d: %v", tc.memory, tc.procs, err)
		case tc.field != "" && (!errors.As(err, &ge) || ge.Field != tc.field || ge.Code != games.EInvalid):
			t.Errorf("memory %d procs %d: %v, want an error on %s", tc.memory, tc.procs, err, tc.field)
		}
	}
	e, err := engines.ParseSpec("name=x cmd=prog memory_mb=256 max_procs=32", "othello")
	if err != nil || e.MemoryMB != 256 || e.MaxProcs != 32 {
		t.Errorf("spec: %+v, %v", e, err)
	}
}

// With Prepare, an engine's second start runs in the sandbox made after its
// first, and behaves as a cold one: its seat, its environment, its log, its
// exit status and usage; a stdio engine too. Close stops what is left
// prepared: no cgroup of the launcher remains.
func TestSandboxedPrepared(t *testing.T) {
	l, bin := sandboxed(t)
	l.Prepare = true
	t.Setenv("TAIKAI_ADMIN_TOKEN", "secret-token")
	dir := t.TempDir()
	tcp := sandboxedEngine(bin, "connect", 46000)
	stdio := sandboxedEngine(bin, "stdio", 0)
	stdio.Protocol = "test-stdio"
	// A brain with its persistent folder (mounted when prepared).
	brain := sandboxedEngine(bin, "stdio", 0)
	brain.ID, brain.Name, brain.Game, brain.Protocol = 7, "helper-brain", "gomoku", "pbrain"
	l.FoldersDir = filepath.Join(dir, "folders")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		for _, e := range []engines.Engine{tcp, stdio, brain} {
			log := filepath.Join(dir, e.Name+strings.Repeat("x", i)+".log")
			p, s, err := l.Start(context.Background(), engines.Launch{Engine: e, Color: "white", LogPath: log})
			if err != nil {
				t.Fatal(err)
			}
			if e.Protocol == "pbrain" && p.Folder() != sandbox.FolderMount {
				t.Errorf("start %d of the brain: folder %q", i, p.Folder())
			}
			if e.Protocol != "othello-board" {
				s.Write([]byte("PING 1\n"))
				line, err := bufio.NewReader(s).ReadString('\n')
				if err != nil || line != "ECHO PING 1\n" {
					t.Errorf("start %d: engine answered %q, %v", i, line, err)
				}
			} else if got, _ := hello(t, s); got != "white" {
				t.Errorf("start %d: got the hello of %q", i, got)
			}
			s.Close()
			p.Stop(5 * time.Second)
			if u := p.Usage(); !u.Sandboxed || u.ExitCode != 0 || u.CPUTime <= 0 || u.PeakMemory <= 0 {
				t.Errorf("start %d of %s: usage %+v", i, e.Name, u)
			}
			b, _ := os.ReadFile(log)
			prepared := strings.Contains(string(b), "prepared ahead")
			if strings.Contains(string(b), "secret-token") || prepared != (i > 0) {
				t.Errorf("start %d of %s (prepared: %v):\n%s", i, e.Name, prepared, b)
			}
			if e.Protocol == "othello-board" && !strings.Contains(string(b), "TAIKAI_PORT=46000\n") {
				t.Errorf("start %d: no environment in the log:\n%s", i, b)
			}
		}
		// The next start finds its sandbox prepared, as a game's would
		// after the previous game's moves: Settle waits for the three, and
		// for the removal of the ended ones.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := l.Settle(ctx); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		cancel()
		names := map[string]bool{}
		for _, dir := range taikaiCgroups(t) {
			names[filepath.Base(dir)] = true
		}
		if live := liveSandboxes(t); live != 3 || len(names) != 3 {
			t.Errorf("round %d settled with %d sandboxes prepared and %d cgroups, want 3 and 3", i, live, len(names))
		}
	}
	l.Close()
	if left := taikaiCgroups(t); len(left) > 0 {
		t.Errorf("cgroups left after Close: %v", left)
	}
}

// liveSandboxes counts this process's sandboxes with a process in them.
func liveSandboxes(t *testing.T) int {
	live := map[string]bool{}
	for _, dir := range taikaiCgroups(t) {
		if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			live[filepath.Base(dir)] = true
		}
	}
	return len(live)
}

// taikaiCgroups lists this process's sandbox cgroups in every hierarchy
// (their names start with the server's pid).
func taikaiCgroups(t *testing.T) []string {
	t.Helper()
	var found []string
	prefix := strconv.Itoa(os.Getpid()) + "-"
	_ = filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), prefix) {
			found = append(found, p)
			return fs.SkipDir
		}
		return nil
	})
	return found
}

// A game played alone has its engines' next sandboxes prepared by their
// Stop, none while it is played; an engine started beside another game has
// its next one prepared at once.
func TestPreparedBesideGames(t *testing.T) {
	l, bin := sandboxed(t)
	l.Prepare = true
	defer l.Close()
	e := sandboxedEngine(bin, "connect", 0)
	start := func(game int64, color string) (*engines.Process, engines.Stream) {
		t.Helper()
		p, s, err := l.Start(context.Background(), engines.Launch{Engine: e, Color: color, GameID: game})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := hello(t, s); got != color {
			t.Fatalf("game %d: the %s engine said hello as %q", game, color, got)
		}
		return p, s
	}
	stop := func(p *engines.Process, s engines.Stream) {
		s.Close()
		p.Stop(5 * time.Second)
	}
	counts := func(when string, ready, making int) {
		t.Helper()
		if r, m := l.PoolCounts(); r != ready || m != making {
			t.Errorf("%s: %d sandboxes prepared and %d being made, want %d and %d", when, r, m, ready, making)
		}
	}

	// Game 1, alone: its engines start cold, and nothing is prepared until
	// they are stopped; each Stop returns with its engine's next sandbox
	// ready.
	b1, sb1 := start(1, "black")
	w1, sw1 := start(1, "white")
	counts("game 1 played alone", 0, 0)
	stop(b1, sb1)
	counts("game 1's black engine stopped", 1, 0)
	stop(w1, sw1)
	counts("game 1 over", 2, 0)

	// Game 2 starts alone and takes a prepared sandbox, then game 3 starts
	// beside it and takes the other: game 3's engine has its next sandbox
	// prepared at once, game 2's only when it is stopped.
	b2, sb2 := start(2, "black")
	counts("game 2 played alone", 1, 0)
	b3, sb3 := start(3, "black")
	if r, m := l.PoolCounts(); r+m != 1 {
		t.Errorf("game 3 started beside game 2: %d sandboxes prepared and %d being made, want 1 in all", r, m)
	}
	stop(b3, sb3)
	if r, m := l.PoolCounts(); r+m != 1 {
		t.Errorf("game 3 over: %d sandboxes prepared and %d being made, want 1 in all", r, m)
	}
	stop(b2, sb2)
	if r, m := l.PoolCounts(); r < 1 || r+m != 2 {
		t.Errorf("game 2 over: %d sandboxes prepared and %d being made, want 2 in all, at least 1 ready", r, m)
	}
}
