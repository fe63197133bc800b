package engines_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/internal/testkit"
)

// helperLaunch is helperEngine's engine without env(1), which Windows lacks:
// the helper's mode goes in the launch's environment.
func helperLaunch(t *testing.T, mode string) engines.Launch {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := engines.Engine{Name: "helper-" + mode, Game: "othello", Protocol: "othello-board",
		Command: []string{self, "{host}", "{port}", "{color}"}}
	return engines.Launch{Engine: e, Color: "black", Env: []string{"TAIKAI_TEST_HELPER=" + mode}}
}

// The engine's job object: Stop kills the process the engine started, which
// the engine's own exit would leave running.
func TestStopKillsJob(t *testing.T) {
	l := launcher(t)
	p, c, err := l.Start(context.Background(), helperLaunch(t, "spawn"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	child := spawnedChild(t, c)
	if !testkit.Exists(child) {
		t.Fatalf("grandchild %d not running", child)
	}
	p.Stop(50 * time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for testkit.Exists(child) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived Stop", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
	switch u := p.Usage(); {
	case u.PeakMemory > 0:
	case underWine():
		t.Logf("peak memory %d: wine does not report a job's peak memory", u.PeakMemory)
	default:
		t.Errorf("peak memory %d, want the job's peak", u.PeakMemory)
	}
}

// An engine's exit code is reported, as on Unix.
func TestExitCode(t *testing.T) {
	l := launcher(t)
	_, _, err := l.Start(context.Background(), helperLaunch(t, "exit"))
	if !errors.Is(err, engines.ErrCrash) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("err = %v, want ErrCrash naming exit status 3", err)
	}
}

// underWine reports whether the test runs under wine (its ntdll exports
// wine_get_version).
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
