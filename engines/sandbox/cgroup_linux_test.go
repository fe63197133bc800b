//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeFS is a cgroup tree of canned files: what detection reads, may
// write, and did.
type fakeFS struct {
	files    map[string]string
	writable map[string]bool
	did      []string
}

func (f *fakeFS) ReadFile(p string) ([]byte, error) {
	if s, ok := f.files[p]; ok {
		return []byte(s), nil
	}
	return nil, os.ErrNotExist
}
func (f *fakeFS) Writable(p string) bool { return f.writable[p] }
func (f *fakeFS) Mkdir(p string) error {
	f.did = append(f.did, "mkdir "+p)
	return nil
}
func (f *fakeFS) WriteFile(p, v string) error {
	if !f.writable[p] && !f.writable[filepath.Dir(p)] {
		return fmt.Errorf("write %s: %w", p, os.ErrPermission)
	}
	f.did = append(f.did, p+" < "+v)
	return nil
}

// The hierarchies found on this machine's kind of host (v1 with a unified
// mount), in a v1 container that mounts only its own subtree, and on cgroup
// v2 hosts: a subtree delegated to the server (systemd-run --user --scope
// -p Delegate=yes), one not delegated, one shared with other processes, and
// a container's own cgroup namespace.
func TestParseCgroups(t *testing.T) {
	hybrid := `32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	self := "8:pids:/\n4:memory:/process_api/abc\n2:cpuacct:/\n1:cpu:/\n0::/\n"
	root := &fakeFS{writable: map[string]bool{"/sys/fs/cgroup/memory/process_api/abc": true, "/sys/fs/cgroup/pids": true}}
	s := parseCgroups(hybrid, self, 42, root)
	want := map[string]string{
		"memory":  "/sys/fs/cgroup/memory/process_api/abc/taikai",
		"pids":    "/sys/fs/cgroup/pids/taikai",
		"cpuacct": "/sys/fs/cgroup/cpuacct", // the server's own cgroup: one weight each
		"cpu":     "/sys/fs/cgroup/cpu",
	}
	if s.none != "" || s.v2 || s.cpuset || fmt.Sprint(s.v1) != fmt.Sprint(want) {
		t.Errorf("v1 as root: %+v, want %v", s, want)
	}
	// With the cpuset hierarchy (this machine's), each sandbox gets a
	// cpuset; not where it may not be written.
	withCpuset := hybrid + "33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
	root.writable["/sys/fs/cgroup/cpuset"] = true
	s = parseCgroups(withCpuset, "3:cpuset:/\n"+self, 42, root)
	want["cpuset"] = "/sys/fs/cgroup/cpuset/taikai"
	if s.none != "" || !s.cpuset || fmt.Sprint(s.v1) != fmt.Sprint(want) {
		t.Errorf("v1 with cpuset: %+v, want %v and cpuset", s, want)
	}
	delete(root.writable, "/sys/fs/cgroup/cpuset")
	delete(want, "cpuset")
	if s = parseCgroups(withCpuset, "3:cpuset:/\n"+self, 42, root); s.none != "" || s.cpuset || fmt.Sprint(s.v1) != fmt.Sprint(want) {
		t.Errorf("v1 with a cpuset not writable: %+v, want %v without cpuset", s, want)
	}
	if s := parseCgroups(hybrid, self, 42, &fakeFS{}); s.none == "" {
		t.Errorf("v1 not writable (an ordinary user): %+v, want none", s)
	}

	// Docker on v1: the container sees its own subtree at the mount point.
	docker := `35 31 0:32 /docker/0de8 /sys/fs/cgroup/memory ro,relatime - cgroup cgroup rw,memory
39 31 0:36 /docker/0de8 /sys/fs/cgroup/pids ro,relatime - cgroup cgroup rw,pids
`
	fs := &fakeFS{writable: map[string]bool{"/sys/fs/cgroup/memory": true, "/sys/fs/cgroup/pids": true}}
	s = parseCgroups(docker, "8:pids:/docker/0de8\n4:memory:/docker/0de8\n", 42, fs)
	if s.none != "" || s.v1["memory"] != "/sys/fs/cgroup/memory/taikai" || s.v1["pids"] != "/sys/fs/cgroup/pids/taikai" {
		t.Errorf("docker v1: %+v", s)
	}

	v2 := "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate\n"
	scope := "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope"
	delegated := func(procs string) *fakeFS {
		return &fakeFS{
			files: map[string]string{scope + "/cgroup.controllers": "cpu memory pids\n", scope + "/cgroup.procs": procs},
			writable: map[string]bool{scope: true, scope + "/cgroup.procs": true, scope + "/cgroup.subtree_control": true,
				scope + "/" + serverLeaf: true},
		}
	}
	ownV2 := "0::" + strings.TrimPrefix(scope, "/sys/fs/cgroup") + "\n"
	fs = delegated("42\n")
	s = parseCgroups(v2, ownV2, 42, fs)
	wantDid := []string{
		"mkdir " + scope + "/" + serverLeaf,
		scope + "/" + serverLeaf + "/cgroup.procs < 42",
		scope + "/cgroup.subtree_control < +memory",
		scope + "/cgroup.subtree_control < +pids",
		scope + "/cgroup.subtree_control < +cpu",
	}
	if s.none != "" || !s.v2 || s.cpuset || s.parent != scope || !slices.Equal(fs.did, wantDid) {
		t.Errorf("v2 delegated: %+v after %q, want parent %s after %q", s, fs.did, scope, wantDid)
	}
	// cpuset delegated too: enabled for the sandboxes.
	fs = delegated("42\n")
	fs.files[scope+"/cgroup.controllers"] = "cpuset cpu memory pids\n"
	s = parseCgroups(v2, ownV2, 42, fs)
	wantDid = append(wantDid, scope+"/cgroup.subtree_control < +cpuset")
	if s.none != "" || !s.cpuset || !slices.Equal(fs.did, wantDid) {
		t.Errorf("v2 delegated with cpuset: %+v after %q, want cpuset after %q", s, fs.did, wantDid)
	}
	if s := parseCgroups(v2, ownV2, 42, delegated("42\n77\n")); s.none == "" || !strings.Contains(s.none, "other processes") {
		t.Errorf("v2 shared with another process: %+v, want none", s)
	}
	fs = delegated("42\n")
	fs.writable[scope+"/cgroup.subtree_control"] = false
	if s := parseCgroups(v2, ownV2, 42, fs); s.none == "" || !strings.Contains(s.none, "not delegated") {
		t.Errorf("v2 not delegated: %+v, want none", s)
	}
	fs = delegated("42\n")
	fs.files[scope+"/cgroup.controllers"] = "cpu\n"
	if s := parseCgroups(v2, ownV2, 42, fs); s.none == "" || !strings.Contains(s.none, "memory and pids") {
		t.Errorf("v2 without memory and pids: %+v, want none", s)
	}
	// A container's own cgroup namespace, the server at its root: the root
	// may hold processes and enable controllers; nothing moves.
	fs = &fakeFS{files: map[string]string{"/sys/fs/cgroup/cgroup.controllers": "memory pids\n", "/sys/fs/cgroup/cgroup.procs": "1\n42\n"},
		writable: map[string]bool{"/sys/fs/cgroup": true, "/sys/fs/cgroup/cgroup.procs": true, "/sys/fs/cgroup/cgroup.subtree_control": true}}
	s = parseCgroups(v2, "0::/\n", 42, fs)
	if s.none != "" || s.parent != "/sys/fs/cgroup" || slices.ContainsFunc(fs.did, func(d string) bool { return strings.HasPrefix(d, "mkdir") }) {
		t.Errorf("v2 at the root: %+v after %q", s, fs.did)
	}
	if s := parseCgroups("", "", 42, &fakeFS{}); s.none == "" {
		t.Error("no cgroups accepted")
	}
}

// The TCP queues of a network namespace, as /proc/PID/net/tcp lists them
// (the last line was seen during a port scan).
func TestSocketQueues(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:B3B0 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534        0 1 1 ffff 100 0 0 10 0
   1: 0100007F:B3B0 0100007F:D2F4 01 00000000:00A00000 00:00000000 00000000 65534        0 2 1 ffff 20 4 30 10 -1
   2: 0100007F:D2F4 0100007F:B3B0 01 00001000:00000000 00:00000000 00000000 65534        0 3 1 ffff 20 4 30 10 -1
   3: 0100007F:B1EE 0100007F:5E0E 02 1F405522:00000000 00:00000000 00000000     0        0 1355628 1 0000000075c40d39 100 0 0 10 -1
`
	// The listener (0A) and the connecting socket (02) do not count.
	if got, want := socketQueues(table, true), int64(0xA00000+0x1000); got != want {
		t.Errorf("socketQueues = %d, want %d", got, want)
	}
}

