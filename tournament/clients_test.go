package tournament_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"

	"github.com/taikai-dev/taikai/internal/testkit"
)

// checkClient fails the test unless the test client at seat i exited cleanly:
// the clients exit non-zero with "PROTOCOL VIOLATION" when the server breaks the
// protocol text they were written from.
func checkClient(t *testing.T, p *tournament.Played, i int, what string) {
	t.Helper()
	log, _ := os.ReadFile(p.Logs[i])
	if p.Exits[i] != "exit status 0" || strings.Contains(string(log), "PROTOCOL VIOLATION") {
		t.Fatalf("%s: client exited %q:\n%s", what, p.Exits[i], tail(string(log), 2000))
	}
}

func tail(s string, n int) string { return testkit.Tail(s, n) }

// clientRunner is newRunner for the games whose clients checkClient checks:
// each must exit by itself after the game, which a busy machine may take
// more than newRunner's half second to let a Python client do. A client
// that exits is not waited for longer; one that does not fails anyway.
func clientRunner(tb testing.TB) *tournament.Runner {
	r := newRunner(tb)
	r.Launcher.ExitGrace = 5 * time.Second
	return r
}

// Two gomoku-turn clients written from the protocol text, started as
// `client ADDRESS PORT -b|-w` (one in C using get bin, one in Python using get
// text), play full games against both built-in engines on 15x15 and 16x16 with
// both colours; each client checks every put reply and every board.
func TestGomokuClientsFromSpec(t *testing.T) {
	t.Parallel()
	gcc := ciRequires(t, "gcc")
	python := ciRequires(t, "python3")
	dir := clientsDir(t)
	bin := filepath.Join(t.TempDir(), "gomoku_bin")
	if out, err := exec.Command(gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-o", bin, filepath.Join(dir, "gomoku_bin.c")).CombinedOutput(); err != nil {
		t.Fatalf("compile gomoku_bin.c: %v\n%s", err, out)
	}
	clients := []engines.Engine{
		{Name: "c-bin", Game: "gomoku", Protocol: "gomoku-turn", Command: []string{bin, "{host}", "{port}", "{colorflag}"}},
		{Name: "py-text", Game: "gomoku", Protocol: "gomoku-turn", Command: []string{python, filepath.Join(dir, "gomoku_text.py"), "{host}", "{port}", "{colorflag}"}},
	}
	r := clientRunner(t)
	id := int64(0)
	for _, client := range clients {
		for _, opp := range []string{"gomoku-random", "gomoku-threat"} {
			for _, size := range []int{15, 16} {
				for _, clientBlack := range []bool{true, false} {
					id++
					spec := tournament.GameSpec{ID: id, Black: client, White: builtinEngine(opp, ""), LogDir: t.TempDir(), Seed: uint64(id),
						Settings: tournament.Settings{Game: "gomoku", Size: size, MoveTimeMS: 2000}}
					c := 0
					if !clientBlack {
						spec.Black, spec.White, c = spec.White, spec.Black, 1
					}
					p := play(t, r, spec)
					what := client.Name + " vs " + opp
					if p.Outcome.Reason != games.ReasonNormal {
						log, _ := os.ReadFile(p.Logs[c])
						t.Fatalf("%s on %dx%d: ended %+v (%s)\n%s", what, size, size, p.Outcome, p.Detail, tail(string(log), 2000))
					}
					checkClient(t, p, c, what)
					t.Logf("%s as %s on %dx%d: %s after %d moves", what, []string{"black", "white"}[c], size, size, p.Result(), len(p.Moves))
				}
			}
		}
	}
}

// The othello-move client written from the grammar plays every built-in
// Othello engine with both colours; it checks every ACK, every relayed MOVE,
// the passes, END and BYE against its own board.
func TestOthelloMoveClientFromSpec(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	client := engines.Engine{Name: "py-move", Game: "othello", Protocol: "othello-move",
		Command: []string{python, filepath.Join(clientsDir(t), "othello_move.py"), "-H", "{host}", "-p", "{port}", "-n", "{name}"}}
	r := clientRunner(t)
	set := tournament.Settings{Game: "othello", TotalTimeMS: 5000}
	passes, id := 0, int64(0)
	for _, opp := range []string{"othello-random", "othello-greedy", "othello-alphabeta"} {
		for _, clientBlack := range []bool{true, false} {
			for range 2 {
				id++
				spec := tournament.GameSpec{ID: id, Black: client, White: quickBuiltin(t, opp, "othello-move", 50), Settings: set, LogDir: t.TempDir()}
				c := 0
				if !clientBlack {
					spec.Black, spec.White, c = spec.White, spec.Black, 1
				}
				p := play(t, r, spec)
				if p.Outcome.Reason != games.ReasonNormal {
					log, _ := os.ReadFile(p.Logs[c])
					var ms []string
					for _, m := range p.Moves {
						ms = append(ms, fmt.Sprintf("%s:%v", games.Text("othello", m.Move), m.Elapsed))
					}
					t.Fatalf("vs %s: ended %+v (%s)\n%s\nserver times: %v", opp, p.Outcome, p.Detail, tail(string(log), 600), ms)
				}
				checkClient(t, p, c, "py-move vs "+opp)
				n := len(p.Moves)
				if n < 2 || !p.Moves[n-1].Pass || !p.Moves[n-2].Pass {
					t.Errorf("vs %s: a normal game must end with two passes, moves end %+v", opp, p.Moves[max(0, n-2):])
				}
				for _, m := range p.Moves[:n-2] {
					if m.Pass {
						passes++
					}
				}
				if p.Nicks[c] != "py-move" {
					t.Errorf("OPEN name %q, want py-move", p.Nicks[c])
				}
			}
		}
	}
	t.Logf("%d games, %d forced passes before the final two", id, passes)
}

// The same client misbehaving on purpose: each fault ends the game with the
// right reason, and the client (which checks the END it gets) exits cleanly.
func TestOthelloMoveClientFaults(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := clientRunner(t)
	for i, tc := range []struct {
		fault, reason string
		total         int64
	}{
		{"illegal", games.ReasonIllegal, 20000},
		{"badpass", games.ReasonIllegal, 20000},
		{"garbage", games.ReasonIllegal, 20000},
		{"close", games.ReasonDisconnect, 20000},
		{"giveup", games.ReasonResign, 20000},
		{"slow", games.ReasonTimeout, 1500},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			client := engines.Engine{Name: "py-" + tc.fault, Game: "othello", Protocol: "othello-move",
				Command: []string{"env", "FAULT=" + tc.fault, "FAULT_AT=2", "FAULT_SLEEP_MS=2500", python, filepath.Join(clientsDir(t), "othello_move.py"), "-H", "{host}", "-p", "{port}", "-n", "{name}"}}
			spec := tournament.GameSpec{ID: int64(i + 1), Black: client, White: builtinEngine("othello-greedy", "othello-move"), LogDir: t.TempDir(),
				Settings: tournament.Settings{Game: "othello", TotalTimeMS: tc.total, ByoyomiMS: 100}}
			p := play(t, r, spec)
			if p.Outcome.Reason != tc.reason || p.Outcome.Winner != games.White {
				log, _ := os.ReadFile(p.Logs[0])
				t.Fatalf("fault %s: outcome %+v, want black loses by %s\n%s", tc.fault, p.Outcome, tc.reason, tail(string(log), 2000))
			}
			checkClient(t, p, 0, "fault "+tc.fault)
		})
	}
}
