//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/internal/testkit"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/web"
)

// sandboxErr says why the taikai binary cannot sandbox engines here (nil
// if it can): a trial sandbox with the binary as its helper, as serve makes.
func sandboxErr(tb testing.TB) error {
	tb.Helper()
	return sandbox.Check(sandbox.Config{Helper: taikaiBinary(tb), Port: engines.SandboxPort})
}

// requireSandbox skips a test when engines cannot be sandboxed here (no
// bwrap, no user namespaces, ...), except in CI, where that is a failure.
func requireSandbox(tb testing.TB) {
	tb.Helper()
	testkit.Need(tb, "the engine sandbox", sandboxErr(tb))
}

// requireCgroupV2 fails the test if the user-mode Linux harness runs it
// (delegateEnv set: cgroup v2 there) and s does not limit its engines by
// cgroup v2: as root with the whole tree, or, for a server of an ordinary
// user, in the subtree delegated to it.
func requireCgroupV2(t *testing.T, s *serverProcess, g *sandbox.Guarantees) {
	t.Helper()
	if os.Getenv(delegateEnv) == "" {
		return
	}
	if g == nil || g.Memory != "cgroup" || g.Cgroup != "v2" {
		t.Fatalf("on cgroup v2 (delegated: %v), limits %+v, want cgroup v2's\n%s", s.delegated, g, s.logs())
	}
}

// waitChecked waits for the pre-flight check an upload starts by itself to be
// done, so that its game is not counted with a test's own.
func waitChecked(tb testing.TB, s *serverProcess, id int64) {
	tb.Helper()
	var c struct{ Status string }
	if !waitFor(scaled(3*time.Minute), func() bool {
		s.call(tb, "GET", fmt.Sprintf("/api/engines/%d/check", id), nil, "", &c)
		return c.Status == "done"
	}) {
		tb.Fatalf("engine %d's check: %q after %v\n%s", id, c.Status, scaled(3*time.Minute), s.logs())
	}
}

