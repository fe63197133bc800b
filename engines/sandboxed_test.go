package engines_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/internal/testkit/sandboxkit"
)

// sandboxed returns a launcher that sandboxes every engine and a copy of
// the test binary (the helper engine) that the sandbox's uid can run.
func sandboxed(t *testing.T) (*engines.Launcher, string) {
	t.Helper()
	bin := sandboxkit.Helper(t)
	return &engines.Launcher{Self: bin, ConnectTimeout: 10 * time.Second, ExitGrace: 100 * time.Millisecond, Sandbox: true}, bin
}

func sandboxedEngine(bin, mode string, port int) engines.Engine {
	return engines.Engine{
		Name: "helper-" + mode, Game: "othello", Protocol: "othello-board", Port: port,
		// The helper binary is the test binary, which the sandbox mounts.
		Command: []string{"env", "TAIKAI_TEST_HELPER=" + mode, sandbox.HelperPath, "{host}", "{port}", "{color}"},
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
