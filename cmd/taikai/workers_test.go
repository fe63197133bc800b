package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/internal/testkit"
)

// workerProcess is a running `taikai worker`.
type workerProcess struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed once it exited and its output was read
	log  testkit.Buffer
}

// startWorker starts a worker with env added to the test's environment.
func startWorker(tb testing.TB, env []string, bin, natsURL, name, data string, extra ...string) *workerProcess {
	tb.Helper()
	if err := os.MkdirAll(data, 0o755); err != nil {
		tb.Fatal(err)
	}
	searchable(tb, data)
	cmd := exec.Command(bin, append([]string{"worker", "--nats", natsURL, "--name", name, "--concurrency", "1", "--data", data}, extra...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	w := &workerProcess{name: name, cmd: cmd, done: make(chan struct{})}
	// Wait returns once the output is copied: its last words (why it
	// exited) are in the log when done closes. A StderrPipe read beside
	// Wait lost them, as Wait closes the pipe at the exit.
	cmd.Stderr = &w.log
	cmd.WaitDelay = 10 * time.Second // an engine of its still holding the output
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(w.done)
	}()
	tb.Cleanup(func() { w.stop(tb, syscall.SIGKILL) })
	return w
}

func (w *workerProcess) logs() string { return w.log.String() }

func (w *workerProcess) stop(tb testing.TB, sig syscall.Signal) {
	select {
	case <-w.done:
		return
	default:
	}
	w.cmd.Process.Signal(sig)
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		w.cmd.Process.Kill()
		tb.Errorf("worker %s did not exit within 30s of %v", w.name, sig)
		<-w.done
	}
}

// freePort is a loopback port nothing listens on now.
type workersAnswer struct {
	Cluster bool
	Workers []struct {
		Name    string
		Pid     int
		Running int
		Games   []int64
		Done    int64
		Sandbox string
	}
	Queued, Running int
	Redelivered     int64
}

type clusterGame struct {
	ID      int64
	Status  string
	Plies   int
	Reason  *string
	Worker  string
	Attempt int
}

