package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/internal/testkit"
)

// --demo starts a round robin per game at once; /metrics counts the games and
// labels HTTP requests by route pattern; SIGTERM aborts the running games
// cleanly, and after a restart they are played again.
func TestDemoMetricsAndGracefulRestart(t *testing.T) {
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	db, data := filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data")
	s := startServer(t, bin, db, data, "--demo")
	var list struct {
		Tournaments []struct {
			ID            int64
			Name, Status  string
			FinishedGames int64 `json:"finished_games"`
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.call(t, "GET", "/api/tournaments", nil, "", &list)
		done := int64(0)
		for _, tr := range list.Tournaments {
			done += tr.FinishedGames
		}
		if len(list.Tournaments) == len(demoFields) && done >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("demo: %+v after 60s\n%s", list, s.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	names := map[string]bool{}
	for _, tr := range list.Tournaments {
		names[tr.Name] = tr.Status == "running"
		s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d", tr.ID), nil, "", &struct{}{})
	}
	if !names["Demo: othello"] || !names["Demo: gomoku"] || !names["Demo: checkers"] {
		t.Fatalf("demo tournaments %v, want one running per game", names)
	}
	res, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`taikai_games_total{game=`, `taikai_games_running`, `taikai_moves_total`, `taikai_timeouts_total`,
		`taikai_http_requests_total{code="200",method="GET",route="/api/tournaments/{id}"}`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(metrics), `route="/api/tournaments/1"`) {
		t.Errorf("/metrics labels a raw path")
	}

	// SIGTERM: games in progress are aborted and stored as such.
	s.stop(t, syscall.SIGTERM)
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d after SIGTERM\n%s", code, s.logs())
	}
	if !strings.Contains(s.logs(), "aborting running games") {
		t.Errorf("no shutdown log line:\n%s", s.logs())
	}
	// Restarting with --demo again does not start more demo tournaments, and the
	// aborted games are played again.
	s = startServer(t, bin, db, data, "--demo")
	waitLog(t, s, "demo tournament not started", 2)
	s.call(t, "GET", "/api/tournaments", nil, "", &list)
	if len(list.Tournaments) != len(demoFields) {
		t.Errorf("%d tournaments after a restart with --demo, want still %d", len(list.Tournaments), len(demoFields))
	}
	aborted := 0
	for _, tr := range list.Tournaments {
		var games struct {
			Games []struct {
				ID     *int64
				Index  int64
				Status string
			}
		}
		s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d/games?status=aborted", tr.ID), nil, "", &games)
		aborted += len(games.Games)
	}
	if aborted == 0 {
		t.Errorf("no aborted game after SIGTERM during demo play")
	}
	t.Logf("%d games were aborted by SIGTERM and will be replayed", aborted)

	// One demo per game, ever: not even a cancelled (or finished) demo is
	// started again by a restart with --demo.
	for _, tr := range list.Tournaments {
		// The answer is the tournament once its running games are aborted
		// (issue 16, item 12: it said running_games 2 with status cancelled).
		var got struct {
			Status       string
			RunningGames *int `json:"running_games"`
		}
		if code := s.call(t, "POST", fmt.Sprintf("/api/tournaments/%d/cancel", tr.ID), nil, "", &got); code != http.StatusOK {
			t.Fatalf("cancel %d: %d", tr.ID, code)
		}
		if got.Status != "cancelled" || got.RunningGames == nil || *got.RunningGames != 0 {
			n := -1
			if got.RunningGames != nil {
				n = *got.RunningGames
			}
			t.Errorf("cancel %d answered status %q, running_games %d; want cancelled with none running", tr.ID, got.Status, n)
		}
	}
	s.stop(t, syscall.SIGTERM)
	s = startServer(t, bin, db, data, "--demo")
	waitLog(t, s, "demo tournament not started", 2)
	s.call(t, "GET", "/api/tournaments", nil, "", &list)
	if len(list.Tournaments) != len(demoFields) {
		t.Errorf("%d tournaments after the demos were cancelled and the server restarted with --demo, want still %d: %+v", len(list.Tournaments), len(demoFields), list.Tournaments)
	}
}

// waitLog waits until the server has logged a line containing text n times:
// the server answers HTTP before its start-up (the demo) is done.
func waitLog(tb testing.TB, s *serverProcess, text string, n int) {
	tb.Helper()
	for deadline := time.Now().Add(30 * time.Second); strings.Count(s.logs(), text) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("no %d log lines %q within 30s:\n%s", n, text, s.logs())
		}
	}
}

