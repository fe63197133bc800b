//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The hierarchies found on this machine's kind of host (v1 with a unified
// mount, as here), in a container that mounts only its own subtree, and on a
// pure cgroup v2 host.
func TestParseCgroups(t *testing.T) {
	noFile := func(string) ([]byte, error) { return nil, os.ErrNotExist }
	v2Files := func(p string) ([]byte, error) {
		if p == "/sys/fs/cgroup/cgroup.controllers" {
			return []byte("cpuset cpu io memory hugetlb pids rdma misc\n"), nil
		}
		return nil, errors.New("unexpected " + p)
	}
	hybrid := `32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	self := "8:pids:/\n6:freezer:/\n4:memory:/process_api/abc\n3:cpuset:/\n2:cpuacct:/\n0::/\n"
	s := parseCgroups(hybrid, self, noFile)
	if s.detectErr != nil || s.v2 {
		t.Fatalf("hybrid: %+v", s)
	}
	for h, want := range map[*hierarchy]string{
		s.memory:  "/sys/fs/cgroup/memory/process_api/abc/taikai",
		s.pids:    "/sys/fs/cgroup/pids/taikai",
		s.cpuacct: "/sys/fs/cgroup/cpuacct/taikai",
		s.cpuset:  "/sys/fs/cgroup/cpuset/taikai",
	} {
		if h == nil || h.parent != want || h.self != filepath.Dir(want) {
			t.Errorf("hybrid: %+v, want %s under the server's own cgroup", h, want)
		}
	}

	// Docker on v1: the container sees its own subtree at the mount point.
	docker := `35 31 0:32 /docker/0de8 /sys/fs/cgroup/memory ro,relatime - cgroup cgroup rw,memory
39 31 0:36 /docker/0de8 /sys/fs/cgroup/pids ro,relatime - cgroup cgroup rw,pids
`
	s = parseCgroups(docker, "8:pids:/docker/0de8\n4:memory:/docker/0de8\n", noFile)
	if s.detectErr != nil || s.memory.parent != "/sys/fs/cgroup/memory/taikai" || s.pids.parent != "/sys/fs/cgroup/pids/taikai" || s.cpuacct != nil ||
		s.memory.self != "/sys/fs/cgroup/memory" || s.pids.self != "/sys/fs/cgroup/pids" {
		t.Errorf("docker v1: %+v %+v %+v", s, s.memory, s.pids)
	}

	v2 := "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate\n"
	s = parseCgroups(v2, "0::/system.slice/taikai.service/server\n", v2Files)
	if s.detectErr != nil || !s.v2 || s.memory != s.pids || s.cpuset == nil || s.memory.parent != "/sys/fs/cgroup/system.slice/taikai.service/taikai" {
		t.Errorf("v2: %+v %+v", s, s.memory)
	}
	// A container with its own cgroup namespace, the server at its root.
	if s = parseCgroups(v2, "0::/\n", v2Files); s.memory.parent != "/sys/fs/cgroup/taikai" {
		t.Errorf("v2 at the root: %+v", s.memory)
	}
	s = parseCgroups(v2, "0::/\n", noFile)
	if s.detectErr == nil {
		t.Error("v2 without controllers accepted")
	}
	s = parseCgroups("", "", noFile)
	if s.detectErr == nil {
		t.Error("no cgroups accepted")
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

// The thread that starts bwrap moves itself into the sandbox's cgroups and
// back (v1): the child is born in them, the thread ends where it was, and
// none of the server's threads is left in them.
func TestSelfMove(t *testing.T) {
	requireSandbox(t)
	if hostCgroups().v2 {
		t.Skip("cgroup v2: a thread has no cgroups of its own; bwrap is moved (add)")
	}
	cfg := Config{}
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	g, err := newGroup(fmt.Sprintf("%d-selfmove", os.Getpid()), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := g.kill(time.Now().Add(5 * time.Second)); err != nil {
			t.Error(err)
		}
		if err := g.remove(); err != nil {
			t.Error(err)
		}
	}()
	mv := g.selfMove()
	if mv == nil {
		t.Fatal("no self move on cgroup v1")
	}
	defer mv.close()
	var child *exec.Cmd
	var before, during, after []byte
	err = onLockedThread(func() error {
		before, _ = os.ReadFile("/proc/thread-self/cgroup")
		err := mv.start(func() error {
			during, _ = os.ReadFile("/proc/thread-self/cgroup")
			child = exec.Command("sleep", "30")
			return child.Start()
		})
		after, _ = os.ReadFile("/proc/thread-self/cgroup")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	defer child.Process.Kill()
	if !g.holds(child.Process.Pid) {
		t.Error("the child was not born in the sandbox's cgroups")
	}
	name := filepath.Base(g.dirs[hostCgroups().memory])
	if strings.Count(string(during), "/"+name+"\n") != len(g.dirs) {
		t.Errorf("the thread was not in the sandbox's cgroups while it started the child:\n%s", during)
	}
	if len(before) == 0 || !bytes.Equal(before, after) {
		t.Errorf("the thread did not go back: before\n%s\nafter\n%s", before, after)
	}
	for _, dir := range g.dirs {
		b, err := os.ReadFile(filepath.Join(dir, "tasks"))
		if err != nil {
			t.Fatal(err)
		}
		for _, tid := range strings.Fields(string(b)) {
			if _, err := os.Stat("/proc/self/task/" + tid); err == nil {
				t.Errorf("the server's thread %s is still in %s", tid, dir)
			}
		}
	}
}
