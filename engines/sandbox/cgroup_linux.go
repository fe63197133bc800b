//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// CgroupParent, if set before the first sandbox, is the cgroup under which
// sandboxes get their cgroups, relative to each hierarchy's mount point, e.g.
// "/taikai". By default it is "taikai" under the server's own cgroup on v1 and
// next to it on v2 (see parseCgroups), so that the limits of the server's
// service still bound its engines.
var CgroupParent string

// hierarchy is one mounted cgroup hierarchy the sandbox uses.
type hierarchy struct {
	v2     bool
	mount  string // mount point
	parent string // absolute directory under which sandboxes' cgroups go
	self   string // v1: the server's own cgroup's directory ("" if unknown)
}

// cgroupSetup is what the host offers, detected once.
type cgroupSetup struct {
	v2        bool
	memory    *hierarchy // v1: memory; v2: the unified hierarchy
	pids      *hierarchy
	cpuacct   *hierarchy // v1 only
	cpuset    *hierarchy // optional
	unified   *hierarchy // v2 only
	detectErr error
}

var (
	cgOnce sync.Once
	cgHost cgroupSetup
)

func hostCgroups() *cgroupSetup {
	cgOnce.Do(func() { cgHost = detectCgroups() })
	return &cgHost
}

// detectCgroups finds the v1 controllers it needs, or else a v2 hierarchy
// offering memory and pids.
func detectCgroups() cgroupSetup {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return cgroupSetup{detectErr: fmt.Errorf("read mountinfo: %w", err)}
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return cgroupSetup{detectErr: fmt.Errorf("read own cgroup: %w", err)}
	}
	return parseCgroups(string(mounts), string(self), os.ReadFile)
}

