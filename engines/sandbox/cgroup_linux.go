//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupSetup is where this server may make its sandboxes' cgroups, found
// once. With none (an ordinary user on cgroup v1, a v2 host without a
// delegated subtree), memory is bounded by polling (poll_linux.go).
type cgroupSetup struct {
	v2 bool
	// v2: the directory under which each sandbox gets its cgroup (the
	// server's own, delegated cgroup, the server moved into a leaf of it).
	// v1: the parent directory in each hierarchy, by controller.
	parent string
	v1     map[string]string // "memory", "pids", "cpuacct", "cpu", "cpuset" -> parent
	// prefix, by v1 controller, of the sandboxes' cgroups' names in a
	// parent shared with others: v1's cpu and cpuacct.
	prefix map[string]string
	// cpuset: each sandbox's CPUs (Config.CPUs) are its cpuset's, which
	// the engine cannot widen (v1's cpuset hierarchy, v2's cpuset
	// controller enabled); else they are only its affinity.
	cpuset bool
	// none says why no cgroup can be had ("" if one can).
	none string
}

var hostCgroups = sync.OnceValue(func() *cgroupSetup {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return &cgroupSetup{none: fmt.Sprintf("read mountinfo: %v", err)}
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return &cgroupSetup{none: fmt.Sprintf("read own cgroup: %v", err)}
	}
	s := parseCgroups(string(mounts), string(self), os.Getpid(), hostFS{})
	return &s
})

// cgroupFS is what detection reads and does, so that tests can use canned
// files.
type cgroupFS interface {
	ReadFile(path string) ([]byte, error)
	Writable(path string) bool
	Mkdir(path string) error
	WriteFile(path, value string) error
}

type hostFS struct{}

func (hostFS) ReadFile(p string) ([]byte, error) { return os.ReadFile(p) }
func (hostFS) Writable(p string) bool            { return unix.Access(p, unix.W_OK) == nil }
func (hostFS) Mkdir(p string) error {
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}
func (hostFS) WriteFile(p, v string) error { return writeFile(p, v) }

// serverLeaf is the leaf cgroup a server moves itself into on cgroup v2, so
// that its own cgroup, holding no process, may enable controllers for its
// sandboxes' cgroups beside it (v2's no-internal-processes rule).
const serverLeaf = "taikai-server"

