package engines_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
)

// A command that names a host path (here the engine's own program by its
// host path, inside its dir) cannot run in the sandbox, which shows the
// engine its directory elsewhere: the log says bubblewrap's execvp failed,
// and NotFoundInSandbox turns that into a sentence saying what the sandbox
// sees; the same program given relative to its directory runs.
func TestNotFoundInSandbox(t *testing.T) {
	dir := t.TempDir()
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	brain := filepath.Join(dir, "brain")
	if err := os.WriteFile(brain, []byte("#!/bin/sh\necho started >&2\nexec cat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	l, _ := sandboxed(t) // the helper where the sandbox's uid can read it
	run := func(cmd string) string {
		t.Helper()
		e := engines.Engine{Name: "b", Game: "gomoku", Protocol: "pbrain", Dir: dir, Command: []string{cmd}}
		log := filepath.Join(t.TempDir(), "e.log")
		p, st, err := l.Start(context.Background(), engines.Launch{Engine: e, Color: "black", LogPath: log})
		if err != nil {
			return err.Error()
		}
		st.Close()
		if !p.Wait(10 * time.Second) {
			t.Errorf("%s: still running 10 s after its input closed", cmd)
		}
		p.Stop(0)
		b, _ := os.ReadFile(log)
		return string(b)
	}
	log := run(brain)
	msg := engines.NotFoundInSandbox(log)
	t.Logf("log:\n%s\nsaid: %s", log, msg)
	for _, want := range []string{brain, "could not be run in the sandbox", sandbox.EngineMount, "./brain"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q (log %q)", msg, want, log)
		}
	}
	if log := run("./brain"); !strings.Contains(log, "started") || engines.NotFoundInSandbox(log) != "" {
		t.Errorf("./brain: log %q, want it started", log)
	}
}
