// Package proctest reads what tests need to know of processes from /proc
// (Linux).
package proctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/engines"
)

// CPUsAllowed returns the Cpus_allowed_list of every thread of a process
// ("self" for the test's own), such as "0-1" or "1"; none if the process has
// ended.
func CPUsAllowed(tb testing.TB, pid string) []string {
	tb.Helper()
	tasks, err := filepath.Glob(filepath.Join("/proc", pid, "task", "*", "status"))
	if err != nil {
		tb.Fatalf("threads of %s: %v", pid, err)
	}
	var out []string
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				out = append(out, strings.TrimSpace(v))
			}
		}
	}
	return out
}

// OneCPU reports whether a Cpus_allowed_list names a single CPU.
func OneCPU(list string) bool { return !strings.ContainsAny(list, ",-") }

// TwoCPUs returns the CPUs this process may run on, and skips the test when
// there is only one: a thread confined to one CPU cannot then be told from a
// free one.
func TwoCPUs(tb testing.TB) []int {
	tb.Helper()
	all, err := engines.AllowedCPUs()
	if err != nil {
		tb.Fatal(err)
	}
	if len(all) < 2 {
		tb.Skipf("one CPU (%v): a thread confined to one CPU cannot be told from a free one", all)
	}
	return all
}