// parseCgroups detects the cgroups on the texts of /proc/self/mountinfo and
// /proc/self/cgroup: cgroup v1 as root (memory and pids mounted), else a
// delegated cgroup v2 subtree: the server's own cgroup writable, offering
// memory and pids, holding no other process than pid.
func parseCgroups(mounts, self string, pid int, fs cgroupFS) cgroupSetup {
	own := map[string]string{} // v1 controller, or "" for v2 -> own path
	for _, line := range strings.Split(self, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	type mnt struct{ point, root string }
	v1 := map[string]mnt{}
	var v2 *mnt
	for _, line := range strings.Split(mounts, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, pf := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(pf) < 3 {
			continue
		}
		m := mnt{point: unescapeMount(f[4]), root: unescapeMount(f[3])}
		switch pf[0] {
		case "cgroup":
			for _, opt := range strings.Split(pf[2], ",") {
				if _, seen := v1[opt]; !seen {
					v1[opt] = m
				}
			}
		case "cgroup2":
			if v2 == nil {
				v2 = &m
			}
		}
	}
	// dirOf is the directory of the server's cgroup in a mount: a container
	// may mount only its own subtree, the mount's root then a prefix of it.
	dirOf := func(m mnt, path string) string {
		if m.root != "/" && (path == m.root || strings.HasPrefix(path, m.root+"/")) {
			path = strings.TrimPrefix(path, m.root)
		}
		return filepath.Join(m.point, path)
	}
	if _, ok := v1["memory"]; ok {
		if _, ok := v1["pids"]; !ok {
			return cgroupSetup{none: "cgroup v1 has no pids controller mounted"}
		}
		s := cgroupSetup{v1: map[string]string{}, prefix: map[string]string{}}
		for _, c := range []string{"memory", "pids", "cpuacct", "cpu", "cpuset"} {
			if m, ok := v1[c]; ok {
				s.v1[c] = filepath.Join(dirOf(m, own[c]), "taikai")
			}
		}
		// The sandboxes' cpu cgroups are the server's own cgroup's children,
		// each weighing one process (cpu.shares 1024) against the machine's
		// other processes and sessions: under a common parent they would
		// share its weight, and a hog on one CPU would take half of it
		// from its opponent on another (BenchmarkCPUHog). cpuacct goes with
		// cpu, which it may share a hierarchy with.
		for _, c := range []string{"cpu", "cpuacct"} {
			if m, ok := v1[c]; ok {
				s.v1[c], s.prefix[c] = dirOf(m, own[c]), cgroupPrefix
			}
		}
		// Only root may make cgroups in v1's shared hierarchies.
		if !fs.Writable(filepath.Dir(s.v1["memory"])) || !fs.Writable(filepath.Dir(s.v1["pids"])) {
			return cgroupSetup{none: "cgroup v1 is not writable (only root may use it)"}
		}
		if p, ok := s.v1["cpuset"]; ok && !fs.Writable(filepath.Dir(p)) {
			delete(s.v1, "cpuset")
		}
		s.cpuset = s.v1["cpuset"] != ""
		return s
	}
	if v2 == nil {
		return cgroupSetup{none: "no cgroup hierarchy with memory and pids is mounted"}
	}
	dir := dirOf(*v2, own[""])
	ctrl, _ := fs.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if c := " " + strings.TrimSpace(string(ctrl)) + " "; !strings.Contains(c, " memory ") || !strings.Contains(c, " pids ") {
		return cgroupSetup{none: fmt.Sprintf("cgroup v2: the memory and pids controllers are not delegated to %s (it offers %q)", dir, strings.TrimSpace(string(ctrl)))}
	}
	for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control"} {
		if !fs.Writable(filepath.Join(dir, f)) {
			return cgroupSetup{none: fmt.Sprintf("cgroup v2: %s is not delegated to the server (not writable)", filepath.Join(dir, f))}
		}
	}
	if dir != v2.point {
		// Leave the own cgroup to its sandboxes: into a leaf of it, unless
		// it holds other processes, which are not the server's to move.
		procs, _ := fs.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, p := range strings.Fields(string(procs)) {
			if p != strconv.Itoa(pid) {
				return cgroupSetup{none: fmt.Sprintf("cgroup v2: the server's cgroup %s holds other processes (start the server alone in it)", dir)}
			}
		}
		if len(strings.Fields(string(procs))) > 0 {
			leaf := filepath.Join(dir, serverLeaf)
			if err := fs.Mkdir(leaf); err != nil {
				return cgroupSetup{none: fmt.Sprintf("cgroup v2: %v", err)}
			}
			if err := fs.WriteFile(filepath.Join(leaf, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
				return cgroupSetup{none: fmt.Sprintf("cgroup v2: move the server into a leaf: %v", err)}
			}
		}
	}
	for _, c := range []string{"+memory", "+pids", "+cpu"} {
		if err := fs.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), c); err != nil && c != "+cpu" {
			return cgroupSetup{none: fmt.Sprintf("cgroup v2: %v", err)}
		}
	}
	// cpuset too, where the server's cgroup offers it (root with the whole
	// tree; a subtree delegated with it).
	cpuset := strings.Contains(" "+strings.TrimSpace(string(ctrl))+" ", " cpuset ") &&
		fs.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), "+cpuset") == nil
	return cgroupSetup{v2: true, parent: dir, cpuset: cpuset}
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

