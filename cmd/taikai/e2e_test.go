package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

type apiGame struct {
	ID    *int64
	Index int64
	Black struct {
		EngineID int64 `json:"engine_id"`
		Name     string
	}
	White struct {
		EngineID int64 `json:"engine_id"`
		Name     string
	}
	Status string
	Result *string
	Reason *string
	Moves  []struct {
		Ply   int
		Color string
		X, Y  *int
		Text  string
		MS    int64
		Auto  bool
	}
	Stones map[string]int
}

type apiStanding struct {
	EngineID int64 `json:"engine_id"`
	Name     string
	Games    int64
	Wins     int64
	Draws    int64
	Losses   int64
	Points   float64
}

// checkOthelloGame replays a stored game with the rules: every move legal,
// passes only when forced, and the result consistent with the reason and the
// final board.
func checkOthelloGame(t *testing.T, g apiGame) {
	t.Helper()
	b := othello.New()
	for _, m := range g.Moves {
		if m.Color != b.Turn().String() {
			t.Fatalf("game %d ply %d: %s moved, %v to move", *g.ID, m.Ply, m.Color, b.Turn())
		}
		s := othello.Pass
		if m.X != nil {
			s = othello.At(*m.X, *m.Y)
			if s.String() != m.Text {
				t.Errorf("game %d ply %d: text %q for %v", *g.ID, m.Ply, m.Text, s)
			}
		}
		if _, err := b.Play(s); err != nil {
			t.Fatalf("game %d ply %d: %v is illegal: %v", *g.ID, m.Ply, s, err)
		}
	}
	nb, nw := b.Count()
	if g.Stones["black"] != nb || g.Stones["white"] != nw {
		t.Errorf("game %d: stored stones %v, replay %d-%d", *g.ID, g.Stones, nb, nw)
	}
	result, reason := *g.Result, *g.Reason
	switch reason {
	case "normal":
		if !b.Over() || result != map[games.Color]string{othello.Black: "black", othello.White: "white", othello.Empty: "draw"}[b.Winner()] {
			t.Errorf("game %d: normal end with result %s, board over=%v %d-%d", *g.ID, result, b.Over(), nb, nw)
		}
	case "timeout":
		// The side to move ran out of time and lost.
		if b.Over() || result == b.Turn().String() || result == "draw" {
			t.Errorf("game %d: timeout with result %s, %v to move (over=%v)", *g.ID, result, b.Turn(), b.Over())
		}
	case "illegal", "disconnect", "close":
		if b.Over() || result == "draw" {
			t.Errorf("game %d: %s with result %s (over=%v)", *g.ID, reason, result, b.Over())
		}
	default:
		t.Errorf("game %d: unexpected reason %s", *g.ID, reason)
	}
}

// recount tallies standings from the games list.
func recount(games []apiGame) map[int64]*apiStanding {
	out := map[int64]*apiStanding{}
	get := func(id int64) *apiStanding {
		if out[id] == nil {
			out[id] = &apiStanding{EngineID: id}
		}
		return out[id]
	}
	for _, g := range games {
		if g.Status != "finished" {
			continue
		}
		b, w := get(g.Black.EngineID), get(g.White.EngineID)
		b.Games++
		w.Games++
		switch *g.Result {
		case "black":
			b.Wins++
			w.Losses++
			b.Points++
		case "white":
			w.Wins++
			b.Losses++
			w.Points++
		default:
			b.Draws++
			w.Draws++
			b.Points += 0.5
			w.Points += 0.5
		}
	}
	return out
}

func checkStandings(t *testing.T, s *serverProcess, tid int64, games []apiGame) {
	t.Helper()
	var st struct{ Standings []apiStanding }
	s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d/standings", tid), nil, "", &st)
	want := recount(games)
	if len(st.Standings) != len(want) {
		t.Fatalf("%d standings rows, %d engines played", len(st.Standings), len(want))
	}
	for i, r := range st.Standings {
		w := want[r.EngineID]
		if w == nil || r.Games != w.Games || r.Wins != w.Wins || r.Draws != w.Draws || r.Losses != w.Losses || r.Points != w.Points {
			t.Errorf("standings of %s: %+v, recount %+v", r.Name, r, w)
		}
		if i > 0 && r.Points > st.Standings[i-1].Points {
			t.Errorf("standings not best first: %+v", st.Standings)
		}
	}
}