// A live server's sandboxes are never swept, whoever owns the server:
// kill(pid, 0) answers EPERM for another user's live process.
func TestServerAlive(t *testing.T) {
	if !serverAlive(os.Getpid()) || !serverAlive(1) {
		t.Error("a live process counted dead")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if serverAlive(cmd.Process.Pid) {
		t.Errorf("the dead process %d counted alive", cmd.Process.Pid)
	}
}

// Only the default hidden paths the engine's uid could read are hidden (each
// is a mount in every start); a file of another uid with mode 0600 is not.
func TestExposed(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		mode      os.FileMode
		dir       bool
		uid, gid  int
		exposedTo bool
	}{
		{0o600, false, 65534, 65534, false},
		{0o640, false, 65534, 65534, false}, // another group
		{0o644, false, 65534, 65534, true},
		{0o700, true, 65534, 65534, false},
		{0o711, true, 65534, 65534, true}, // searchable
		{0o755, true, 65534, 65534, true},
		{0o600, false, os.Getuid(), os.Getgid(), true}, // its own
	} {
		p := dir + "/f"
		os.RemoveAll(p)
		var err error
		if c.dir {
			err = os.Mkdir(p, c.mode)
		} else {
			err = os.WriteFile(p, nil, c.mode)
		}
		if err == nil {
			err = os.Chmod(p, c.mode)
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := exposed(p, st, c.uid, c.gid); got != c.exposedTo {
			t.Errorf("mode %v (dir %v) to %d:%d: exposed %v, want %v", c.mode, c.dir, c.uid, c.gid, got, c.exposedTo)
		}
	}
}

// Over the memory limit, as the cgroup files say: an OOM kill, or socket
// buffers held at the limit (v1 and v2 only make sends wait there).
func TestGroupOverMemory(t *testing.T) {
	for _, c := range []struct {
		name  string
		v2    bool
		files map[string]string
		over  bool
	}{
		{"v2 oom kill", true, map[string]string{"memory.events": "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n"}, true},
		{"v2 at the limit, no sockets", true, map[string]string{"memory.events": "oom_kill 0\n", "memory.max": "134217728\n",
			"memory.stat": "anon 134000000\nfile 100000\nshmem 0\nsock 0\n"}, false},
		{"v2 socket buffers at the limit", true, map[string]string{"memory.events": "oom_kill 0\n", "memory.max": "134217728\n",
			"memory.stat": "anon 5000000\nfile 0\nshmem 0\nsock 125000000\n"}, true},
		{"v2 some socket buffers", true, map[string]string{"memory.events": "oom_kill 0\n", "memory.max": "134217728\n",
			"memory.stat": "anon 50000000\nshmem 0\nsock 1000000\n"}, false},
		{"v1 oom kill", false, map[string]string{"memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"}, true},
		{"v1 tcp at the limit", false, map[string]string{"memory.oom_control": "oom_kill 0\n", "memory.limit_in_bytes": "134217728\n",
			"memory.kmem.tcp.usage_in_bytes": "140000000\n", "memory.stat": "cache 0\nrss 5000000\nshmem 0\n"}, true},
		{"v1 no tcp", false, map[string]string{"memory.oom_control": "oom_kill 0\n", "memory.limit_in_bytes": "134217728\n",
			"memory.kmem.tcp.usage_in_bytes": "0\n", "memory.stat": "rss 134000000\n"}, false},
	} {
		dir := t.TempDir()
		for f, content := range c.files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		g := &group{v2: c.v2, dirs: map[string]string{"": dir, "memory": dir}}
		if got := g.overMemory(); got != c.over {
			t.Errorf("%s: over %v, want %v", c.name, got, c.over)
		}
	}
}