func writeFile(path, value string) error {
	if err := os.WriteFile(path, []byte(value), 0); err != nil {
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
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

// group is the cgroup (v2) or cgroups (v1, by controller) of one sandbox.
type group struct {
	v2   bool
	dirs map[string]string // v1: controller -> dir; v2: "" -> dir
}

// newGroup creates and configures the cgroups of one sandbox.
func newGroup(s *cgroupSetup, name string, cfg *Config) (*group, error) {
	g := &group{v2: s.v2, dirs: map[string]string{}}
	parents := s.v1
	if s.v2 {
		parents = map[string]string{"": s.parent}
	}
	made := map[string]bool{} // a hierarchy may hold several controllers
	for c, parent := range parents {
		dir := filepath.Join(parent, s.prefix[c]+name)
		g.dirs[c] = dir
		if made[dir] {
			continue
		}
		made[dir] = true
		if err := os.MkdirAll(parent, 0o755); err != nil {
			g.remove()
			return nil, fmt.Errorf("create cgroup: %w", err)
		}
		if c == "cpuset" {
			// A v1 cpuset takes no process until it has CPUs and memory
			// nodes: the parent gets its own parent's, once.
			if err := inheritCpuset(parent); err != nil {
				g.remove()
				return nil, err
			}
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			delete(g.dirs, c)
			g.remove()
			return nil, fmt.Errorf("create cgroup: %w", err)
		}
	}
	var err error
	set := func(dir, file, v string, optional bool) {
		p := filepath.Join(dir, file)
		if _, e := os.Stat(p); err != nil || optional && e != nil {
			return
		}
		err = writeFile(p, v)
	}
	mem := strconv.FormatInt(cfg.MemoryBytes, 10)
	if s.v2 {
		dir := g.dirs[""]
		set(dir, "memory.max", mem, false)
		set(dir, "memory.swap.max", "0", true)
		set(dir, "memory.oom.group", "1", true) // one engine, one unit
		set(dir, "pids.max", strconv.Itoa(cfg.Pids), false)
	} else {
		set(g.dirs["memory"], "memory.limit_in_bytes", mem, false)
		set(g.dirs["memory"], "memory.memsw.limit_in_bytes", mem, true)
		// Socket buffers are outside memory.limit_in_bytes on v1.
		set(g.dirs["memory"], "memory.kmem.tcp.limit_in_bytes", mem, true)
		set(g.dirs["pids"], "pids.max", strconv.Itoa(cfg.Pids), false)
	}
	// The CPUs, where the sandbox has a cpuset: the engine's
	// sched_setaffinity cannot leave them.
	if dir, ok := g.dirs["cpuset"]; ok {
		cpus, _ := os.ReadFile(filepath.Join(parents["cpuset"], "cpuset.cpus"))
		mems, _ := os.ReadFile(filepath.Join(parents["cpuset"], "cpuset.mems"))
		if len(cfg.CPUs) > 0 {
			cpus = []byte(cpuList(cfg.CPUs))
		}
		set(dir, "cpuset.cpus", strings.TrimSpace(string(cpus)), false)
		set(dir, "cpuset.mems", strings.TrimSpace(string(mems)), false)
	} else if s.v2 && s.cpuset && len(cfg.CPUs) > 0 {
		set(g.dirs[""], "cpuset.cpus", cpuList(cfg.CPUs), false)
	}
	// The CPU quota, where the cpu controller is there (optional on v2).
	if cfg.CPUQuota > 0 {
		quota := strconv.Itoa(max(1000, int(cfg.CPUQuota*cpuPeriod)))
		if s.v2 {
			set(g.dirs[""], "cpu.max", quota+" "+strconv.Itoa(cpuPeriod), true)
		} else if dir, ok := g.dirs["cpu"]; ok {
			set(dir, "cpu.cfs_period_us", strconv.Itoa(cpuPeriod), true)
			set(dir, "cpu.cfs_quota_us", quota, true)
		}
	}
	if err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

// cpuList is CPUs as the kernel lists them: "0,2".
func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// inheritCpuset gives a v1 cpuset without CPUs or memory nodes (new) its
// parent's.
func inheritCpuset(dir string) error {
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil && strings.TrimSpace(string(b)) != "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(dir), f))
		if err == nil {
			err = writeFile(filepath.Join(dir, f), strings.TrimSpace(string(b)))
		}
		if err != nil {
			return fmt.Errorf("cpuset %s: %w", dir, err)
		}
	}
	return nil
}

// cpuPeriod is the period of the CPU quota, in µs (the kernel's default).
const cpuPeriod = 100000

// cgroupPrefix begins the names of the sandboxes' cgroups in a parent
// shared with others (cgroupSetup.prefix).
const cgroupPrefix = "taikai-"

// fd opens the v2 cgroup's directory for clone3's CLONE_INTO_CGROUP: the
// sandbox's bwrap is born in it.
func (g *group) fd() (*os.File, error) {
	return os.Open(g.dirs[""])
}

// add moves a process into every v1 cgroup of the group.
func (g *group) add(pid int) error {
	for _, dir := range g.dirs {
		if err := writeFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// procs lists the processes left in the group.
func (g *group) procs() []int {
	var pids []int
	seen := map[int]bool{}
	for _, dir := range g.dirs {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil && !seen[n] {
				seen[n] = true
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// kill kills every process of the group (cgroup.kill on v2) until it is
// empty or the deadline passes; a process it may not kill is an error at
// once, never a loop.
func (g *group) kill(deadline time.Time) error {
	for {
		procs := g.procs()
		if len(procs) == 0 {
			return nil
		}
		if !g.v2 || writeFile(filepath.Join(g.dirs[""], "cgroup.kill"), "1") != nil {
			for _, p := range procs {
				if err := syscall.Kill(p, syscall.SIGKILL); errors.Is(err, syscall.EPERM) {
					return fmt.Errorf("process %d of cgroup %v: %w", p, g.dirs, err)
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v still in the sandbox's cgroup", procs)
		}
		time.Sleep(time.Millisecond)
	}
}

// overMemory tells whether the kernel has killed a process of the group for
// memory, or (v1) refused it socket buffers over the limit.
func (g *group) overMemory() bool {
	if g.v2 {
		dir := g.dirs[""]
		if n, _ := keyed(filepath.Join(dir, "memory.events"), "oom_kill"); n > 0 {
			return true
		}
		// v2 counts socket buffers in memory.current, but one over
		// memory.max only makes sends wait: with buffers held, an engine
		// at its limit (within a sixteenth: the kernel's own pages count
		// too) is over it.
		stat := filepath.Join(dir, "memory.stat")
		sock, _ := keyed(stat, "sock")
		if sock == 0 {
			return false
		}
		limit, _ := readInt(filepath.Join(dir, "memory.max"))
		anon, _ := keyed(stat, "anon")
		shmem, _ := keyed(stat, "shmem")
		return limit > 0 && sock+anon+shmem >= limit-limit/16
	}
	dir := g.dirs["memory"]
	if n, _ := keyed(filepath.Join(dir, "memory.oom_control"), "oom_kill"); n > 0 {
		return true
	}
	// v1 keeps socket buffers apart: memory.kmem.tcp.limit_in_bytes only
	// makes sends wait (no OOM, no failcnt seen), so they are added to the
	// group's own memory here.
	tcp, _ := readInt(filepath.Join(dir, "memory.kmem.tcp.usage_in_bytes"))
	if tcp == 0 {
		return false
	}
	limit, _ := readInt(filepath.Join(dir, "memory.limit_in_bytes"))
	rss, _ := keyed(filepath.Join(dir, "memory.stat"), "rss")
	shmem, _ := keyed(filepath.Join(dir, "memory.stat"), "shmem")
	return limit > 0 && tcp+rss+shmem >= limit
}

// usage reads peak memory, CPU time and OOM kills, once, at the end.
func (g *group) usage(u *Report) {
	u.OOMKilled = g.overMemory()
	if g.v2 {
		dir := g.dirs[""]
		u.PeakMemory, _ = readInt(filepath.Join(dir, "memory.peak"))
		n, _ := keyed(filepath.Join(dir, "cpu.stat"), "usage_usec")
		u.CPUTime = time.Duration(n) * time.Microsecond
		return
	}
	u.PeakMemory, _ = readInt(filepath.Join(g.dirs["memory"], "memory.max_usage_in_bytes"))
	if dir, ok := g.dirs["cpuacct"]; ok {
		n, _ := readInt(filepath.Join(dir, "cpuacct.usage"))
		u.CPUTime = time.Duration(n)
	}
}

// remove deletes the group's (empty) cgroups.
func (g *group) remove() error {
	var errs []error
	for c, dir := range g.dirs {
		if err := unix.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dir, err))
			continue
		}
		delete(g.dirs, c)
	}
	return errors.Join(errs...)
}

// removeWithin retries remove: a cgroup whose last process is exiting may
// refuse rmdir for a moment.
func (g *group) removeWithin(d time.Duration) error {
	deadline := time.Now().Add(d)
	err := g.remove()
	for err != nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		err = g.remove()
	}
	return err
}

// serverAlive tells whether the process pid (a server, by its sandboxes'
// names) lives: kill(pid, 0) fails with EPERM for a live process of
// another user.
func serverAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Sweep removes what sandboxes of a server that died left behind: its
// sandboxes' cgroups (named by its pid) and their processes, and bwraps
// orphaned in their setup. A server calls it once at start. It leaves live
// servers' sandboxes alone, makes one pass, and gives up on what it may not
// kill or remove.
func Sweep() error {
	killOrphans()
	s := hostCgroups()
	if s.none != "" {
		return nil
	}
	parents := s.v1
	if s.v2 {
		parents = map[string]string{"": s.parent}
	}
	stale := map[string]*group{}
	for c, parent := range parents {
		ents, _ := os.ReadDir(parent)
		for _, e := range ents {
			name, ok := strings.CutPrefix(e.Name(), s.prefix[c])
			pid, _, _ := strings.Cut(name, "-")
			n, err := strconv.Atoi(pid)
			if !ok || !e.IsDir() || err != nil || n == os.Getpid() || serverAlive(n) {
				continue
			}
			if stale[name] == nil {
				stale[name] = &group{v2: s.v2, dirs: map[string]string{}}
			}
			stale[name].dirs[c] = filepath.Join(parent, e.Name())
		}
	}
	var errs []error
	for _, g := range stale {
		if err := g.kill(time.Now().Add(time.Second)); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := g.removeWithin(time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// bwrapMark is how every sandbox's bwrap command line goes on after the
// program's path, in /proc/<pid>/cmdline.
var bwrapMark = "\x00" + strings.Join(bwrapFlags, "\x00") + "\x00"

// killOrphans kills the sandboxes' bwrap processes whose server has died
// (their parent is init): a server killed during a sandbox's setup may leave
// one waiting on its --block-fd.
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