// gameLog is an engine's captured output in a game.
func gameLog(tb testing.TB, s *serverProcess, id int64, color string) string {
	tb.Helper()
	res, err := http.Get(fmt.Sprintf("%s/api/games/%d/log/%s", s.url, id, color))
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// procsWith lists live host processes whose command line contains s.
func procsWith(s string) []int {
	var pids []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(s)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// TestSandboxHostileEngines runs real hostile engine programs through the
// real server, each in its own tournament against a built-in: every attack
// of the issue fails, each game is scored on the board or by the right
// reason, the standings equal a recount, and the server runs on.
func TestSandboxHostileEngines(t *testing.T) { hostileEngines(t, nil) }

// The same as an ordinary user from a 0700 home, the server's binary and
// data in it (issue 35): the user's engines run as that user, in the same
// namespaces, with limits without root (on cgroup v1: memory by polling,
// processes by RLIMIT_NPROC); the Java classroom client plays too.
func TestSandboxHostileEnginesOrdinaryUser(t *testing.T) { hostileEngines(t, ordinaryUser(t)) }

// hostileEngines is TestSandboxHostileEngines with serve run as u (nil: as
// the test).
func hostileEngines(t *testing.T, u *osUser) {
	requireSandbox(t)
	ciRequires(t, "python3")
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	if u != nil {
		dir, bin = u.dir(t)
	}
	db, data := filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data")
	s := startServerAs(t, u, nil, bin, db, data, "--sandbox=on")
	var health struct {
		Sandbox       string
		SandboxLimits *sandbox.Guarantees `json:"sandbox_limits"`
	}
	s.call(t, "GET", "/healthz", nil, "", &health)
	if health.Sandbox != "on" || health.SandboxLimits == nil || health.SandboxLimits.Isolation != "namespaces" ||
		(health.SandboxLimits.Memory == "polling") != (health.SandboxLimits.Stronger != "") {
		t.Fatalf("/healthz sandbox %q, limits %+v, want on with its limits\n%s", health.Sandbox, health.SandboxLimits, s.logs())
	}
	t.Logf("sandbox limits: %+v", *health.SandboxLimits)
	requireCgroupV2(t, s, health.SandboxLimits)
	hostile, err := os.ReadFile("testdata/hostile.py")
	if err != nil {
		t.Fatal(err)
	}
	random := s.postJSON(t, "/api/engines", `{"name":"random","game":"othello","builtin":"othello-random"}`)
	upload(t, s, `{"name":"victim","game":"othello","command":["python3","hostile.py","{host}","{port}","read"]}`,
		map[string][]byte{"hostile.py": hostile, "secret.txt": []byte("VICTIM-SECRET\n")})
	victims, _ := filepath.Glob(filepath.Join(data, "engines", "victim-*", "secret.txt"))
	if len(victims) != 1 {
		t.Fatalf("victim's file: %v", victims)
	}
	victim := victims[0]
	// A listener on every host interface: no engine may reach it.
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var reached atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Close()
		}
	}()
	lnPort := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	hostIP := "192.0.2.1" // unroutable stand-in if the host has no other address
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				hostIP = ipn.IP.String()
				break
			}
		}
	}
	api := strings.TrimPrefix(s.url, "http://")
	spid := strconv.Itoa(s.cmd.Process.Pid)
	marker := fmt.Sprintf("taikai-daemon-%d", time.Now().UnixNano())
	daemon := "daemon:" + marker

	type hostileCase struct {
		name     string
		args     []string
		maxProcs int
		reason   string // "normal": scored on the board
		check    func(t *testing.T, log string, g gameDetail, color string)
	}
	wantLines := func(t *testing.T, log string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(log, w) {
				t.Errorf("log lacks %q:\n%s", w, log)
			}
		}
	}
	cases := []hostileCase{
		{name: "read", args: []string{"read", db, db + "-wal", victim, filepath.Join(data, "logs", "1", "1-black.log"),
			"/proc/" + spid + "/environ", "/proc/" + spid + "/cmdline", "token=e2e-token"}, reason: "normal",
			check: func(t *testing.T, log string, g gameDetail, color string) {
				wantLines(t, log, "BLOCKED read "+db, "BLOCKED read "+victim, "BLOCKED list "+filepath.Dir(victim),
					"BLOCKED read /proc/"+spid+"/environ")
				if m := regexp.MustCompile(`PROCS ([0-9 ]*)`).FindStringSubmatch(log); m == nil || len(strings.Fields(m[1])) > 3 {
					t.Errorf("the engine sees processes %v, want only its own sandbox's", m)
				}
				if strings.Contains(log, "TAIKAI_ADMIN_TOKEN") {
					t.Errorf("the admin token's variable reached the engine:\n%s", log)
				}
			}},
		{name: "write", args: []string{"write", filepath.Join(data, "engines", "planted"), victim, db, filepath.Join(data, "planted"),
			"/engine/planted", "/etc/planted", "/usr/planted", "/planted"}, reason: "normal",
			check: func(t *testing.T, log string, g gameDetail, color string) {
				wantLines(t, log, "BLOCKED write "+victim, "BLOCKED write "+db, "BLOCKED write /engine/planted", "OK write /tmp/scratch")
				if b, _ := os.ReadFile(victim); string(b) != "VICTIM-SECRET\n" {
					t.Errorf("the victim's file is now %q", b)
				}
				for _, p := range []string{filepath.Join(data, "engines", "planted"), filepath.Join(data, "planted"), "/etc/planted", "/usr/planted", "/planted"} {
					if _, err := os.Stat(p); err == nil {
						t.Errorf("%s was planted on the host", p)
					}
				}
			}},
		{name: "signal", args: []string{"signal", spid}, reason: "normal",
			check: func(t *testing.T, log string, g gameDetail, color string) {
				wantLines(t, log, "BLOCKED kill "+spid, "SIGNALLED 0 []")
			}},
		{name: "connect", args: []string{"connect", api, "127.0.0.1:" + lnPort, hostIP + ":" + lnPort, "1.1.1.1:80"}, reason: "normal",
			check: func(t *testing.T, log string, g gameDetail, color string) {
				wantLines(t, log, "BLOCKED connect "+api, "BLOCKED connect "+hostIP+":"+lnPort, "BLOCKED connect 1.1.1.1:80",
					"OPEN []", "BLOCKED connect own seat again")
				// The scan precedes the connection (its connect timeout).
				t.Logf("%s", regexp.MustCompile(`SCANNED in [0-9.]+ s`).FindString(log))
			}},
		{name: "forks", args: []string{"forks"}, maxProcs: 64, reason: "normal",
			check: func(t *testing.T, log string, g gameDetail, color string) {
				m := regexp.MustCompile(`FORKS ok=(\d+) failed=(\d+)`).FindStringSubmatch(log)
				if m == nil {
					t.Fatalf("no FORKS line:\n%s", log)
				}
				ok, _ := strconv.Atoi(m[1])
				if failed, _ := strconv.Atoi(m[2]); ok >= 64 || failed == 0 || ok+failed != 150 {
					t.Errorf("%d forks succeeded and %d failed, want fewer than the limit 64", ok, failed)
				}
				t.Logf("forks under max_procs 64: %s", m[0])
			}},
		{name: "cpus", args: []string{"cpus"}, reason: "normal",
			check: func(t *testing.T, log string, g gameDetail, color string) {
				want := []string{"BLOCKED sched_setaffinity (Operation not permitted)", "CPUS still"}
				if runtime.GOARCH == "amd64" {
					want = append(want, "BLOCKED sched_setaffinity x32 (Operation not permitted)")
				}
				wantLines(t, log, want...)
				t.Logf("%s", regexp.MustCompile(`(?m)^.*(CPUS|sched_setaffinity).*$`).FindAllString(log, -1))
				// With two CPUs or more, each seat has one (--engine-cpus 1).
				m := regexp.MustCompile(`CPUS \[([0-9, ]*)\]`).FindStringSubmatch(log)
				if m == nil || (runtime.NumCPU() >= 2 && strings.Contains(m[1], ",")) {
					t.Errorf("the engine's CPUs %v, want one of its own", m)
				}
			}},
		{name: "setsid", args: []string{"setsid", marker}, reason: "normal",
			check: func(t *testing.T, log string, g gameDetail, color string) {
				wantLines(t, log, "DAEMON started")
			}},
		{name: "memory", args: []string{"memory"}, reason: "memory",
			check: func(t *testing.T, log string, g gameDetail, color string) {
				if u := g.Usage[color]; !u.OOMKilled || !u.Sandboxed {
					t.Errorf("usage %+v, want killed for memory in the sandbox", u)
				}
				if strings.Contains(log, "ALLOCATED 2 GiB") {
					t.Errorf("the engine allocated 2 GiB")
				}
				m := regexp.MustCompile(`ALLOC (\d+) ([0-9.]+)`).FindAllStringSubmatch(log, -1)
				if len(m) == 0 {
					t.Fatalf("no ALLOC line:\n%s", log)
				}
				last, _ := strconv.ParseFloat(m[len(m)-1][2], 64)
				ended, err := time.Parse(time.RFC3339Nano, g.EndedAt)
				if err != nil {
					t.Fatal(err)
				}
				after := ended.Sub(time.UnixMicro(int64(last * 1e6)))
				t.Logf("last step %s MiB; the game ended %v later (peak %d MiB)", m[len(m)-1][1], after, g.Usage[color].PeakMemory>>20)
				if after > scaled(2*time.Second) {
					t.Errorf("the game ended %v after the engine crossed its limit, want within %v", after, scaled(2*time.Second))
				}
			}},
		{name: "memory-child", args: []string{"memory-child"}, reason: "memory",
			check: func(t *testing.T, log string, g gameDetail, color string) {
				if u := g.Usage[color]; !u.OOMKilled {
					t.Errorf("usage %+v, want killed for memory", u)
				}
			}},
	}
	var mu sync.Mutex
	tids := map[string]int64{}
	// One attack after another, in this test's slot: as parallel subtests
	// they waited behind every parallel test of the package (the test took
	// 87 s of the package's 105 s, for 15 s of attacks).
	t.Run("attacks", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				meta := fmt.Sprintf(`{"name":%q,"game":"othello","command":["python3","hostile.py","{host}","{port}",%s],"max_procs":%d}`,
					"hostile-"+tc.name, quoteList(tc.args), tc.maxProcs)
				id := upload(t, s, meta, map[string][]byte{"hostile.py": hostile})
				// The allocation takes its time on a busy machine (64 MiB a
				// second was seen): its move must not time out first.
				moveMS := scaled(5 * time.Second).Milliseconds()
				if tc.reason == "memory" {
					moveMS = scaled(120 * time.Second).Milliseconds()
				}
				// connect scans every port of 127.0.0.1 before it connects.
				tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(
					`{"name":%q,"game":"othello","engines":[%d,%d],"games_per_pair":1,"move_time_ms":%d,"connect_timeout_ms":%d,"start":true}`,
					tc.name, id, random, moveMS, scaled(30*time.Second).Milliseconds()))
				mu.Lock()
				tids[tc.name] = tid
				mu.Unlock()
				if tc.name == "setsid" {
					// The daemon lives on the host during the game...
					if !waitFor(scaled(60*time.Second), func() bool { return len(procsWith(daemon)) > 0 }) {
						t.Errorf("the daemon never ran")
					}
				}
				s.waitFinished(t, tid, scaled(2*time.Minute))
				if tc.name == "setsid" {
					// ... and is gone once the game is over (the sandbox
					// ends as the game is stored; 1 s was missed at a
					// load average of 24).
					if !waitFor(scaled(5*time.Second), func() bool { return len(procsWith(daemon)) == 0 }) {
						t.Errorf("the setsid daemon %v outlived its game by %v", procsWith(daemon), scaled(5*time.Second))
					}
				}
				list := finishedGames(t, s, tid)
				if len(list) != 1 || list[0].ID == nil {
					t.Fatalf("games %+v", list)
				}
				var g gameDetail
				s.call(t, "GET", fmt.Sprintf("/api/games/%d", *list[0].ID), nil, "", &g)
				color := "black"
				if g.White.EngineID == id {
					color = "white"
				}
				log := gameLog(t, s, *g.ID, color)
				// The built-in opponent's log names its command as a
				// reader knows it, not the sandbox's inner paths.
				opponent := map[string]string{"black": "white", "white": "black"}[color]
				if ol := gameLog(t, s, *g.ID, opponent); !strings.Contains(ol, "sandboxed") || strings.Contains(ol, "/.taikai") {
					t.Errorf("the built-in's log shows the sandbox's inner paths:\n%s", ol)
				}
				if g.Reason == nil || *g.Reason != tc.reason {
					t.Fatalf("game ended by %v, want %s\n%s", deref(g.Reason), tc.reason, log)
				}
				if tc.reason == "normal" {
					checkOthelloGame(t, g.apiGame)
				} else if *g.Result == color || *g.Result == "draw" {
					t.Errorf("result %s: the engine over its memory limit (%s) did not lose", *g.Result, color)
				}
				if g.Sandbox == nil || *g.Sandbox != "on" || !g.Usage["black"].Sandboxed || !g.Usage["white"].Sandboxed {
					t.Errorf("game record: sandbox %v, usage %+v", deref(g.Sandbox), g.Usage)
				}
				if strings.Contains(log, "LEAK") {
					t.Errorf("an attack succeeded:\n%s", log)
				}
				tc.check(t, log, g, color)
				checkStandings(t, s, tid, list)
			})
		}
	})
	if n := reached.Load(); n != 0 {
		t.Errorf("engines reached a host listener %d times", n)
	}
	if u != nil {
		javaPlays(t, s, random)
	}
	// The server runs on, and its standings are a recount of its games.
	select {
	case <-s.done:
		t.Fatalf("the server died:\n%s", s.logs())
	default:
	}
	s.call(t, "GET", "/healthz", nil, "", &health)
	sdb, err := storage.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	for name, tid := range tids {
		var before, after struct{ Standings []apiStanding }
		s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d/standings", tid), nil, "", &before)
		if err := sdb.Recount(context.Background(), tid); err != nil {
			t.Fatal(err)
		}
		s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d/standings", tid), nil, "", &after)
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("%s: standings %v, recount %v", name, before, after)
		}
	}
}