func finishedGames(t *testing.T, s *serverProcess, tid int64) []apiGame {
	t.Helper()
	var list struct{ Games []apiGame }
	s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d/games?limit=5000", tid), nil, "", &list)
	return list.Games
}

// playedOnce checks a tournament's games as finishedGames lists them: each
// has an id, listed once, and each of the schedule's total indexes finished
// exactly once. each, if not nil, gets every game that has an id. It returns
// how many indexes finished.
func playedOnce(t *testing.T, total int64, games []apiGame, each func(apiGame)) int {
	t.Helper()
	finished := map[int64]int{}
	idSeen := map[int64]bool{}
	for _, g := range games {
		if g.ID == nil {
			t.Errorf("index %d never played", g.Index)
			continue
		}
		if idSeen[*g.ID] {
			t.Errorf("game id %d listed twice", *g.ID)
		}
		idSeen[*g.ID] = true
		if g.Status == "finished" {
			finished[g.Index]++
		}
		if each != nil {
			each(g)
		}
	}
	for k := range total {
		if finished[k] != 1 {
			t.Errorf("schedule index %d has %d finished games, want 1", k, finished[k])
		}
	}
	return len(finished)
}

// TestEndToEnd runs the real binary and drives it through the API alone: it
// uploads the classroom Java client as a file (fixed port 46000), registers two
// built-ins and an engine given as a command, runs a double round robin to the
// end, and checks every game, the standings and the crosstable.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	ciRequires(t, "java")
	bin := taikaiBinary(t)
	dir := t.TempDir()
	// Sandboxed (serve's default, auto) wherever the sandbox works; where it
	// cannot (no bwrap, not root), serve would refuse the uploaded engines,
	// so the test plays them unsandboxed, as before the sandbox.
	sandboxed := sandboxErr(t) == nil
	var flags []string
	if !sandboxed {
		flags = append(flags, "--sandbox=off")
	}
	s := startServer(t, bin, filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data"), flags...)

	// Upload the client unchanged, as a file.
	src, err := os.ReadFile("../../engines/testdata/clients/OthelloClient.java")
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	meta, _ := mw.CreateFormField("meta")
	meta.Write([]byte(`{"name":"seed-000","game":"othello","protocol":"othello-board","command":"java OthelloClient.java {host}","port":46000}`))
	fw, _ := mw.CreateFormFile("file", "OthelloClient.java")
	fw.Write(src)
	mw.Close()
	var java struct {
		ID    int64
		Files []string
	}
	s.call(t, "POST", "/api/engines", &body, mw.FormDataContentType(), &java)
	if len(java.Files) != 1 || java.Files[0] != "OthelloClient.java" {
		t.Fatalf("uploaded files %v", java.Files)
	}
	greedy := s.postJSON(t, "/api/engines", `{"name":"greedy","game":"othello","builtin":"othello-greedy"}`)
	random := s.postJSON(t, "/api/engines", `{"name":"random","game":"othello","builtin":"othello-random","protocol":"othello-move"}`)
	// A command engine with placeholders; it thinks 60 ms a move, not its
	// whole clock ({time_ms} is checked by the launcher's tests).
	cmdEngine := s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":"alphabeta-cmd","game":"othello","command":[%q,"engine","othello-alphabeta","--host","{host}","--port","{port}","--time-ms","60"]}`, bin))

	tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(
		`{"name":"e2e","game":"othello","engines":[%d,%d,%d,%d],"games_per_pair":2,"move_time_ms":400,"concurrency":2,"start":true}`,
		java.ID, greedy, random, cmdEngine))
	tr := s.waitFinished(t, tid, 5*time.Minute)
	if tr.TotalGames != 12 || tr.FinishedGames != 12 {
		t.Fatalf("tournament %+v, want 12 of 12 games", tr)
	}
	games := finishedGames(t, s, tid)
	seen := map[int64]bool{}
	for _, g := range games {
		if g.Status != "finished" {
			t.Errorf("game %v at index %d: %s", g.ID, g.Index, g.Status)
			continue
		}
		if seen[g.Index] {
			t.Errorf("index %d played twice", g.Index)
		}
		seen[g.Index] = true
		var full gameDetail
		s.call(t, "GET", fmt.Sprintf("/api/games/%d", *g.ID), nil, "", &full)
		checkOthelloGame(t, full.apiGame)
		// Wherever engines can be sandboxed, serve does it (--sandbox auto):
		// the classroom client and the built-ins play inside it.
		if sandboxed && (deref(full.Sandbox) != "on" || !full.Usage["black"].Sandboxed || !full.Usage["white"].Sandboxed) {
			t.Errorf("game %d (%s vs %s): sandbox %s, usage %+v", *g.ID, full.Black.Name, full.White.Name, deref(full.Sandbox), full.Usage)
		}
		if code := s.call(t, "GET", fmt.Sprintf("/api/games/%d/log/black", *g.ID), nil, "", nil); code != 200 {
			t.Errorf("game %d: black's log: %d", *g.ID, code)
		}
	}
	checkStandings(t, s, tid, games)

	// The crosstable agrees with the games.
	var ct struct {
		Engines []struct {
			EngineID int64 `json:"engine_id"`
		}
		Cells [][]*struct{ Games, Wins, Draws, Losses int64 }
	}
	s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d/crosstable", tid), nil, "", &ct)
	for i, row := range ct.Cells {
		for j, c := range row {
			if i == j {
				if c != nil {
					t.Errorf("crosstable diagonal %d is %+v", i, c)
				}
				continue
			}
			a, b := ct.Engines[i].EngineID, ct.Engines[j].EngineID
			var w, d, l int64
			for _, g := range games {
				switch {
				case g.Black.EngineID == a && g.White.EngineID == b:
					w, d, l = tally(*g.Result, "black", w, d, l)
				case g.White.EngineID == a && g.Black.EngineID == b:
					w, d, l = tally(*g.Result, "white", w, d, l)
				}
			}
			if c == nil || c.Wins != w || c.Draws != d || c.Losses != l || c.Games != 2 {
				t.Errorf("crosstable %d vs %d: %+v, games say %d/%d/%d", a, b, c, w, d, l)
			}
		}
	}
	s.stop(t, syscall.SIGTERM)
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("server exit %d after SIGTERM:\n%s", code, s.logs())
	}
}