// parseCgroups is detectCgroups on the texts of /proc/self/mountinfo and
// /proc/self/cgroup; readFile reads cgroup.controllers.
func parseCgroups(mounts, self string, readFile func(string) ([]byte, error)) cgroupSetup {
	var s cgroupSetup
	own := ownCgroups(self)
	type mnt struct{ point, root string }
	v1 := map[string]mnt{} // controller -> its hierarchy's mount
	var v2 *mnt
	for _, line := range strings.Split(mounts, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, pf := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(pf) < 3 {
			continue
		}
		m := mnt{point: unescapeMount(f[4]), root: unescapeMount(f[3])}
		switch pf[0] {
		case "cgroup":
			for _, opt := range strings.Split(pf[2], ",") {
				switch opt {
				case "memory", "pids", "cpuacct", "cpuset":
					if _, seen := v1[opt]; !seen {
						v1[opt] = m
					}
				}
			}
		case "cgroup2":
			if v2 == nil {
				v2 = &m
			}
		}
	}
	// parentOf is where sandboxes go in a hierarchy: v1: taikai/ under the
	// server's own cgroup; v2, where a cgroup with processes cannot delegate
	// controllers to children: taikai/ next to the server's own cgroup (with
	// systemd: Delegate=yes and DelegateSubgroup=server put the server in
	// taikai.service/server, sandboxes go to taikai.service/taikai). A
	// container may mount only its own subtree: the mount's root is then a
	// prefix of the server's cgroup path.
	relOf := func(m mnt, ownPath string) string {
		if m.root != "/" && (ownPath == m.root || strings.HasPrefix(ownPath, m.root+"/")) {
			return strings.TrimPrefix(ownPath, m.root)
		}
		return ownPath
	}
	parentOf := func(m mnt, ownPath string, v2 bool) string {
		if CgroupParent != "" {
			return filepath.Join(m.point, CgroupParent)
		}
		rel := relOf(m, ownPath)
		if v2 {
			rel = filepath.Dir(filepath.Join("/", rel))
		}
		return filepath.Join(m.point, rel, "taikai")
	}
	if _, ok := v1["memory"]; ok {
		h := func(c string) *hierarchy {
			m, ok := v1[c]
			if !ok {
				return nil
			}
			h := &hierarchy{mount: m.point, parent: parentOf(m, own[c], false)}
			if own[c] != "" {
				h.self = filepath.Join(m.point, relOf(m, own[c]))
			}
			return h
		}
		s.memory, s.pids, s.cpuacct, s.cpuset = h("memory"), h("pids"), h("cpuacct"), h("cpuset")
		if s.pids == nil {
			s.detectErr = errors.New("cgroup v1 has no pids controller mounted")
		}
		return s
	}
	if v2 == nil {
		s.detectErr = errors.New("no cgroup memory controller: neither cgroup v1 memory nor cgroup2 is mounted")
		return s
	}
	ctrl, err := readFile(filepath.Join(v2.point, "cgroup.controllers"))
	if err != nil || !strings.Contains(string(ctrl), "memory") || !strings.Contains(string(ctrl), "pids") {
		s.detectErr = fmt.Errorf("cgroup2 at %s does not offer the memory and pids controllers (%q)", v2.point, strings.TrimSpace(string(ctrl)))
		return s
	}
	h := &hierarchy{v2: true, mount: v2.point, parent: parentOf(*v2, own[""], true)}
	s.v2, s.unified, s.memory, s.pids = true, h, h, h
	if strings.Contains(string(ctrl), "cpuset") {
		s.cpuset = h
	}
	return s
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroups maps each v1 controller (and "" for v2) to the server's cgroup,
// from the text of /proc/self/cgroup.
func ownCgroups(self string) map[string]string {
	own := map[string]string{}
	for _, line := range strings.Split(self, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	return own
}

// group is the set of cgroup directories of one sandbox.
type group struct {
	setup *cgroupSetup
	dirs  map[*hierarchy]string
}

func writeFile(path, value string) error {
	err := os.WriteFile(path, []byte(value), 0)
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return -1, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// keyed reads a "key value" file (memory.events, cpu.stat, oom_control).
func keyed(path, key string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// ensureParent creates the parent directory of the sandboxes' cgroups.
func ensureParent(h *hierarchy, cpuset bool) error {
	if err := os.MkdirAll(h.parent, 0o755); err != nil {
		return fmt.Errorf("create cgroup %s: %w", h.parent, err)
	}
	if h.v2 {
		// Controllers must be enabled from the hierarchy's root down to parent.
		want := []string{"+memory", "+pids", "+cpu"}
		if cpuset {
			want = append(want, "+cpuset")
		}
		rel, _ := filepath.Rel(h.mount, h.parent)
		dir := h.mount
		for _, part := range append([]string{""}, strings.Split(rel, "/")...) {
			dir = filepath.Join(dir, part)
			for _, c := range want {
				err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), c)
				if err != nil && c != "+cpu" && c != "+cpuset" {
					if errors.Is(err, syscall.EBUSY) {
						return fmt.Errorf("%w: cgroup v2 does not allow controllers in %s, which holds processes: run the server in a leaf cgroup of a delegated subtree and set sandbox.CgroupParent to a sibling (e.g. systemd Delegate=yes)", err, dir)
					}
					return err
				}
			}
		}
		return nil
	}
	if cpuset {
		// A v1 cpuset cgroup cannot take tasks before cpus and mems are set:
		// copy them down from the nearest ancestor that has them.
		rel, _ := filepath.Rel(h.mount, h.parent)
		dir := h.mount
		for _, part := range strings.Split(rel, "/") {
			parent := dir
			dir = filepath.Join(dir, part)
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				cur, _ := os.ReadFile(filepath.Join(dir, f))
				if strings.TrimSpace(string(cur)) != "" {
					continue
				}
				up, err := os.ReadFile(filepath.Join(parent, f))
				if err != nil {
					return err
				}
				if err := writeFile(filepath.Join(dir, f), strings.TrimSpace(string(up))); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// newGroup creates and configures the cgroups of one sandbox.
func newGroup(name string, cfg *Config) (*group, error) {
	s := hostCgroups()
	if s.detectErr != nil {
		return nil, s.detectErr
	}
	g := &group{setup: s, dirs: map[*hierarchy]string{}}
	// Moving another uid's process into a cpuset that changes its CPUs
	// needs CAP_SYS_NICE; without it, taskset's affinity is all there is.
	useCpuset := len(cfg.CPUs) > 0 && s.cpuset != nil && hasCap(unix.CAP_SYS_NICE)
	hs := []*hierarchy{s.memory}
	if !s.v2 {
		hs = append(hs, s.pids)
		if s.cpuacct != nil {
			hs = append(hs, s.cpuacct)
		}
		if useCpuset {
			hs = append(hs, s.cpuset)
		}
	}
	for _, h := range hs {
		if err := ensureParent(h, useCpuset && (h == s.cpuset || s.v2)); err != nil {
			g.remove()
			return nil, err
		}
		dir := filepath.Join(h.parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			g.remove()
			return nil, fmt.Errorf("create cgroup: %w", err)
		}
		g.dirs[h] = dir
	}
	mem, pids := g.dirs[s.memory], g.dirs[s.pids]
	var err error
	set := func(path, v string) {
		if err == nil {
			err = writeFile(path, v)
		}
	}
	cpus := make([]string, len(cfg.CPUs))
	for i, c := range cfg.CPUs {
		cpus[i] = strconv.Itoa(c)
	}
	if s.v2 {
		set(filepath.Join(mem, "memory.max"), strconv.FormatInt(cfg.MemoryBytes, 10))
		if _, e := os.Stat(filepath.Join(mem, "memory.swap.max")); e == nil {
			set(filepath.Join(mem, "memory.swap.max"), "0")
		}
		// Kill the whole cgroup on OOM, as a game's engine is one unit.
		if _, e := os.Stat(filepath.Join(mem, "memory.oom.group")); e == nil {
			set(filepath.Join(mem, "memory.oom.group"), "1")
		}
		set(filepath.Join(pids, "pids.max"), strconv.Itoa(cfg.Pids))
		if useCpuset {
			set(filepath.Join(mem, "cpuset.cpus"), strings.Join(cpus, ","))
		}
	} else {
		set(filepath.Join(mem, "memory.limit_in_bytes"), strconv.FormatInt(cfg.MemoryBytes, 10))
		if _, e := os.Stat(filepath.Join(mem, "memory.memsw.limit_in_bytes")); e == nil {
			set(filepath.Join(mem, "memory.memsw.limit_in_bytes"), strconv.FormatInt(cfg.MemoryBytes, 10))
		}
		set(filepath.Join(pids, "pids.max"), strconv.Itoa(cfg.Pids))
		if useCpuset {
			dir := g.dirs[s.cpuset]
			mems, _ := os.ReadFile(filepath.Join(s.cpuset.parent, "cpuset.mems"))
			set(filepath.Join(dir, "cpuset.mems"), strings.TrimSpace(string(mems)))
			set(filepath.Join(dir, "cpuset.cpus"), strings.Join(cpus, ","))
		}
	}
	if err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

// hasCap tells whether the server has an effective capability.
func hasCap(c int) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && n&(1<<c) != 0
		}
	}
	return false
}

// add moves a process (with all its threads) into every cgroup of the group.
func (g *group) add(pid int) error {
	for _, dir := range g.dirs {
		if err := writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// selfMove moves the thread that starts bwrap into a group's cgroups, so
// that bwrap is born in them, and back (v1). Moving another process, as add
// does, takes the kernel's global lock of cgroup moves, whose writer waits
// for an RCU grace period: a fifth of a millisecond here at the median, 12
// ms at the 90th percentile beside other sandboxes' starts and ends. A
// thread that moves itself ("0" in tasks) does not take it.
type selfMove struct{ in, back []*os.File }

// errThreadStuck: a locked thread could not take back the server's cgroups
// or ids; it must not run anything else (see onLockedThread, inNetnsLocked).
var errThreadStuck = errors.New("a thread of the server could not be brought back")

// selfMove opens the tasks files for a selfMove, or returns nil where a
// thread has no cgroups of its own (v2) or the server's were not found, and for
// a group with a cpuset (an engine pinned to CPUs, started cold): a thread
// moved back into a cpuset gets all of its CPUs, which would widen a
// server's own narrower affinity (taskset).
func (g *group) selfMove() *selfMove {
	if _, pinned := g.dirs[g.setup.cpuset]; g.setup.v2 || pinned {
		return nil
	}
	m := &selfMove{}
	for h, dir := range g.dirs {
		if h.self == "" {
			m.close()
			return nil
		}
		in, err := os.OpenFile(filepath.Join(dir, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			m.close()
			return nil
		}
		m.in = append(m.in, in)
		back, err := os.OpenFile(filepath.Join(h.self, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			m.close()
			return nil
		}
		m.back = append(m.back, back)
	}
	return m
}

// start runs start (a fork of the calling thread, which must be locked) in
// the group's cgroups. If the thread cannot enter them, start runs where it
// is (the caller then adds the child); if it cannot leave them, the error
// wraps errThreadStuck.
func (m *selfMove) start(start func() error) error {
	if m == nil {
		return start()
	}
	leave := func(n int) error {
		for _, f := range m.back[:n] {
			if _, err := f.WriteString("0"); err != nil {
				return fmt.Errorf("%w: %v", errThreadStuck, err)
			}
		}
		return nil
	}
	for i, f := range m.in {
		if _, err := f.WriteString("0"); err != nil {
			if err := leave(i); err != nil {
				return err
			}
			return start()
		}
	}
	err := start()
	return errors.Join(err, leave(len(m.in)))
}

// onLockedThread runs f on a goroutine locked to its thread, a thread that
// ends with it if f's error wraps errThreadStuck.
func onLockedThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := f()
		if !errors.Is(err, errThreadStuck) {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

func (m *selfMove) close() {
	if m == nil {
		return
	}
	for _, f := range append(m.in, m.back...) {
		f.Close()
	}
}

// holds tells whether pid is in every cgroup of the group, as
// /proc/<pid>/cgroup says (one line per hierarchy, ending in the cgroup's
// path, whose last element is the group's unique name).
func (g *group) holds(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return false
	}
	names := map[string]bool{}
	for _, dir := range g.dirs {
		names[filepath.Base(dir)] = true
	}
	if len(names) != 1 {
		return false
	}
	var name string
	for n := range names {
		name = n
	}
	in := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasSuffix(line, "/"+name) {
			in++
		}
	}
	return in == len(g.dirs)
}

// procs lists the processes left in the group, in any of its hierarchies
// (a server killed while adding the init may have put it in some only).
func (g *group) procs() []int {
	var pids []int
	seen := map[int]bool{}
	for _, dir := range g.dirs {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			// The server's own pid is never the group's (see selfMove).
			if n, err := strconv.Atoi(f); err == nil && !seen[n] && n != os.Getpid() {
				seen[n] = true
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// kill kills every process of the group (cgroup.kill on v2; on v1 each
// listed process, again until none is left: the processes of a sandbox are
// in its pid namespace, which dies with its init, so none can fork for long),
// and waits until the group is empty or the deadline passes.
func (g *group) kill(deadline time.Time) error {
	s := g.setup
	for {
		if len(g.procs()) == 0 {
			return nil
		}
		switch {
		case s.v2 && writeFile(filepath.Join(g.dirs[s.unified], "cgroup.kill"), "1") == nil:
		default:
			for _, p := range g.procs() {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v still in the sandbox's cgroup", g.procs())
		}
		time.Sleep(time.Millisecond)
	}
}

// usage reads peak memory, CPU time and OOM kills.
func (g *group) usage(u *Usage) {
	s := g.setup
	mem := g.dirs[s.memory]
	if s.v2 {
		if n, err := readInt(filepath.Join(mem, "memory.peak")); err == nil {
			u.PeakMemory = n
		}
		if n, ok := keyed(filepath.Join(mem, "memory.events"), "oom_kill"); ok && n > 0 {
			u.OOMKilled = true
		}
		u.CPUTime = g.cpuTime()
		return
	}
	if n, err := readInt(filepath.Join(mem, "memory.max_usage_in_bytes")); err == nil {
		u.PeakMemory = n
	}
	if n, ok := keyed(filepath.Join(mem, "memory.oom_control"), "oom_kill"); ok && n > 0 {
		u.OOMKilled = true
	}
	u.CPUTime = g.cpuTime()
}

// cpuTime is the group's CPU time so far (0 if the host does not count it).
func (g *group) cpuTime() time.Duration {
	s := g.setup
	if s.v2 {
		n, _ := keyed(filepath.Join(g.dirs[s.memory], "cpu.stat"), "usage_usec")
		return time.Duration(n) * time.Microsecond
	}
	if s.cpuacct == nil {
		return 0
	}
	n, _ := readInt(filepath.Join(g.dirs[s.cpuacct], "cpuacct.usage"))
	return time.Duration(n)
}

// oomFile is the file whose oom_kill counter counts the group's OOM kills.
func (g *group) oomFile() string {
	mem := g.dirs[g.setup.memory]
	if mem == "" {
		return ""
	}
	if g.setup.v2 {
		return filepath.Join(mem, "memory.events")
	}
	return filepath.Join(mem, "memory.oom_control")
}

// remove deletes the group's (empty) cgroups.
func (g *group) remove() error {
	var errs []error
	for h, dir := range g.dirs {
		if err := unix.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dir, err))
			continue
		}
		delete(g.dirs, h)
	}
	return errors.Join(errs...)
}

// Sweep removes the cgroups that sandboxes of a server that died left
// behind. A server calls it once at start. Their processes died with it,
// except in one case: a server killed in the instant between bwrap's clone
// of the sandbox's init and the init's PR_SET_PDEATHSIG leaves that init
// orphaned, and bwrap then runs the engine once its --block-fd reads end of
// file. Such processes are killed here before the cgroup is removed, and
// so are bwraps orphaned in their own setup, which may be outside them.
func Sweep() error {
	s := hostCgroups()
	if s.detectErr != nil {
		return s.detectErr
	}
	hs := []*hierarchy{s.memory, s.pids, s.cpuacct, s.cpuset}
	stale := map[string]bool{}
	for _, h := range hs {
		if h == nil {
			continue
		}
		ents, err := os.ReadDir(h.parent)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			pid, _, _ := strings.Cut(e.Name(), "-")
			if n, err := strconv.Atoi(pid); err == nil && (n == os.Getpid() || syscall.Kill(n, 0) == nil) {
				continue // ours, or another live server's
			}
			stale[e.Name()] = true
		}
	}
	killOrphans()
	var errs []error
	for name := range stale {
		g := &group{setup: s, dirs: map[*hierarchy]string{}}
		for _, h := range hs {
			if h == nil {
				continue
			}
			if dir := filepath.Join(h.parent, name); dirExists(dir) {
				g.dirs[h] = dir
			}
		}
		if err := g.kill(time.Now().Add(2 * time.Second)); err != nil {
			errs = append(errs, err)
		}
		deadline := time.Now().Add(time.Second)
		err := g.remove()
		for err != nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
			err = g.remove()
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// bwrapMark is how every sandbox's bwrap command line goes on after the
// program's path, in /proc/<pid>/cmdline.
var bwrapMark = "\x00" + strings.Join(bwrapFlags, "\x00") + "\x00"

// killOrphans kills the sandboxes' bwrap processes whose server has died
// (their parent is init): one killed in its setup may be outside the
// cgroups that Sweep empties.
func killOrphans() {
	if os.Getpid() == 1 {
		return // a container's server: orphans are its own children
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.Contains(string(cmd), bwrapMark) {
			continue
		}
		if ppid, err := parentPid(pid); err == nil && ppid == 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func dirExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
