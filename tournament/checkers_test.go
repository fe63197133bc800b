package tournament_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/internal/testkit"
	"github.com/taikai-dev/taikai/tournament"
)

func checkersClient(t *testing.T, python, fault string) engines.Engine {
	cmd := []string{python, filepath.Join(clientsDir(t), "checkers_board.py"), "{host}", "{port}"}
	if fault != "" {
		cmd = append([]string{"env", "FAULT=" + fault, "FAULT_AT=2"}, cmd...)
	}
	return engines.Engine{Name: "py-checkers", Game: "checkers", Protocol: "checkers-board", Command: cmd}
}

// The checkers-board client written from PROTOCOLS.md §4 plays every
// built-in with both colours under both rule sets over real TCP; it checks
// every LAST, BOARD and TURN against its own board and END against its own
// scores.
func TestCheckersClientFromSpec(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := clientRunner(t)
	id := int64(0)
	captures := 0
	for _, rule := range []string{"seed", "english"} {
		for _, opp := range []string{"checkers-random", "checkers-minimax", "checkers-alphabeta"} {
			for _, clientBlack := range []bool{true, false} {
				id++
				client := checkersClient(t, python, "")
				client.Command = append([]string{"env", fmt.Sprintf("TAIKAI_SEED=%d", id)}, client.Command...)
				spec := tournament.GameSpec{ID: id, Black: client, White: quickBuiltin(t, opp, "", 50), LogDir: t.TempDir(),
					Settings: tournament.Settings{Game: "checkers", Rule: rule, MoveTimeMS: 5000}}
				c := 0
				if !clientBlack {
					spec.Black, spec.White, c = spec.White, spec.Black, 1
				}
				p := play(t, r, spec)
				what := fmt.Sprintf("%s vs %s (%s)", client.Name, opp, rule)
				if p.Outcome.Reason != games.ReasonNormal {
					log, _ := os.ReadFile(p.Logs[c])
					t.Fatalf("%s: ended %+v (%s)\n%s", what, p.Outcome, p.Detail, tail(string(log), 2000))
				}
				checkClient(t, p, c, what)
				for _, m := range p.Moves {
					if len(m.Path) > 0 && (m.Path[0].Y-m.Y == 2 || m.Y-m.Path[0].Y == 2) {
						captures++
					}
				}
				if p.Nicks[c] != "py-checkers" {
					t.Errorf("%s: NICK %q, want py-checkers", what, p.Nicks[c])
				}
				t.Logf("%s as %s: %s after %d plies", what, []string{"black", "white"}[c], p.Result(), len(p.Moves))
			}
		}
	}
	if captures == 0 {
		t.Error("no capture in any game: the client's checks saw too little")
	}
}

// The same client misbehaving on purpose: each fault ends the game with the
// right reason, and the client (which checks each ERROR number and END) exits
// cleanly.
func TestCheckersClientFaults(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := clientRunner(t)
	for i, tc := range []struct {
		fault, reason, cause string
	}{
		{"silent", games.ReasonTimeout, ""},
		{"garbage", games.ReasonIllegal, games.CauseMaxErrors},
		{"illegal", games.ReasonIllegal, games.CauseMaxErrors},
		{"nocapture", games.ReasonIllegal, games.CauseMaxErrors},
		{"drop", games.ReasonDisconnect, ""},
		{"crash", games.ReasonCrash, ""},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			for _, faultIsBlack := range []bool{true, false} {
				fault := checkersClient(t, python, tc.fault)
				// The random opponent soon offers captures (nocapture waits for one).
				other := builtinEngine("checkers-random", "")
				spec := tournament.GameSpec{ID: int64(10*i + 1), Black: fault, White: other, LogDir: t.TempDir(), Seed: 3,
					Settings: tournament.Settings{Game: "checkers", MoveTimeMS: 1500, ConnectMS: 10000}}
				loser, c := games.Black, 0
				if !faultIsBlack {
					spec.Black, spec.White, loser, c = other, fault, games.White, 1
				}
				p := play(t, r, spec)
				log, _ := os.ReadFile(p.Logs[c])
				if p.Outcome.Reason != tc.reason || p.Outcome.Cause != tc.cause || p.Outcome.Winner != loser.Opponent() {
					t.Fatalf("fault %s as %v: outcome %+v, want %v loses by %s/%s (detail %q)\n%s", tc.fault, loser, p.Outcome, loser, tc.reason, tc.cause, p.Detail, tail(string(log), 2000))
				}
				switch tc.fault {
				case "drop", "crash":
				default:
					checkClient(t, p, c, "fault "+tc.fault)
				}
				if tc.fault == "nocapture" && p.Violations[c]["must_capture"] == 0 {
					t.Errorf("nocapture: violations %v, want must_capture counted", p.Violations[c])
				}
				if tc.fault == "illegal" && p.Violations[c]["illegal_move"] == 0 {
					t.Errorf("illegal: violations %v, want illegal_move counted", p.Violations[c])
				}
			}
		})
	}
}

// A regression check of the built-ins' strength (the 100-game figures at
// 100 ms a move are in the README): seed rules, alpha-beta told to think as
// at 20 ms a move (10 ms) under a 5 s clock, so that a machine busy with
// other tests cannot make it lose on time. A game lost on time counts as
// lost. At 20 ms it still beat minimax in 18-20 of 20 games, also with
// three copies of the test beside two busy loops, and the test costs 3.8 s
// of CPU, not the 17.9 s it took at 100 ms (the suite's largest test).
func TestCheckersStrength(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("plays 40 games")
	}
	r := newRunner(t)
	g := testkit.Concurrent(t)
	defer g.Wait()
	for _, tc := range []struct {
		strong, weak string
		atLeast      int
	}{
		{"checkers-minimax", "checkers-random", 18},
		{"checkers-alphabeta", "checkers-minimax", 13},
	} {
		g.Run(tc.strong+"-vs-"+tc.weak, func(t *testing.T) {
			wins := 0
			for i := range 20 {
				spec := tournament.GameSpec{ID: int64(i + 1), Black: quickBuiltin(t, tc.strong, "", 20), White: quickBuiltin(t, tc.weak, "", 20),
					Settings: tournament.Settings{Game: "checkers", MoveTimeMS: 5000}}
				strong := games.Black
				if i%2 == 1 {
					spec.Black, spec.White, strong = spec.White, spec.Black, games.White
				}
				p := play(t, r, spec)
				switch p.Outcome.Reason {
				case games.ReasonNormal:
				case games.ReasonTimeout:
					t.Logf("%s vs %s: game %d lost on time by %v", tc.strong, tc.weak, i+1, p.Outcome.Loser)
				default:
					t.Fatalf("%s vs %s: game %d ended %+v (%s)", tc.strong, tc.weak, i+1, p.Outcome, p.Detail)
				}
				if p.Outcome.Winner == strong {
					wins++
				}
			}
			t.Logf("%s beat %s in %d of 20 games", tc.strong, tc.weak, wins)
			if wins < tc.atLeast {
				t.Errorf("%s beat %s in %d of 20 games, want at least %d", tc.strong, tc.weak, wins, tc.atLeast)
			}
		})
	}
}