func tally(result, as string, w, d, l int64) (int64, int64, int64) {
	switch result {
	case as:
		return w + 1, d, l
	case "draw":
		return w, d + 1, l
	}
	return w, d, l + 1
}

// TestCrashRestart SIGKILLs the server in the middle of a tournament several
// times at random moments. After each restart the tournament goes on; at the
// end every schedule index has exactly one finished game, no game id is
// duplicated, and the standings equal a recount of the games.
func TestCrashRestart(t *testing.T) {
	t.Parallel()
	bin := taikaiBinary(t)
	dir := t.TempDir()
	db, data := filepath.Join(dir, "taikai.db"), filepath.Join(dir, "data")
	s := startServer(t, bin, db, data)
	var ids []int64
	// Instant built-ins, paced 2 ms a move (outside the clocks): games last
	// long enough for the kills to land mid-game while the engines use next
	// to no CPU (with alpha-beta thinking 20 ms a move, the test took 6.3 s
	// of CPU, against 1.2-1.5 s, for the same wall time).
	for _, b := range []string{"othello-random", "othello-greedy", "othello-random"} {
		ids = append(ids, s.postJSON(t, "/api/engines", fmt.Sprintf(`{"name":"%s-%d","game":"othello","builtin":%q}`, b, len(ids), b)))
	}
	tid := s.postJSON(t, "/api/tournaments", fmt.Sprintf(
		`{"name":"crash","game":"othello","engines":[%d,%d,%d],"games_per_pair":20,"move_time_ms":40,"pace_ms":2,"concurrency":2,"start":true}`, ids[0], ids[1], ids[2]))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	kills := 0
	for kills < 4 {
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		var tr tournamentJSON
		s.call(t, "GET", fmt.Sprintf("/api/tournaments/%d", tid), nil, "", &tr)
		if tr.Status == "finished" {
			break
		}
		pid := s.cmd.Process.Pid
		s.stop(t, syscall.SIGKILL)
		kills++
		t.Logf("kill %d at %d/%d finished games", kills, tr.FinishedGames, tr.TotalGames)
		left := waitNoEngines(t, bin, pid)
		s = startServer(t, bin, db, data)
		if len(left) > 0 {
			// A server killed while an engine's sandbox was being set up
			// leaves that engine to the next start, whose Sweep kills what
			// is left in the dead server's cgroups (docs/SANDBOX.md).
			t.Logf("kill %d: engines %v of the killed server were left to the next start", kills, left)
			waitGone(t, left)
		}
	}
	if kills < 4 {
		t.Fatalf("the tournament finished after %d kills; make it longer", kills)
	}
	tr := s.waitFinished(t, tid, 5*time.Minute)
	games := finishedGames(t, s, tid)
	aborted := 0
	finished := playedOnce(t, tr.TotalGames, games, func(g apiGame) {
		switch g.Status {
		case "finished":
		case "aborted":
			aborted++
		default:
			t.Errorf("game %d: status %s after the tournament finished", *g.ID, g.Status)
		}
	})
	if int64(finished) != tr.TotalGames || tr.FinishedGames != tr.TotalGames {
		t.Errorf("%d indexes finished, finished_games %d, schedule %d", finished, tr.FinishedGames, tr.TotalGames)
	}
	checkStandings(t, s, tid, games)
	t.Logf("%d kills; %d games interrupted and played again", kills, aborted)
}