// javaPlays plays the classroom Java client (fixed port 46000) against the
// engine opponent on s.
func javaPlays(t *testing.T, s *serverProcess, opponent int64) {
	t.Helper()
	ciRequires(t, "java")
	src, err := os.ReadFile("../../engines/testdata/clients/OthelloClient.java")
	if err != nil {
		t.Fatal(err)
	}
	id := upload(t, s, `{"name":"java","game":"othello","protocol":"othello-board","command":"java OthelloClient.java {host}","port":46000}`,
		map[string][]byte{"OthelloClient.java": src})
	tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(
		`{"name":"java","game":"othello","engines":[%d,%d],"games_per_pair":1,"move_time_ms":%d,"connect_timeout_ms":%d,"start":true}`,
		id, opponent, scaled(5*time.Second).Milliseconds(), scaled(60*time.Second).Milliseconds()))
	s.waitFinished(t, tid, scaled(3*time.Minute))
	list := finishedGames(t, s, tid)
	if len(list) != 1 || list[0].ID == nil {
		t.Fatalf("the Java client's game: %+v\n%s", list, s.logs())
	}
	var g gameDetail
	s.call(t, "GET", fmt.Sprintf("/api/games/%d", *list[0].ID), nil, "", &g)
	// The client plays its moves until its own bugs stop it (it is the
	// students' program as it is): it never answers when it must pass, and
	// it weighs only squares worth more than 155, answering an illegal PUT
	// 0 0 when no legal one is, then waiting; either ends the game by timeout, at a
	// move that depends on the random opponent (after 3, 9, 10 and 11 moves
	// seen): that it plays at all, in the sandbox, is what is asked.
	javaMoves := 0
	for _, m := range g.Moves {
		if (m.Color == "black") == (g.Black.EngineID == id) {
			javaMoves++
		}
	}
	t.Logf("the Java client made %d moves; the game ended by %s", javaMoves, *g.Reason)
	if javaMoves < 1 || (*g.Reason != "normal" && *g.Reason != "timeout") {
		t.Errorf("the Java client made %d moves, the game ended by %s; want it played", javaMoves, *g.Reason)
	}
	checkOthelloGame(t, g.apiGame)
}

func quoteList(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return strings.Join(q, ",")
}

// A setsid daemon started by a sandboxed engine dies with a server killed by
// SIGKILL, and so does everything else of its sandbox: within 3 s, logged
// (a second quiet; beside two busy loops and the rest of the suite, a
// built-in was once still there at 1 s).
func TestSandboxDaemonDiesWithServer(t *testing.T) { daemonDiesWithServer(t, nil) }

// The same with serve run by an ordinary user from a 0700 home.
func TestSandboxDaemonDiesWithServerOrdinaryUser(t *testing.T) {
	daemonDiesWithServer(t, ordinaryUser(t))
}

