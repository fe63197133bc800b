package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/internal/testkit"
)

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