// waitNoEngines waits up to 10 s for the engines of a killed server to die
// with it, and returns those that did not, after describing them.
func waitNoEngines(t *testing.T, bin string, serverPid int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Only the killed server's: tests that run beside this one have
		// engines of their own.
		left := slices.DeleteFunc(enginesOf(bin), func(pid int) bool { return !engineOf(pid, bin, serverPid) })
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
				cgroup, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
				t.Logf("engine %d outlived the killed server %d:\n%s%s", pid, serverPid, status, cgroup)
			}
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitGone fails the test unless the processes are gone within 10 s.
func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("engine %d of a killed server outlived the next start too", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// engineOf reports whether engine process pid was started by the server
// serverPid: a sandboxed engine is in that server's cgroups (named
// taikai/<server pid>-...); an unsandboxed one was its child, and is not the
// child of another server that still runs.
func engineOf(pid int, bin string, serverPid int) bool {
	cgroup, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if i := strings.Index(string(cgroup), "/taikai/"); i >= 0 {
		return strings.Contains(string(cgroup), fmt.Sprintf("/taikai/%d-", serverPid))
	}
	stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return true
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return true
	}
	ppid, _ := strconv.Atoi(f[1])
	if ppid == serverPid {
		return true
	}
	parent, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ppid))
	args := strings.Split(string(parent), "\x00")
	return !(len(args) > 1 && args[0] == bin && args[1] == "serve")
}

// enginesOf lists live `<bin> engine ...` processes.
func enginesOf(bin string) []int {
	var pids []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 1 && args[0] == bin && args[1] == "engine" {
			stat, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				continue
			}
			pids = append(pids, pid)
		}
	}
	return pids
}