func daemonDiesWithServer(t *testing.T, u *osUser) {
	requireSandbox(t)
	ciRequires(t, "python3")
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	if u != nil {
		dir, bin = u.dir(t)
	}
	s := startServerAs(t, u, nil, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"), "--sandbox=on")
	var health struct {
		SandboxLimits *sandbox.Guarantees `json:"sandbox_limits"`
	}
	s.call(t, "GET", "/healthz", nil, "", &health)
	requireCgroupV2(t, s, health.SandboxLimits)
	hostile, err := os.ReadFile("testdata/hostile.py")
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("taikai-daemon-kill-%d", time.Now().UnixNano())
	id := upload(t, s, fmt.Sprintf(`{"name":"daemon","game":"othello","command":["python3","hostile.py","{host}","{port}","setsid",%q,"hang"]}`, marker),
		map[string][]byte{"hostile.py": hostile})
	waitChecked(t, s, id) // its check game's sandbox is gone before the count
	// The built-in's name is in its command line (--name): this server's alone.
	builtinName := "random-" + marker
	random := s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":%q,"game":"othello","builtin":"othello-random"}`, builtinName))
	s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"k","game":"othello","engines":[%d,%d],"games_per_pair":1,"move_time_ms":%d,"connect_timeout_ms":%d,"start":true}`, id, random, scaled(60*time.Second).Milliseconds(), scaled(30*time.Second).Milliseconds()))
	daemon, builtins := "daemon:"+marker, "\x00"+builtinName
	// The built-in itself, not only its bwrap, whose command line holds the
	// same name: a server killed while bwrap sets up a sandbox it has
	// released may leave that sandbox to the next start's Sweep (bubblewrap
	// arms its init's parent-death signal only after the release;
	// docs/SANDBOX.md, "What it does not guarantee"). Killed during the
	// setup, this test failed about once in ten suite runs (2026-11-30).
	running := func(s string) bool {
		for _, p := range procsWith(s) {
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p)); string(comm) != "bwrap\n" {
				return true
			}
		}
		return false
	}
	if !waitFor(scaled(60*time.Second), func() bool { return running(daemon) && running(builtins) }) {
		t.Fatalf("daemon %v, built-in %v: want the game's running\n%s", procsWith(daemon), procsWith(builtins), s.logs())
	}
	// One bwrap per sandboxed engine.
	bwraps := bwrapsOf(s.cmd.Process.Pid)
	if len(bwraps) < 2 {
		t.Errorf("bwrap processes of the server: %v, want one per engine at least", bwraps)
	}
	inside := descendants(bwraps)
	if len(inside) < len(bwraps) {
		t.Errorf("bwraps %v have only %v under them, want each its sandbox's init", bwraps, inside)
	}
	t.Logf("bwraps %v, their processes %v", bwraps, inside)
	s.stop(t, syscall.SIGKILL)
	killed := time.Now()
	gone := func() bool {
		for _, p := range append(bwraps, inside...) {
			if alive(p) {
				return false
			}
		}
		return len(procsWith(daemon)) == 0 && len(procsWith(builtins)) == 0
	}
	if !waitFor(scaled(3*time.Second), gone) {
		t.Errorf("%v after the server's SIGKILL: daemon %v, built-in %v, bwrap of %v, their processes %v", scaled(3*time.Second), procsWith(daemon), procsWith(builtins), bwraps, inside)
		// Why they live on (seen once, in the suite beside two busy loops:
		// the built-in and both bwraps 3 s after the kill, the daemon gone).
		for _, p := range append(append(bwraps, inside...), procsWith(builtins)...) {
			t.Logf("process %d: %s", p, procState(p))
		}
	} else {
		t.Logf("the sandboxes' processes were gone %v after the server's SIGKILL", time.Since(killed).Round(time.Millisecond))
	}
}

// procState is what /proc says of pid: its state, parent, what it waits in,
// its pending and blocked signals, and its cgroups.
func procState(pid int) string {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, l := range strings.Split(string(status), "\n") {
		for _, k := range []string{"State:", "PPid:", "Threads:", "SigPnd:", "ShdPnd:", "SigBlk:"} {
			if strings.HasPrefix(l, k) {
				out = append(out, strings.Join(strings.Fields(l), " "))
			}
		}
	}
	wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
	cgroup, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return fmt.Sprintf("%s; wchan %s; cgroups %q", strings.Join(out, ", "), wchan, cgroup)
}

// descendants lists the processes under pids (children, grandchildren ...).
func descendants(pids []int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 1 {
				ppid, _ := strconv.Atoi(f[1])
				children[ppid] = append(children[ppid], pid)
			}
		}
	}
	var out []int
	for todo := append([]int{}, pids...); len(todo) > 0; {
		p := todo[0]
		todo = todo[1:]
		out = append(out, children[p]...)
		todo = append(todo, children[p]...)
	}
	return out
}

// bwrapsOf lists the bwrap processes whose parent is ppid.
func bwrapsOf(ppid int) []int {
	var out []int
	for _, pid := range procsWith("bwrap") {
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 1 && f[1] == strconv.Itoa(ppid) {
				out = append(out, pid)
			}
		}
	}
	return out
}

// The Python and C test clients (a pbrain brain and an NBoard engine on pipes
// among them) and the gomoku built-ins play normally inside the sandbox, and
// so do the checkers test client, the checkers built-ins and alpha-beta run
// as a command (the Java client and the othello built-ins do in TestEndToEnd,
// which runs sandboxed wherever the sandbox is available).
func TestSandboxClients(t *testing.T) {
	requireSandbox(t)
	ciRequires(t, "python3")
	ciRequires(t, "gcc")
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	s := startServer(t, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"), "--sandbox=on")
	clients := "../../engines/testdata/clients/"
	read := func(name string) []byte {
		b, err := os.ReadFile(clients + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cbin := filepath.Join(dir, "gomoku_bin")
	if out, err := exec.Command("gcc", "-std=c99", "-O2", "-o", cbin, clients+"gomoku_bin.c").CombinedOutput(); err != nil {
		t.Fatalf("compile gomoku_bin.c: %v\n%s", err, out)
	}
	pyText := upload(t, s, `{"name":"py-text","game":"gomoku","protocol":"gomoku-turn","command":["python3","gomoku_text.py","{host}","{port}","{colorflag}"]}`,
		map[string][]byte{"gomoku_text.py": read("gomoku_text.py")})
	cBin := upload(t, s, `{"name":"c-bin","game":"gomoku","protocol":"gomoku-turn","command":["./gomoku_bin","{host}","{port}","{colorflag}"]}`,
		map[string][]byte{"gomoku_bin": mustRead(t, cbin)})
	pyMove := upload(t, s, `{"name":"py-move","game":"othello","protocol":"othello-move","command":["python3","othello_move.py","-H","{host}","-p","{port}","-n","{name}"]}`,
		map[string][]byte{"othello_move.py": read("othello_move.py")})
	pyCheckers := upload(t, s, `{"name":"py-checkers","game":"checkers","protocol":"checkers-board","command":["python3","checkers_board.py","{host}","{port}"]}`,
		map[string][]byte{"checkers_board.py": read("checkers_board.py")})
	var checkers []int64
	for _, b := range []string{"checkers-random", "checkers-minimax"} {
		checkers = append(checkers, s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":%q,"game":"checkers","builtin":%q}`, b, b)))
	}
	// checkers-alphabeta as the built-in thinks half its move time (1 s of
	// these 2 s), and beside two busy loops one of its moves took 2.6 s. It
	// is an opponent here, not under test: the same engine, run as a
	// command, told to think 100 ms.
	checkers = append(checkers, s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":"checkers-alphabeta","game":"checkers","protocol":"checkers-board","command":[%q,"engine","checkers-alphabeta","--host","{host}","--port","{port}","--color","{color}","--time-ms","100","--name","{name}"]}`, bin)))
	pyBrain := upload(t, s, `{"name":"py-brain","game":"gomoku","protocol":"pbrain","command":["python3","pbrain_brain.py"]}`,
		map[string][]byte{"pbrain_brain.py": read("pbrain_brain.py")})
	waitChecked(t, s, pyBrain) // the check's game counts in its folder too
	threat := s.postJSON(t, "/api/engines", `{"name":"threat","game":"gomoku","builtin":"gomoku-threat"}`)
	grandom := s.postJSON(t, "/api/engines", `{"name":"g-random","game":"gomoku","builtin":"gomoku-random"}`)
	orandom := s.postJSON(t, "/api/engines", `{"name":"o-random","game":"othello","builtin":"othello-random","protocol":"othello-move"}`)
	pyNBoard := upload(t, s, `{"name":"py-nboard","game":"othello","protocol":"nboard","command":["python3","nboard_engine.py"]}`,
		map[string][]byte{"nboard_engine.py": read("nboard_engine.py")})
	// Freestyle: the pbrain protocol cannot tell a brain the seed rule's
	// double-three ban (PROTOCOLS.md §5), and a random brain would lose by it.
	gt := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"gomoku","game":"gomoku","rule":"freestyle","size":11,"engines":[%d,%d,%d,%d,%d],"games_per_pair":1,"move_time_ms":%d,"connect_timeout_ms":%d,"concurrency":2,"start":true}`,
		pyText, cBin, pyBrain, threat, grandom, scaled(2*time.Second).Milliseconds(), scaled(30*time.Second).Milliseconds()))
	ot := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"othello","game":"othello","engines":[%d,%d,%d],"games_per_pair":2,"total_time_ms":%d,"connect_timeout_ms":%d,"concurrency":2,"start":true}`,
		pyMove, orandom, pyNBoard, scaled(20*time.Second).Milliseconds(), scaled(30*time.Second).Milliseconds()))
	// The brain's folder (INFO folder) persists from game to game, inside
	// the sandbox: it counted every game of the gomoku tournament.
	defer func() {
		b, err := os.ReadFile(filepath.Join(dir, "data", "folders", strconv.FormatInt(pyBrain, 10), "py-brain", "games"))
		if err != nil || strings.TrimSpace(string(b)) != "5" {
			t.Errorf("py-brain's folder count %q (%v), want 5: one per game, its pre-flight check's included", b, err)
		}
	}()
	// A gauntlet: the client against each built-in (the built-ins against
	// each other, both thinking a second a move, were most of this test's
	// CPU time, and show nothing more of the sandbox).
	ct := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"checkers","game":"checkers","format":"gauntlet","engines":[%d,%d,%d,%d],"games_per_pair":1,"move_time_ms":%d,"connect_timeout_ms":%d,"concurrency":2,"start":true}`,
		pyCheckers, checkers[0], checkers[1], checkers[2], scaled(2*time.Second).Milliseconds(), scaled(30*time.Second).Milliseconds()))
	for _, tid := range []int64{gt, ot, ct} {
		s.waitFinished(t, tid, scaled(4*time.Minute))
		list := finishedGames(t, s, tid)
		for _, g := range list {
			var d gameDetail
			s.call(t, "GET", fmt.Sprintf("/api/games/%d", *g.ID), nil, "", &d)
			if deref(d.Reason) != "normal" || deref(d.Sandbox) != "on" || !d.Usage["black"].Sandboxed || !d.Usage["white"].Sandboxed {
				t.Errorf("game %d %s vs %s: %s by %s, sandbox %s, usage %+v\nblack:\n%s\nwhite:\n%s", *g.ID, g.Black.Name, g.White.Name, deref(d.Result), deref(d.Reason),
					deref(d.Sandbox), d.Usage, gameLog(t, s, *g.ID, "black"), gameLog(t, s, *g.ID, "white"))
			}
		}
		checkStandings(t, s, tid, list)
	}
}

// taikai bench measures an engine's start and games per second without
// and with the sandbox in the same run.
func TestBenchSandboxFigures(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	bin := taikaiBinary(t)
	out, err := exec.Command(bin, "bench", "--only", "throughput", "--scale", "0.05", "--json", "--dir", t.TempDir()).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("bench: %v\n%s\n%s", err, out, stderr)
	}
	var r struct {
		Sandbox              string
		EngineStartMS        float64 `json:"engine_start_ms"`
		EngineStartSandboxMS float64 `json:"engine_start_sandbox_ms"`
		BwrapTrueAddedMS     float64 `json:"bwrap_true_added_ms"`
		GamesPerSec          float64 `json:"games_per_sec"`
		GamesPerSecSandbox   float64 `json:"games_per_sec_sandbox"`
		SandboxGamesRatio    float64 `json:"sandbox_games_ratio"`
		Game10msMS           float64 `json:"game_10ms_ms"`
		Game10msSandboxMS    float64 `json:"game_10ms_sandbox_ms"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Sandbox != "on" || r.EngineStartMS <= 0 || r.EngineStartSandboxMS <= 0 || r.BwrapTrueAddedMS <= 0 || r.GamesPerSec <= 0 || r.GamesPerSecSandbox <= 0 ||
		r.Game10msMS <= 0 || r.Game10msSandboxMS <= 0 {
		t.Errorf("bench figures %+v", r)
	}
	t.Logf("engine start %.2f ms, sandboxed %.2f ms; %.1f games/s, sandboxed %.1f (%.2f); a game at 10 ms a move %.0f ms, sandboxed %.0f ms", r.EngineStartMS, r.EngineStartSandboxMS,
		r.GamesPerSec, r.GamesPerSecSandbox, r.SandboxGamesRatio, r.Game10msMS, r.Game10msSandboxMS)
}

