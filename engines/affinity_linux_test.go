package engines_test

import (
	"bufio"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/proctest"
)

// cpusAllowed returns the Cpus_allowed_list of every thread of a process.
func cpusAllowed(tb testing.TB, pid string) []string {
	tb.Helper()
	out := proctest.CPUsAllowed(tb, pid)
	if len(out) == 0 {
		tb.Fatalf("no threads of process %s", pid)
	}
	return out
}

// An engine launched with CPUs runs on those only, every thread of it, and the
// launcher's own threads keep all their CPUs.
func TestLaunchOnCPUs(t *testing.T) {
	all := proctest.TwoCPUs(t)
	cpu := all[len(all)-1]
	before := cpusAllowed(t, "self")

	p, c, err := launcher(t).Start(t.Context(), engines.Launch{Engine: helperEngine(t, "stay", 0), Color: "black", CPUs: []int{cpu}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(0)
	defer c.Close()
	_, pid := hello(t, c) // the helper is a Go program: several threads by now
	got := cpusAllowed(t, strconv.Itoa(pid))
	want := strconv.Itoa(cpu)
	if len(got) < 2 || slices.ContainsFunc(got, func(s string) bool { return s != want }) {
		t.Errorf("engine threads may run on %v, want every one on %s only", got, want)
	}
	after := cpusAllowed(t, "self")
	if slices.ContainsFunc(after, func(s string) bool { return s != before[0] }) {
		t.Errorf("launcher threads after the launch may run on %v, want all on %s as before", after, before[0])
	}
}

// A CPU that cannot be had (not in the server's set) is the server's problem:
// the engine starts on any CPU rather than score as a crash.
func TestLaunchOnAMissingCPUStillStarts(t *testing.T) {
	all, err := engines.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	p, c, err := launcher(t).Start(t.Context(), engines.Launch{Engine: helperEngine(t, "stay", 0), Color: "white", CPUs: []int{1023}})
	if err != nil {
		t.Fatalf("launch pinned to CPU 1023: %v", err)
	}
	defer p.Stop(0)
	defer c.Close()
	_, pid := hello(t, c)
	want := cpusAllowed(t, "self")[0]
	if got := cpusAllowed(t, strconv.Itoa(pid)); slices.ContainsFunc(got, func(s string) bool { return s != want }) {
		t.Errorf("engine threads may run on %v, want all %d CPUs (%s) like the launcher", got, len(all), want)
	}
}

// SetCPUs moves a running engine, every thread of it and the process its main
// thread started, to the CPUs given, and back.
func TestSetCPUsOfARunningEngine(t *testing.T) {
	all := proctest.TwoCPUs(t)
	p, c, err := launcher(t).Start(t.Context(), engines.Launch{Engine: helperEngine(t, "spawn", 0), Color: "black"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(0)
	defer c.Close()
	r := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadString('\n'); err != nil { // HELLO
		t.Fatal(err)
	}
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "CHILD ") {
		t.Fatalf("child line %q, %v", line, err)
	}
	child := strings.TrimSpace(strings.TrimPrefix(line, "CHILD "))
	free := cpusAllowed(t, "self")[0]

	cpu := all[len(all)-1]
	if err := p.SetCPUs([]int{cpu}); err != nil {
		t.Fatal(err)
	}
	want := strconv.Itoa(cpu)
	for _, pid := range []string{strconv.Itoa(p.Pid()), child} {
		if got := cpusAllowed(t, pid); slices.ContainsFunc(got, func(s string) bool { return s != want }) {
			t.Errorf("after SetCPUs([%d]): threads of process %s may run on %v, want all on %s", cpu, pid, got, want)
		}
	}
	if got := cpusAllowed(t, "self"); slices.ContainsFunc(got, func(s string) bool { return s != free }) {
		t.Errorf("the server's own threads may run on %v, want all on %s as before", got, free)
	}

	if err := p.SetCPUs(all); err != nil {
		t.Fatal(err)
	}
	defer func() {
		// Once the engine has been reaped, its process id may be another's:
		// SetCPUs leaves it alone.
		p.Stop(0)
		if err := p.SetCPUs([]int{cpu}); err != nil {
			t.Errorf("SetCPUs after Stop: %v, want nil (nothing done)", err)
		}
	}()
	for _, pid := range []string{strconv.Itoa(p.Pid()), child} {
		if got := cpusAllowed(t, pid); slices.ContainsFunc(got, func(s string) bool { return s != free }) {
			t.Errorf("after SetCPUs(%v): threads of process %s may run on %v, want all on %s", all, pid, got, free)
		}
	}
}