// killMidGame waits until worker w plays a game that has moves, SIGKILLs it
// and returns that game's id. Its games are as of its last heartbeat (2 s
// apart), so a game is looked up before the kill: still running, with
// moves. At any ply: the Java client's games stall (then wait out their
// clock) at ply 13 to 61, and a bound of 40 plies left the kill untried
// for whole tournaments (2 runs of 17 alone). A kill can still come after
// the worker handed in its result; interrupted tells, and the callers kill
// again. Games in not are passed over: a game lost with w comes back to
// the queue, and w started again may take it first.
func killMidGame(t *testing.T, s *serverProcess, w *workerProcess, not ...int64) int64 {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var ws workersAnswer
		s.call(t, "GET", "/api/workers", nil, "", &ws)
		for _, x := range ws.Workers {
			if x.Name != w.name || x.Pid != w.cmd.Process.Pid || len(x.Games) == 0 || slices.Contains(not, x.Games[0]) {
				continue
			}
			var g clusterGame
			s.call(t, "GET", fmt.Sprintf("/api/games/%d", x.Games[0]), nil, "", &g)
			if g.Status == "running" && g.Plies > 0 {
				w.stop(t, syscall.SIGKILL)
				t.Logf("worker %s killed at ply %d of game %d", w.name, g.Plies, g.ID)
				return g.ID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("worker %s never seen in a game\n%s", w.name, w.logs())
	return 0
}

// interrupted waits until the server has settled game id after its worker
// was killed mid-game: true when the kill interrupted it (it is played
// again: attempt 2 or more), false when the worker had handed in its result
// just before (finished at attempt 1: instant engines play the rest of a
// game between a look at the game and the kill, on a loaded machine).
func interrupted(t *testing.T, s *serverProcess, id int64) bool {
	t.Helper()
	var g clusterGame
	if !waitFor(2*time.Minute, func() bool {
		s.call(t, "GET", fmt.Sprintf("/api/games/%d", id), nil, "", &g)
		return g.Attempt >= 2 || g.Status == "finished"
	}) {
		t.Fatalf("game %d, lost with its worker: %+v 2 minutes later, neither finished nor played again", id, g)
	}
	if g.Attempt < 2 {
		t.Logf("game %d: the worker handed in its result before the kill (%+v); another kill", id, g)
	}
	return g.Attempt >= 2
}

// An embedded NATS server reachable from other machines needs a token: without
// one anybody on the network could hand in results.
func TestServeNATSFlags(t *testing.T) {
	t.Setenv("TAIKAI_NATS_TOKEN", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nats-embedded", "0.0.0.0:4222"}, "TAIKAI_NATS_TOKEN"},
		{[]string{"--nats-embedded", "127.0.0.1:4222", "--nats", "nats://x:4222"}, "give one"},
		{[]string{"--nats", "nats://x:4222", "--worker-timeout", "10ms"}, "--worker-timeout"},
	} {
		var stderr bytes.Buffer
		if code := run(append([]string{"serve"}, tc.args...), &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("serve %v: exit %d, %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	// A join token (workers enroll) stands for the token; it needs the
	// embedded server, and a length.
	t.Setenv("TAIKAI_WORKER_JOIN_TOKEN", "0123456789abcdef0123456789abcdef")
	if _, err := parseServe([]string{"--nats-embedded", "0.0.0.0:4222"}, &bytes.Buffer{}); err != nil {
		t.Errorf("with a join token: %v", err)
	}
	for _, tc := range []struct {
		join string
		args []string
		want string
	}{
		{"0123456789abcdef0123456789abcdef", []string{"--nats", "nats://x:4222"}, "needs --nats-embedded"},
		{"short", []string{"--nats-embedded", "127.0.0.1:4222"}, "at least 24"},
	} {
		t.Setenv("TAIKAI_WORKER_JOIN_TOKEN", tc.join)
		if _, err := parseServe(tc.args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v with join token %q: %v, want %q", tc.args, tc.join, err, tc.want)
		}
	}
	t.Setenv("TAIKAI_WORKER_JOIN_TOKEN", "")
	t.Setenv("TAIKAI_NATS_TOKEN", "s3cret")
	if _, err := parseServe([]string{"--nats-embedded", "0.0.0.0:4222"}, &bytes.Buffer{}); err != nil {
		t.Errorf("with a token: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{}, "--nats"},
		{[]string{"--nats", "nats://x:4222", "--name", "a.b"}, "--name"},
		{[]string{"--nats", "nats://x:4222", "--concurrency", "0"}, "--concurrency"},
		{[]string{"--nats", "nats://x:4222", "--sandbox", "maybe"}, "--sandbox"},
		{[]string{"--nats", "nats://x:4222", "--enroll", "taikai:8080"}, "--enroll"},
	} {
		var stderr bytes.Buffer
		t.Setenv("TAIKAI_NATS", "")
		if code := run(append([]string{"worker"}, tc.args...), &bytes.Buffer{}, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("worker %v: exit %d, %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// A worker enrolls itself (issue 36: the compose deployment's workers): the
// server has a join token, the worker --enroll and the join token; it gets
// credentials of its own, keeps them under --data, and plays the games. The
// shared token is refused from the start. Revoked, the worker is cut off,
// and started again it is refused: it does not enroll itself again.
func TestWorkerEnrolls(t *testing.T) {
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	const join = "join-0123456789abcdef0123456789"
	natsAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	env := []string{"TAIKAI_WORKER_JOIN_TOKEN=" + join, "TAIKAI_NATS_TOKEN=shared"}
	s := startServerEnv(t, env, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"), "--nats-embedded", natsAddr, "--worker-timeout", "3s")
	wdata := filepath.Join(dir, "worker")
	w := startWorker(t, env, bin, "nats://"+natsAddr, "w1", wdata, "--enroll", s.url, "--sandbox", "off")
	// A worker with the shared token only is refused.
	shared := startWorker(t, []string{"TAIKAI_WORKER_JOIN_TOKEN=", "TAIKAI_NATS_TOKEN=shared"}, bin, "nats://"+natsAddr, "w2", filepath.Join(dir, "worker2"), "--sandbox", "off")

	greedy := s.postJSON(t, "/api/engines", `{"name":"greedy","game":"othello","builtin":"othello-greedy"}`)
	random := s.postJSON(t, "/api/engines", `{"name":"random","game":"othello","builtin":"othello-random"}`)
	tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"enroll","game":"othello","engines":[%d,%d],"games_per_pair":2,"move_time_ms":2000,"start":true}`, greedy, random))
	tr := s.waitFinished(t, tid, 3*time.Minute)
	for _, g := range finishedGames(t, s, tid) {
		var cg clusterGame
		s.call(t, "GET", fmt.Sprintf("/api/games/%d", *g.ID), nil, "", &cg)
		if cg.Status != "finished" || cg.Worker != "w1" {
			t.Errorf("game %d: %s by %q, want finished by w1", cg.ID, cg.Status, cg.Worker)
		}
	}
	t.Logf("tournament: %d/%d games", tr.FinishedGames, tr.TotalGames)
	kept := filepath.Join(wdata, "credentials", "w1")
	if fi, err := os.Stat(kept); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("w1's credentials kept at %s: %v %v, want mode 0600", kept, fi, err)
	}
	var list struct{ Names []string }
	s.call(t, "GET", "/api/workers/credentials", nil, "", &list)
	if len(list.Names) != 1 || list.Names[0] != "w1" {
		t.Errorf("credentials %v, want [w1]", list.Names)
	}
	select {
	case <-shared.done:
		if !strings.Contains(shared.logs(), "nats refused this client's credentials") && !strings.Contains(shared.logs(), "uthorization") {
			t.Errorf("the shared-token worker exited without saying it was refused:\n%s", shared.logs())
		}
	case <-time.After(time.Minute):
		t.Errorf("the worker with the shared token only still runs:\n%s", shared.logs())
	}

	// Revoked: cut off; started again, refused (its kept secret is no more).
	if code := s.call(t, "DELETE", "/api/workers/credentials/w1", nil, "", nil); code != 204 {
		t.Fatalf("revoke w1: %d", code)
	}
	select {
	case <-w.done:
	case <-time.After(time.Minute):
		t.Fatalf("w1 still runs a minute after its credentials were revoked:\n%s", w.logs())
	}
	again := startWorker(t, env, bin, "nats://"+natsAddr, "w1", wdata, "--enroll", s.url, "--sandbox", "off")
	select {
	case <-again.done:
		if again.cmd.ProcessState.ExitCode() == 0 {
			t.Errorf("w1 started again after its revocation: exit 0\n%s", again.logs())
		}
	case <-time.After(time.Minute):
		t.Errorf("w1 started again after its revocation still runs:\n%s", again.logs())
	}
	s.call(t, "GET", "/api/workers/credentials", nil, "", &list)
	if len(list.Names) != 0 {
		t.Errorf("credentials after the revocation and a restart: %v, want none", list.Names)
	}
	if t.Failed() {
		t.Logf("server:\n%s", s.logs())
		t.Logf("worker:\n%s\nagain:\n%s", w.logs(), again.logs())
	}
}

// TestClusterEndToEnd plays a 60-game round robin on three `taikai worker`
// processes through a server with an embedded NATS: one worker is SIGKILLed
// mid-game twice (and started again), the server once. Every scheduled game
// finishes exactly once, no id is doubled, the standings equal a recount, and
// the killed worker's games were played again from the start by a worker.
//
// The package's longest test (35-45 s beside the others), its last parallel
// test: Go resumes a package's paused parallel tests roughly last-paused
// first (besides the very first). In cluster_test.go, second, it started
// 17-33 s into the package's run, and ended it; behind TestWorkerEnrolls,
// 26 s in (2026-11-30), and it ended the package 15 s after the others.
func TestClusterEndToEnd(t *testing.T) {
	t.Parallel()
	ciRequires(t, "java")
	bin := taikaiBinary(t)
	dir := t.TempDir()
	var flags []string
	if sandboxErr(t) != nil {
		flags = append(flags, "--sandbox=off") // the uploaded Java client needs one or the other
	}
	natsURL := "nats://127.0.0.1:" + strconv.Itoa(freePort(t))
	serveFlags := append([]string{"--nats-embedded", strings.TrimPrefix(natsURL, "nats://"), "--worker-timeout", "3s"}, flags...)
	db, data := filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data")
	s := startServer(t, bin, db, data, serveFlags...)
	// Each worker plays with its own credentials (issue 36), issued by the
	// admin; they outlive the server's restart below.
	secrets := map[string][]string{}
	workers := map[string]*workerProcess{}
	for _, name := range []string{"w1", "w2", "w3"} {
		var c struct{ Name, Secret string }
		s.call(t, "POST", "/api/workers/credentials", strings.NewReader(`{"name":"`+name+`"}`), "application/json", &c)
		secrets[name] = []string{"TAIKAI_WORKER_SECRET=" + c.Secret}
		workers[name] = startWorker(t, secrets[name], bin, natsURL, name, filepath.Join(dir, "worker-"+name), flags...)
	}

	// Engines: the classroom Java client uploaded as files (its directory
	// goes to the workers by content), compiled here once: `java
	// OthelloClient.java` would compile it again in each of its 30 games;
	// two built-ins, and alpha-beta given as a command that thinks 20 ms a
	// move.
	classes := testkit.JavaClasses(t, "../../engines/testdata/clients/OthelloClient.java")
	java := upload(t, s, `{"name":"seed-000","game":"othello","protocol":"othello-board","command":"java OthelloClient {host}","port":46000}`,
		map[string][]byte{"OthelloClient.java": mustRead(t, filepath.Join(classes, "OthelloClient.java")), "OthelloClient.class": mustRead(t, filepath.Join(classes, "OthelloClient.class"))})
	greedy := s.postJSON(t, "/api/engines", `{"name":"greedy","game":"othello","builtin":"othello-greedy"}`)
	random := s.postJSON(t, "/api/engines", `{"name":"random","game":"othello","builtin":"othello-random"}`)
	ab := s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":"alphabeta","game":"othello","command":[%q,"engine","othello-alphabeta","--host","{host}","--port","{port}","--time-ms","20"]}`, bin))
	// Most of the Java client's games end at its known stall (PUT 0 0, then
	// silence), which waits out a move's time: 1 s, not 5.
	tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(
		`{"name":"cluster","game":"othello","engines":[%d,%d,%d,%d],"games_per_pair":10,"move_time_ms":1000,"concurrency":3,"start":true}`,
		java, greedy, random, ab))

	// w1 is killed mid-game twice, started again after each.
	var lost []int64
	// Both kills first, then which of them came mid-game (waiting on the
	// first before the second kill let the tournament end before the
	// server's kill below).
	for kills := 0; len(lost) < 2; {
		var ids []int64
		for len(lost)+len(ids) < 2 {
			if kills++; kills > 6 {
				t.Fatalf("%d kills, %d of them mid-game: want 2", kills-1, len(lost))
			}
			// Two games played again: not the same one killed twice.
			ids = append(ids, killMidGame(t, s, workers["w1"], slices.Concat(lost, ids)...))
			workers["w1"] = startWorker(t, secrets["w1"], bin, natsURL, "w1", filepath.Join(dir, "worker-w1"), flags...)
		}
		for _, id := range ids {
			if interrupted(t, s, id) {
				lost = append(lost, id)
			}
		}
	}
	// Both lost games are played again from the start and finish before
	// the server is killed.
	for _, id := range lost {
		if !waitFor(3*time.Minute, func() bool {
			var g clusterGame
			s.call(t, "GET", fmt.Sprintf("/api/games/%d", id), nil, "", &g)
			return g.Status != "running"
		}) {
			t.Fatalf("game %d, lost with its worker, not played again", id)
		}
		var g clusterGame
		s.call(t, "GET", fmt.Sprintf("/api/games/%d", id), nil, "", &g)
		if g.Status != "finished" || g.Attempt < 2 || g.Worker == "" {
			t.Errorf("game %d lost with w1: %+v, want finished by a worker at attempt 2 or more", id, g)
		}
	}
	var ws workersAnswer
	s.call(t, "GET", "/api/workers", nil, "", &ws)
	if !ws.Cluster || ws.Redelivered < 2 {
		t.Errorf("/api/workers %+v: want at least two games played again", ws)
	}
	if _, body := s.do(t, "GET", "/metrics", "", nil); !strings.Contains(string(body), "taikai_games_redelivered_total") {
		t.Error("/metrics has no taikai_games_redelivered_total")
	}

	// The server (and its embedded NATS) is killed mid-tournament and
	// started again on the same database and data.
	var tr tournamentJSON
	s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, "", &tr)
	if tr.Status == "finished" {
		t.Fatal("the tournament finished before the server could be killed; make it longer")
	}
	s.stop(t, syscall.SIGKILL)
	t.Logf("server killed at %d/%d finished games", tr.FinishedGames, tr.TotalGames)
	s = startServer(t, bin, db, data, serveFlags...)

	tr = s.waitFinished(t, tid, 8*time.Minute)
	if tr.TotalGames != 60 || tr.FinishedGames != 60 {
		t.Fatalf("tournament %+v, want 60 of 60 games", tr)
	}
	games := finishedGames(t, s, tid)
	playedOnce(t, tr.TotalGames, games, func(g apiGame) {
		if g.Status != "finished" {
			return
		}
		var cg clusterGame
		s.call(t, "GET", fmt.Sprintf("/api/games/%d", *g.ID), nil, "", &cg)
		if cg.Worker == "" || cg.Attempt < 1 {
			t.Errorf("game %d: worker %q attempt %d, want played by a worker", cg.ID, cg.Worker, cg.Attempt)
		}
		if r := deref(cg.Reason); r == "no_connect" || r == "crash" {
			t.Errorf("game %d (%s vs %s) ended by %s: an engine did not run on its worker", cg.ID, g.Black.Name, g.White.Name, r)
		}
	})
	checkStandings(t, s, tid, games)
	// Engine logs come back with the results.
	last := games[len(games)-1]
	if code := s.call(t, "GET", fmt.Sprintf("/api/games/%d/log/black", *last.ID), nil, "", nil); code != 200 {
		t.Errorf("game %d: black's log: %d", *last.ID, code)
	}
	s.call(t, "GET", "/api/workers", nil, "", &ws)
	if len(ws.Workers) != 3 {
		t.Errorf("workers after the restart: %+v, want w1, w2, w3", ws.Workers)
	}
	for _, w := range workers {
		w.stop(t, syscall.SIGTERM)
		if code := w.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("worker %s exit %d after SIGTERM:\n%s", w.name, code, w.logs())
		}
	}
	s.stop(t, syscall.SIGTERM)
	if t.Failed() {
		t.Logf("server:\n%s", s.logs())
		for _, w := range workers {
			t.Logf("worker %s:\n%s", w.name, w.logs())
		}
	}
}