// Where the sandbox cannot be set up (here: no bwrap on the PATH), serve
// starts, built-ins play (unsandboxed), any other engine is refused with
// the reason and the fix, and every page and /healthz say so. With
// --sandbox=off every engine runs, unsandboxed, under a warning.
func TestServeWithoutSandbox(t *testing.T) {
	t.Parallel()
	bin := taikaiBinary(t)
	noBwrap := t.TempDir()
	for _, tool := range []string{"prlimit", "taskset", "java", "python3"} {
		if p, err := exec.LookPath(tool); err == nil {
			os.Symlink(p, filepath.Join(noBwrap, tool))
		}
	}
	for _, mode := range []string{"auto", "off"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			s := startServerEnv(t, []string{"PATH=" + noBwrap, "TAIKAI_SANDBOX=" + mode}, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"))
			var health struct{ Sandbox, SandboxError string }
			var raw map[string]string
			s.call(t, "GET", "/healthz", nil, "", &raw)
			health.Sandbox, health.SandboxError = raw["sandbox"], raw["sandbox_error"]
			want := map[string]string{"auto": "unavailable", "off": "off"}[mode]
			if health.Sandbox != want || (mode == "auto") != strings.Contains(health.SandboxError, "bwrap") {
				t.Errorf("/healthz %v, want sandbox %s", raw, want)
			}
			res, err := http.Get(s.url + "/")
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if !bytes.Contains(page, []byte(`class="sandbox-warning"`)) {
				t.Errorf("no sandbox warning on the dashboard")
			}
			a := s.postJSON(t, "/api/engines", `{"name":"a","game":"othello","builtin":"othello-random"}`)
			b := s.postJSON(t, "/api/engines", `{"name":"b","game":"othello","builtin":"othello-greedy"}`)
			var out struct {
				Error struct{ Code, Message string }
			}
			code := s.call(t, "POST", "/api/engines", strings.NewReader(fmt.Sprintf(`{"name":"c","game":"othello","command":[%q,"engine","othello-random","--port","{port}"]}`, bin)), "application/json", nil)
			if mode == "auto" {
				req, _ := http.NewRequest("POST", s.url+"/api/engines", strings.NewReader(`{"name":"d","game":"othello","command":"prog {port}"}`))
				req.Header.Set("Authorization", "Bearer e2e-token")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				json.NewDecoder(res.Body).Decode(&out)
				res.Body.Close()
				if code != http.StatusServiceUnavailable || res.StatusCode != http.StatusServiceUnavailable || out.Error.Code != "unavailable" ||
					!strings.Contains(out.Error.Message, "bwrap") || !strings.Contains(out.Error.Message, "--sandbox=off") {
					t.Errorf("registering a command engine without a sandbox: %d, %d %+v", code, res.StatusCode, out)
				}
			} else if code != http.StatusCreated {
				t.Errorf("registering a command engine with --sandbox=off: %d", code)
			}
			tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"t","game":"othello","engines":[%d,%d],"games_per_pair":1,"move_time_ms":1000,"start":true}`, a, b))
			s.waitFinished(t, tid, scaled(time.Minute))
			list := finishedGames(t, s, tid)
			var g gameDetail
			s.call(t, "GET", fmt.Sprintf("/api/games/%d", *list[0].ID), nil, "", &g)
			if deref(g.Reason) != "normal" || deref(g.Sandbox) != "off" || g.Usage["black"].Sandboxed || g.Usage["black"].CPUMS <= 0 {
				t.Errorf("game %s by %s, sandbox %s, usage %+v", deref(g.Result), deref(g.Reason), deref(g.Sandbox), g.Usage)
			}
		})
	}
}

// The admin token is stored as its hash: a generated one is printed once,
// a plain one stored by an older server is replaced by its hash and keeps
// working.
func TestAdminTokenStoredAsHash(t *testing.T) {
	ctx := context.Background()
	open := func() *storage.DB {
		db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	old := open()
	if err := old.SetSetting(ctx, "admin_token", "old-plain-token"); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	a := &server{cfg: &serveConfig{}, stderr: &stderr, db: old, log: slog.New(slog.DiscardHandler)}
	h, err := a.adminToken(ctx)
	if err != nil || h != web.HashToken("old-plain-token") {
		t.Fatalf("old database: %q, %v; want the plain token's hash", h, err)
	}
	if v, _ := old.Setting(ctx, "admin_token"); v != "" {
		t.Errorf("the plain token is still stored: %q", v)
	}
	srv := &web.Server{TokenHash: h}
	if !srv.TokenOK("old-plain-token") || srv.TokenOK("wrong") || srv.TokenOK("") {
		t.Errorf("the migrated token is not accepted, or others are")
	}

	fresh := open()
	a = &server{cfg: &serveConfig{}, stderr: &stderr, db: fresh, log: slog.New(slog.DiscardHandler)}
	h, err = a.adminToken(ctx)
	m := regexp.MustCompile(`taikai admin token: ([0-9a-f]+)`).FindStringSubmatch(stderr.String())
	if err != nil || m == nil || web.HashToken(m[1]) != h {
		t.Fatalf("new database: hash %q, %v, printed %q", h, err, stderr.String())
	}
	stored, _ := fresh.Setting(ctx, "admin_token_sha256")
	if plain, _ := fresh.Setting(ctx, "admin_token"); stored != h || plain != "" || strings.Contains(stored, m[1]) {
		t.Errorf("stored %q and %q for token %s", stored, plain, m[1])
	}
	stderr.Reset()
	if again, _ := a.adminToken(ctx); again != h || stderr.Len() != 0 {
		t.Errorf("second start: %q, printed %q", again, stderr.String())
	}
}

// taikai match runs engines unsandboxed unless --sandbox is given.
func TestMatchSandboxFlag(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	bin := taikaiBinary(t)
	for _, flags := range [][]string{nil, {"--sandbox"}} {
		args := append([]string{"match", "--games", "2", "--move-time", scaled(200 * time.Millisecond).String(),
			"--connect-timeout", scaled(30 * time.Second).String(), "--json"}, flags...)
		out, err := exec.Command(bin, append(args, "othello-random", "othello-greedy")...).Output()
		if err != nil {
			t.Fatalf("%q: %v\n%s", args, err, out)
		}
		var res struct {
			Games []struct{ Reason, Sandbox string }
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		want := "off"
		if len(flags) > 0 {
			want = "on"
		}
		if len(res.Games) != 2 {
			t.Fatalf("%q: %s", args, out)
		}
		for _, g := range res.Games {
			if g.Reason != "normal" || g.Sandbox != want {
				t.Errorf("%q: game %+v, want normal with sandbox %s", args, g, want)
			}
		}
	}
}

// serve makes itself non-dumpable: run as an ordinary user (nobody), its
// /proc files then belong to root, so that no process of that user (an
// unsandboxed engine included) can read its environment or memory.
func TestServeNotDumpable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the server as another user")
	}
	setpriv := ciRequires(t, "setpriv")
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	searchable(t, dir)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups", bin, "serve", "--addr", "127.0.0.1:0",
		"--db", filepath.Join(dir, "t.db"), "--data", filepath.Join(dir, "data"), "--sandbox=off")
	cmd.Env = append(os.Environ(), "TAIKAI_ADMIN_TOKEN=not-dumped")
	var out testkit.Buffer
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	path := fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid)
	if !waitFor(scaled(30*time.Second), func() bool { return strings.Contains(out.String(), "taikai serving") }) {
		t.Fatalf("server did not start:\n%s", out.String())
	}
	uid, err := fileOwner(path)
	if err != nil {
		t.Fatal(err)
	}
	if uid != 0 {
		t.Errorf("%s belongs to uid %d: the server is dumpable", path, uid)
	}
}

// serve's start-up check passes with the data directory under a 0700
// directory (as in root's home): for a root server too, no directory above
// the uploaded engines needs to be searchable by the engines' uid.
func TestSandboxCheckNamesDataDir(t *testing.T) {
	requireSandbox(t)
	bin := taikaiBinary(t)
	dir := t.TempDir()
	searchable(t, dir)
	locked := filepath.Join(dir, "locked")
	uploads := filepath.Join(locked, "data", "engines")
	if err := os.MkdirAll(uploads, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := setupSandbox(&engines.Launcher{Self: bin}, uploads); err != nil {
		t.Errorf("check with %s closed: %v", locked, err)
	}
}

// Pipe engines over their memory limit: a pbrain brain and an NBoard engine
// that allocate 2 GiB lose by memory, in the sandbox, and the server runs on.
func TestSandboxPipeEnginesMemory(t *testing.T) {
	requireSandbox(t)
	ciRequires(t, "python3")
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	s := startServer(t, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"), "--sandbox=on")
	clients := "../../engines/testdata/clients/"
	for _, c := range []struct{ game, rule, protocol, file, builtin string }{
		{"gomoku", "freestyle", "pbrain", "pbrain_brain.py", "gomoku-random"},
		{"othello", "", "nboard", "nboard_engine.py", "othello-random"},
	} {
		src, err := os.ReadFile(clients + c.file)
		if err != nil {
			t.Fatal(err)
		}
		hog := upload(t, s, fmt.Sprintf(`{"name":"hog-%s","game":%q,"protocol":%q,"command":["env","FAULT=memory","FAULT_AT=2","python3",%q]}`, c.protocol, c.game, c.protocol, c.file),
			map[string][]byte{c.file: src})
		other := s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":"other-%s","game":%q,"builtin":%q}`, c.protocol, c.game, c.builtin))
		// The allocation takes its time on a busy machine: its move must not time out first.
		tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"hog-%s","game":%q,"rule":%q,"engines":[%d,%d],"games_per_pair":1,"move_time_ms":%d,"connect_timeout_ms":%d,"start":true}`,
			c.protocol, c.game, c.rule, hog, other, scaled(120*time.Second).Milliseconds(), scaled(30*time.Second).Milliseconds()))
		s.waitFinished(t, tid, scaled(3*time.Minute))
		list := finishedGames(t, s, tid)
		if len(list) != 1 {
			t.Fatalf("%s: games %+v", c.protocol, list)
		}
		var g gameDetail
		s.call(t, "GET", fmt.Sprintf("/api/games/%d", *list[0].ID), nil, "", &g)
		color := "black"
		if g.White.EngineID == hog {
			color = "white"
		}
		if deref(g.Reason) != "memory" || deref(g.Result) == color || deref(g.Result) == "draw" || !g.Usage[color].OOMKilled {
			t.Errorf("%s: %s by %s, usage %+v\n%s", c.protocol, deref(g.Result), deref(g.Reason), g.Usage, gameLog(t, s, *g.ID, color))
		}
	}
	var health struct{ Status string }
	s.call(t, "GET", "/healthz", nil, "", &health)
	if health.Status != "ok" {
		t.Errorf("/healthz %q after the pipe engines' memory faults", health.Status)
	}
}

// osUser is an ordinary user the tests run serve as, from a 0700 home.
type osUser struct {
	uid, gid int
	home     string
}

// testUser is the ordinary user a root test creates (or reuses) to run
// serve as.
const testUser = "taikai-sbtest"

// ordinaryUser is the ordinary user to run serve as: as root, testUser,
// made with useradd if missing, its home 0700; as an ordinary user, the
// test's own user.
func ordinaryUser(tb testing.TB) *osUser {
	tb.Helper()
	if os.Geteuid() != 0 {
		return &osUser{uid: os.Getuid(), gid: os.Getgid(), home: tb.TempDir()}
	}
	if _, err := user.Lookup(testUser); err != nil {
		useradd := ciRequires(tb, "useradd")
		if out, err := exec.Command(useradd, "--create-home", "--shell", "/usr/sbin/nologin", testUser).CombinedOutput(); err != nil {
			tb.Fatalf("useradd %s: %v\n%s", testUser, err, out)
		}
	}
	usr, err := user.Lookup(testUser)
	if err != nil {
		tb.Fatal(err)
	}
	uid, _ := strconv.Atoi(usr.Uid)
	gid, _ := strconv.Atoi(usr.Gid)
	if err := os.MkdirAll(usr.HomeDir, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chown(usr.HomeDir, uid, gid); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(usr.HomeDir, 0o700); err != nil { // nobody else may even search it
		tb.Fatal(err)
	}
	return &osUser{uid: uid, gid: gid, home: usr.HomeDir}
}

// delegateEnv names a cgroup v2 directory whose cgroup.subtree_control
// enables memory and pids (set by the user-mode Linux harness,
// deploy/uml/init.sh). Each server the tests start as an ordinary user (an
// osUser, or the test's own user when it is not root) then starts alone in a
// fresh cgroup under it, delegated to that user as systemd delegates one
// (`systemd-run --user --scope -p Delegate=yes`: the directory and its
// cgroup.procs, cgroup.subtree_control and cgroup.threads chowned), and must
// hold its limits by that cgroup. Root's servers keep the test's own cgroup.
const delegateEnv = "TAIKAI_TEST_DELEGATE"

var delegated atomic.Int64

// own makes cmd run as u, from its home.
func (u *osUser) own(tb testing.TB, cmd *exec.Cmd) {
	tb.Helper()
	cmd.Dir = u.home
	cmd.Env = append(cmd.Env, "HOME="+u.home)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if u.uid != os.Geteuid() {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.gid)}
	}
}

// delegate starts cmd, a server run as u (nil: as the test), in a fresh
// cgroup of its own under delegateEnv, delegated to its user, when that is
// set and the server is not root's. It says whether it did.
func delegate(tb testing.TB, cmd *exec.Cmd, u *osUser) bool {
	tb.Helper()
	parent := os.Getenv(delegateEnv)
	uid, gid := os.Geteuid(), os.Getegid()
	if u != nil {
		uid, gid = u.uid, u.gid
	}
	if parent == "" || uid == 0 {
		return false
	}
	dir := filepath.Join(parent, fmt.Sprintf("server-%d-%d", os.Getpid(), delegated.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		// Once the server is gone, its sandboxes' (and its leaf's) cgroups
		// empty as the kernel reaps their processes.
		waitFor(scaled(5*time.Second), func() bool {
			subs, _ := os.ReadDir(dir)
			for _, e := range subs {
				if e.IsDir() {
					syscall.Rmdir(filepath.Join(dir, e.Name()))
				}
			}
			return syscall.Rmdir(dir) == nil
		})
	})
	for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
		if err := os.Chown(filepath.Join(dir, f), uid, gid); err != nil {
			tb.Fatal(err)
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(f.Fd())
	return true
}

// dir makes a fresh directory of u's under its home, removed at the end,
// with a copy of the taikai binary in it (u's own, as a user's clone
// builds it).
func (u *osUser) dir(tb testing.TB) (dir, bin string) {
	tb.Helper()
	dir, err := os.MkdirTemp(u.home, "test-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	b, err := os.ReadFile(taikaiBinary(tb))
	if err != nil {
		tb.Fatal(err)
	}
	bin = filepath.Join(dir, "taikai")
	if err := os.WriteFile(bin, b, 0o700); err != nil {
		tb.Fatal(err)
	}
	for _, p := range []string{dir, bin} {
		if err := os.Chown(p, u.uid, u.gid); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	// A process forked by another test while the copy was open for
	// writing holds it until it execs: until then the copy cannot run
	// ("text file busy", once beside two busy loops). Run it once that
	// has passed; no process forked since the close can hold it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ; ; time.Sleep(20 * time.Millisecond) {
		err := exec.CommandContext(ctx, bin, "help").Run()
		if !errors.Is(err, syscall.ETXTBSY) {
			break
		}
		if ctx.Err() != nil {
			tb.Fatalf("%s: still text file busy after 30 s", bin)
		}
	}
	return dir, bin
}

// Servers side by side (issue 35, item 7): while a root server and an
// ordinary user's server each have a game under way, another root server
// and `taikai match --sandbox` start and play. Each server serves within
// 2 s of its start (Sweep leaves live servers' sandboxes alone, EPERM from
// kill(pid, 0) meaning alive, and never loops), and no game under way
// loses its engine.
func TestSandboxServersSideBySide(t *testing.T) {
	requireSandbox(t)
	ciRequires(t, "python3")
	t.Parallel()
	hostile, err := os.ReadFile("testdata/hostile.py")
	if err != nil {
		t.Fatal(err)
	}
	bin := taikaiBinary(t)
	u := ordinaryUser(t)
	udir, ubin := u.dir(t)
	rdir := t.TempDir()
	type server struct {
		name   string
		s      *serverProcess
		daemon string
		tid    int64
	}
	start := func(name string, u *osUser, bin, dir string) *server {
		s := startServerAs(t, u, nil, bin, filepath.Join(dir, name+".db"), filepath.Join(dir, name+"-data"), "--sandbox=on")
		// Not under a time scale (user-mode Linux): there serving is
		// a trial sandbox's start, 15-80 s as the host's load goes
		// (seen), no factor of the 2 s here; the bound, which catches
		// a Sweep that loops, holds wherever the suite runs unscaled.
		if timeScale() == 1 && s.startedIn > 2*time.Second {
			t.Errorf("%s served %v after its start, want within 2s\n%s", name, s.startedIn, s.logs())
		}
		t.Logf("%s served in %v", name, s.startedIn)
		return &server{name: name, s: s}
	}
	// A game that stays under way: the engine hangs on its first move,
	// with a daemon of its sandbox to watch, until its 60 s move clock.
	play := func(v *server) {
		v.daemon = fmt.Sprintf("taikai-side-%s-%d", v.name, time.Now().UnixNano())
		id := upload(t, v.s, fmt.Sprintf(`{"name":"hang","game":"othello","command":["python3","hostile.py","{host}","{port}","setsid",%q,"hang"]}`, v.daemon),
			map[string][]byte{"hostile.py": hostile})
		waitChecked(t, v.s, id)
		random := v.s.postJSON(t, "/api/engines", `{"name":"random","game":"othello","builtin":"othello-random"}`)
		v.tid = v.s.postJSON(t, "/api/tournaments", fmt.Sprintf(
			`{"name":"side","game":"othello","engines":[%d,%d],"games_per_pair":1,"move_time_ms":%d,"connect_timeout_ms":%d,"start":true}`, id, random, scaled(60*time.Second).Milliseconds(), scaled(30*time.Second).Milliseconds()))
		if !waitFor(scaled(60*time.Second), func() bool { return len(procsWith("daemon:"+v.daemon)) > 0 }) {
			t.Fatalf("%s: the game's engine never ran\n%s", v.name, v.s.logs())
		}
	}
	root := start("root", nil, bin, rdir)
	play(root)
	user := start("user", u, ubin, udir)
	play(user)
	second := start("root2", nil, bin, rdir)
	// Engines that answer at once, under a clock a loaded machine keeps (at
	// 200 ms, both games were lost on time once, beside seven other tests).
	out, err := exec.Command(bin, "match", "--sandbox", "--games", "2", "--move-time", scaled(2*time.Second).String(),
		"--connect-timeout", scaled(30*time.Second).String(), "--json", "othello-random", "othello-greedy").Output()
	if err != nil {
		t.Fatalf("match --sandbox beside the servers: %v\n%s", err, out)
	}
	var res struct {
		Games []struct{ Reason, Sandbox string }
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Games) != 2 {
		t.Fatalf("match --sandbox: %v %s", err, out)
	}
	for _, g := range res.Games {
		if g.Reason != "normal" || g.Sandbox != "on" {
			t.Errorf("match --sandbox beside the servers: game %+v", g)
		}
	}
	// The games under way still have their engines.
	for _, v := range []*server{root, user} {
		if len(procsWith("daemon:"+v.daemon)) == 0 {
			t.Errorf("%s's game lost its engine's sandbox to another server\n%s", v.name, v.s.logs())
		}
		var tr tournamentJSON
		v.s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d", v.tid), nil, "", &tr)
		if tr.FinishedGames != 0 {
			t.Errorf("%s's game ended while the others started: %+v", v.name, tr)
		}
	}
	for _, v := range []*server{root, user, second} {
		select {
		case <-v.s.done:
			t.Errorf("%s died:\n%s", v.name, v.s.logs())
		default:
		}
	}
}

// serve --engine-cpus (TAIKAI_ENGINE_CPUS): the CPU quota of every
// sandboxed engine, one CPU by default, 0 for none; a bad value is an error
// naming the flag or the variable.
func TestServeEngineCPUs(t *testing.T) {
	var stderr bytes.Buffer
	if c, err := parseServe(nil, &stderr); err != nil || c.engineCPUs != 1 {
		t.Errorf("default: %+v %v", c, err)
	}
	if c, err := parseServe([]string{"--engine-cpus", "1.5"}, &stderr); err != nil || c.engineCPUs != 1.5 {
		t.Errorf("--engine-cpus 1.5: %+v %v", c, err)
	}
	if c, err := parseServe([]string{"--engine-cpus", "0"}, &stderr); err != nil || c.engineCPUs != 0 {
		t.Errorf("--engine-cpus 0: %+v %v", c, err)
	}
	if _, err := parseServe([]string{"--engine-cpus", "-1"}, &stderr); err == nil || !strings.Contains(err.Error(), "--engine-cpus") {
		t.Errorf("--engine-cpus -1: %v", err)
	}
	t.Setenv("TAIKAI_ENGINE_CPUS", "0.5")
	if c, err := parseServe(nil, &stderr); err != nil || c.engineCPUs != 0.5 {
		t.Errorf("TAIKAI_ENGINE_CPUS=0.5: %+v %v", c, err)
	}
	t.Setenv("TAIKAI_ENGINE_CPUS", "one")
	if _, err := parseServe(nil, &stderr); err == nil || !strings.Contains(err.Error(), "TAIKAI_ENGINE_CPUS") {
		t.Errorf("TAIKAI_ENGINE_CPUS=one: %v", err)
	}
}