// Deleting an engine hides it but keeps its games and standings, and frees its
// name.
func TestDeleteEngineKeepsHistory(t *testing.T) {
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	s := startServer(t, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"))
	a := s.postJSON(t, "/api/engines", `{"name":"a","game":"gomoku","builtin":"gomoku-threat"}`)
	b := s.postJSON(t, "/api/engines", `{"name":"b","game":"gomoku","builtin":"gomoku-random"}`)
	tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"g","game":"gomoku","rule":"renju","size":11,"engines":[%d,%d],"move_time_ms":300,"start":true}`, a, b))
	s.waitFinished(t, tid, 2*time.Minute)
	if code := s.call(t, "DELETE", fmt.Sprintf("/api/engines/%d", b), nil, "", nil); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	var engines struct{ Engines []struct{ Name string } }
	s.call(t, "GET", "/api/engines", nil, "", &engines)
	if len(engines.Engines) != 1 || engines.Engines[0].Name != "a" {
		t.Errorf("engines after delete: %+v", engines)
	}
	var st struct{ Standings []apiStanding }
	s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d/standings", tid), nil, "", &st)
	if len(st.Standings) != 2 {
		t.Errorf("standings after delete: %+v", st)
	}
	games := finishedGames(t, s, tid)
	if len(games) != 2 || games[0].Black.Name == "" {
		t.Errorf("games after delete: %+v", games)
	}
	s.postJSON(t, "/api/engines", `{"name":"b","game":"gomoku","builtin":"gomoku-random"}`)
}

// A tiny `taikai bench` run prints every figure the tools read.
func TestBenchTiny(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"bench", "--scale", "0.02", "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	for _, k := range []string{"games_per_sec", "games_per_sec_c2", "spawn_floor_games_per_sec", "throughput_ratio",
		"false_timeouts", "clock_moves", "false_timeouts_read_time", "clock_moves_read_time", "clock_concurrency",
		"timeout_flag_p50_ms", "timeout_flag_p99_ms", "timeout_samples", "stored_games_per_sec", "bytes_per_game"} {
		v, ok := got[k].(float64)
		if !ok {
			t.Errorf("no number %s in %s", k, stdout.String())
			continue
		}
		if !strings.HasPrefix(k, "false_timeouts") && v <= 0 {
			t.Errorf("%s = %v", k, v)
		}
	}
	if got["clock_concurrency"] != float64(2*runtime.NumCPU()) {
		t.Errorf("clock_concurrency = %v, want twice the %d cores", got["clock_concurrency"], runtime.NumCPU())
	}
	// The per-move turnaround is retired (docs/PERFORMANCE.md).
	for _, k := range []string{"turnaround_p50_us", "bare_roundtrip_us", "hub_turnaround_p50_us", "baseline_disturbed"} {
		if _, ok := got[k]; ok {
			t.Errorf("retired key %s in %s", k, stdout.String())
		}
	}
	if got["affinity"] != false {
		t.Errorf("affinity = %v without flags", got["affinity"])
	}
	ws, _ := got["workers"].([]any)
	if len(ws) != len(benchWorkerCounts) {
		t.Fatalf("workers figures %v, want one per worker count %v", got["workers"], benchWorkerCounts)
	}
	for i, w := range ws {
		f, _ := w.(map[string]any)
		if f["workers"] != float64(benchWorkerCounts[i]) || f["games_per_sec"].(float64) <= 0 || f["serve_games_per_sec"].(float64) <= 0 {
			t.Errorf("workers figures %v", f)
		}
	}
}

// --only runs the named parts and nothing else; an unknown part is refused by
// name before anything runs.
func TestBenchOnly(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"bench", "--only", "overhead,nope"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), `--only: unknown part "nope"`) {
		t.Fatalf("exit %d, stderr %q; want 2 naming the part", code, stderr.String())
	}
	// A retired part is still accepted, says so, and measures nothing.
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"bench", "--only", "overhead", "--json"}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), `"overhead" is retired`) || stdout.Len() != 0 {
		t.Fatalf("--only overhead: exit %d, stdout %q, stderr %q; want 0, nothing, and a note", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"bench", "--only", "storage", "--scale", "0.02", "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var got struct {
		BytesPerGame float64 `json:"bytes_per_game"`
		Turnaround   float64 `json:"turnaround_p50_us"`
		GamesPerSec  float64 `json:"games_per_sec"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if got.BytesPerGame <= 0 || got.Turnaround != 0 || got.GamesPerSec != 0 {
		t.Errorf("--only storage: %s", stdout.String())
	}
	if strings.Contains(stderr.String(), "per-move overhead") {
		t.Errorf("--only storage ran other parts:\n%s", stderr.String())
	}

	// The clock part with every game on one CPU.
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"bench", "--only", "clock", "--affinity", "--scale", "0.02", "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var clock struct {
		Affinity      bool    `json:"affinity"`
		ClockMoves    int     `json:"clock_moves"`
		FlagP99       float64 `json:"timeout_flag_p99_ms"`
		FlagSamples   int     `json:"timeout_samples"`
		FalseTimeouts *int    `json:"false_timeouts"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &clock); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if !clock.Affinity || clock.ClockMoves < 20 || clock.FlagSamples < 10 || clock.FlagP99 <= 0 || clock.FalseTimeouts == nil {
		t.Errorf("--only clock --affinity: %s", stdout.String())
	}
}

// --cpuprofile writes a profile that go tool pprof reads.
func TestBenchCPUProfile(t *testing.T) {
	t.Parallel()
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"bench", "--only", "storage", "--scale", "0.05", "--cpuprofile", prof}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool pprof reads the profile: %v", err)
	}
	out, err := exec.Command(gotool, "tool", "pprof", "-top", prof).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "flat%") {
		t.Fatalf("go tool pprof -top %s: %v\n%s", prof, err, out)
	}
}

// Names that othello-move cannot send as registered (issue 16, item 3) reach
// the wire as plain words, and the game keeps both forms: the registered name
// and the one the opponent's client was sent.
func TestWireNamesStored(t *testing.T) {
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	s := startServer(t, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"), "--sandbox=off")
	num := s.postJSON(t, "/api/engines", `{"name":"6321120","game":"othello","builtin":"othello-random","protocol":"othello-move"}`)
	kw := s.postJSON(t, "/api/engines", `{"name":"WHITE","game":"othello","builtin":"othello-greedy","protocol":"othello-move"}`)
	plain := s.postJSON(t, "/api/engines", `{"name":"greedy","game":"othello","builtin":"othello-greedy","protocol":"othello-move"}`)
	tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(`{"name":"names","game":"othello","engines":[%d,%d,%d],"games_per_pair":1,"start":true}`, num, kw, plain))
	s.waitFinished(t, tid, 2*time.Minute)
	want := map[string]string{"6321120": "n6321120", "WHITE": "WHITE_", "greedy": ""}
	list := finishedGames(t, s, tid)
	if len(list) != 3 {
		t.Fatalf("%d games, want 3", len(list))
	}
	for _, g := range list {
		var full struct {
			Status       string
			Black, White struct {
				Name     string
				WireName *string `json:"wire_name"`
			}
		}
		s.call(t, "GET", fmt.Sprintf("/api/games/%d", *g.ID), nil, "", &full)
		if full.Status != "finished" {
			t.Errorf("game %d: %s", *g.ID, full.Status)
		}
		for _, p := range []struct {
			Name     string
			WireName *string
		}{{full.Black.Name, full.Black.WireName}, {full.White.Name, full.White.WireName}} {
			got := ""
			if p.WireName != nil {
				got = *p.WireName
			}
			if w, ok := want[p.Name]; !ok || got != w {
				t.Errorf("game %d: %q was sent as %q, want %q", *g.ID, p.Name, got, w)
			}
		}
	}
}

// The README's way to get a binary and to open the dashboard to a classroom's
// LAN (issue 16, item 19) works as written: its build command builds a
// taikai, and `serve --addr 0.0.0.0:PORT` serves the dashboard and the public
// API on this machine's network address, while writes still need the token.
func TestReadmeBinaryAndLAN(t *testing.T) {
	t.Parallel()
	readme := string(mustRead(t, "../../README.md"))
	if readmeBuild.FindStringSubmatch(readme) == nil {
		t.Fatal("README: no `go build -o taikai ./cmd/taikai` to get a binary")
	}
	lan := regexp.MustCompile("`taikai serve --addr 0\\.0\\.0\\.0:(\\d+)`").FindStringSubmatch(readme)
	if lan == nil {
		t.Fatal("README: no `taikai serve --addr 0.0.0.0:PORT` for a classroom's LAN")
	}
	if !regexp.MustCompile(`(?s)0\.0\.0\.0:\d+.{0,400}admin token`).MatchString(readme) {
		t.Error("README: the LAN instructions say nothing of the admin token")
	}
	// The binary every test here runs is built with the README's command,
	// at the top of the checkout (see taikaiBinary).
	bin := taikaiBinary(t)

	// The LAN command, on a free port.
	dir := t.TempDir()
	s := startServer(t, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"), "--addr", "0.0.0.0:0")
	h, port, err := net.SplitHostPort(strings.TrimPrefix(s.url, "http://"))
	if err != nil || !net.ParseIP(strings.Trim(h, "[]")).IsUnspecified() {
		t.Fatalf("serve --addr 0.0.0.0:0 serves at %s, not on every interface (%v)", s.url, err)
	}
	host := "127.0.0.1"
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() {
				host = ip.IP.String() // what a student's laptop would dial
				break
			}
		}
	}
	if host == "127.0.0.1" && os.Getenv("CI") == "true" {
		t.Fatal("no network address but loopback on this machine: cannot check what a LAN would reach")
	}
	base := "http://" + net.JoinHostPort(host, port)
	t.Logf("the dashboard as a LAN reaches it: %s", base)
	client := &http.Client{Timeout: 30 * time.Second}
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/", http.StatusOK},
		{"GET", "/api/tournaments", http.StatusOK},
		{"POST", "/api/engines", http.StatusUnauthorized}, // no token
	} {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(`{}`))
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s%s: %v", c.method, base, c.path, err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("%s %s%s: %d, want %d", c.method, base, c.path, res.StatusCode, c.want)
		}
	}
}

// What real community engines tripped on (issue 38), through the real
// server and its API: spec-written engines that behave as the real ones do
// play the built-ins in two round robins, and every game ends on the board
// (normal), none by flood, time at the first move, or disconnect (a later
// move's time loss, a Python engine run late on a loaded machine, is logged):
//   - "ntest": NTest's thinking output (a 60-line banner, 24 lines a move)
//     and a 2.5 s start-up reading its files;
//   - "edax": a fixed-depth searcher that ignores its clock, as Edax does
//     (250 ms a move at the default depth for 1 s a move, 32 times longer at
//     depth 12, forever at the old default 60);
//   - "rapfi": a brain that takes 2.5 s in START (loading its weights) and
//     prints MESSAGEs before each move.
//
// (In serve_test.go's last place: Go starts a package's paused parallel
// tests about last-paused first, and this one, 23 s of waiting on its
// stand-ins' start-ups and depths for 6 s of CPU, ended the package's run
// from interop_test.go, started 39 s in.)
func TestServeCommunityEngines(t *testing.T) {
	t.Parallel()
	python := testkit.Python(t) // skipped without it, except under CI=true
	clients, err := filepath.Abs("../../engines/testdata/clients")
	if err != nil {
		t.Fatal(err)
	}
	bin := taikaiBinary(t)
	dir := t.TempDir()
	// The spec engines are the project's own test programs, run as commands:
	// unsandboxed (a sandbox shows an engine only an uploaded directory).
	s := startServer(t, bin, filepath.Join(dir, "t.db"), filepath.Join(dir, "data"), "--sandbox", "off")
	engine := func(name, game, proto, script string, env ...string) int64 {
		cmd := append(append([]string{"env"}, env...), python, filepath.Join(clients, script))
		q := make([]string, len(cmd))
		for i, a := range cmd {
			q[i] = fmt.Sprintf("%q", a)
		}
		return s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":%q,"game":%q,"protocol":%q,"command":[%s]}`, name, game, proto, strings.Join(q, ",")))
	}
	builtin := func(name, proto string) int64 {
		return s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":%q,"game":%q,"builtin":%q,"protocol":%q}`, name, strings.Split(name, "-")[0], name, proto))
	}
	// The stand-ins wait rather than compute (their start-ups, edax-like's
	// depth), so their games are played four and three at a time: at two,
	// the test was 35 s of waiting.
	ntest := engine("ntest-like", "othello", "nboard", "nboard_engine.py", "THINK=ntest", "STARTUP_MS=2500")
	edax := engine("edax-like", "othello", "nboard", "nboard_engine.py", "DEPTH_MS=8000", "STYLE=edax")
	rapfi := engine("rapfi-like", "gomoku", "pbrain", "pbrain_brain.py", "STARTUP_MS=2500", "MESSAGES=2")
	othello := s.postJSON(t, "/api/tournaments", fmt.Sprintf(
		`{"name":"nboard","game":"othello","engines":[%d,%d,%d,%d],"games_per_pair":2,"move_time_ms":1000,"concurrency":4,"start":true}`,
		ntest, edax, builtin("othello-alphabeta", "nboard"), builtin("othello-greedy", "othello-board")))
	gomoku := s.postJSON(t, "/api/tournaments", fmt.Sprintf(
		`{"name":"pbrain","game":"gomoku","rule":"freestyle","engines":[%d,%d,%d],"games_per_pair":2,"move_time_ms":1000,"concurrency":3,"start":true}`,
		rapfi, builtin("gomoku-threat", "pbrain"), builtin("gomoku-random", "gomoku-turn")))
	for _, tid := range []int64{othello, gomoku} {
		tr := s.waitFinished(t, tid, 8*time.Minute)
		games := finishedGames(t, s, tid)
		if int64(len(games)) != tr.TotalGames || tr.FinishedGames != tr.TotalGames {
			t.Errorf("tournament %d: %d of %d games finished", tid, tr.FinishedGames, tr.TotalGames)
		}
		reasons := map[string]int{}
		for _, g := range games {
			reason := "none"
			if g.Reason != nil {
				reason = *g.Reason
			}
			reasons[reason]++
			if reason == "normal" || g.ID == nil {
				continue
			}
			var full struct {
				Plies int `json:"plies"`
			}
			_, body := s.do(t, "GET", fmt.Sprintf("/api/games/%d", *g.ID), "", nil)
			_ = json.Unmarshal(body, &full)
			if reason == "timeout" && full.Plies >= 2 {
				// Both had moved: not the start-up's time (what this test is
				// about), but a Python engine's 1 s move run late on a loaded
				// machine (edax-like thinks 250-400 ms a move here).
				t.Logf("tournament %d: %s vs %s ended by timeout at ply %d (a loaded machine: tolerated)", tid, g.Black.Name, g.White.Name, full.Plies+1)
				continue
			}
			// Say why: the game's cause and the tails of both engines' logs.
			detail := "\n" + testkit.Tail(string(body), 600)
			for _, c := range []string{"black", "white"} {
				_, log := s.do(t, "GET", fmt.Sprintf("/api/games/%d/log/%s", *g.ID, c), "", nil)
				detail += fmt.Sprintf("\n%s's log:\n%s", c, testkit.Tail(string(log), 1500))
			}
			t.Errorf("tournament %d: %s vs %s ended by %s after %d plies%s", tid, g.Black.Name, g.White.Name, reason, full.Plies, detail)
		}
		t.Logf("tournament %d: %d games, ends %v", tid, len(games), reasons)
	}
}
