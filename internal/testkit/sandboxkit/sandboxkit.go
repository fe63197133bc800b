// Package sandboxkit is the tests' way to the engine sandbox: a copy of the
// test binary that the sandbox's uid can run, as the helper. It is apart
// from testkit, which the sandbox's own tests import.
package sandboxkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/internal/testkit"
)

// Helper copies the running test binary where the sandbox's uid can reach
// it (the temporary directories above it made searchable) and returns its
// path, once the sandbox has been checked to work with it: the test skips
// when it does not, and fails when CI=true.
func Helper(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(dir, "taikai-helper")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		tb.Fatal(err)
	}
	testkit.Need(tb, "the engine sandbox", sandbox.Check(sandbox.Config{Helper: bin, Port: engines.SandboxPort}))
	return bin
}
