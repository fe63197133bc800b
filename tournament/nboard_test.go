package tournament_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

func nboardEngine(t *testing.T, python string, env ...string) engines.Engine {
	cmd := append(append([]string{"env"}, env...), python, filepath.Join(clientsDir(t), "nboard_engine.py"))
	return engines.Engine{Name: "py-nboard", Game: "othello", Protocol: "nboard", Command: cmd}
}

// An engine written from the NBoard protocol text plays the built-ins, as
// othello-board TCP clients (a mixed game) and as NBoard engines, both
// colours, from the start and from an opening, answering in NBoard's form
// and in Edax's; it checks every set game (taikai's GGF), ping and go.
func TestNBoardEngineFromSpec(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := clientRunner(t)
	set := tournament.Settings{Game: "othello", MoveTimeMS: 3000}
	id := int64(0)
	for _, opp := range []engines.Engine{
		quickBuiltin(t, "othello-alphabeta", "othello-board", 50),
		quickBuiltin(t, "othello-greedy", "nboard", 50),
		quickBuiltin(t, "othello-alphabeta", "nboard", 50),
	} {
		for _, style := range []string{"nboard", "edax"} {
			for _, engineBlack := range []bool{true, false} {
				id++
				e := nboardEngine(t, python, fmt.Sprintf("TAIKAI_SEED=%d", id), "STYLE="+style)
				spec := tournament.GameSpec{ID: id, Black: e, White: opp, Settings: set, LogDir: t.TempDir(), Seed: uint64(id)}
				c := 0
				if !engineBlack {
					spec.Black, spec.White, c = opp, e, 1
				}
				if style == "edax" {
					spec.Opening = &tournament.SuiteLine{Suite: "test", Moves: []games.Move{{X: 5, Y: 4}, {X: 5, Y: 5}, {X: 4, Y: 5}}}
				}
				p := play(t, r, spec)
				what := fmt.Sprintf("py-nboard (%s style) vs %s over %s", style, opp.Name, opp.Protocol)
				if p.Outcome.Reason != games.ReasonNormal {
					log, _ := os.ReadFile(p.Logs[c])
					other, _ := os.ReadFile(p.Logs[1-c])
					t.Fatalf("%s: ended %+v (%s)\n%s\nopponent:\n%s", what, p.Outcome, p.Detail, tail(string(log), 2000), tail(string(other), 1000))
				}
				checkClient(t, p, c, what)
				if p.Nicks[c] != "py-nboard" {
					t.Errorf("%s: set myname %q, want py-nboard", what, p.Nicks[c])
				}
				if v := p.Violations[c]["unknown_command"]; v != 0 {
					t.Errorf("%s: %d lines counted unknown (Edax's error line must not be)", what, v)
				}
				passes, notes := 0, 0
				for _, m := range p.Moves {
					if m.Pass {
						passes++
					}
					if m.Color == games.ColorAt(c) && !m.Pass && !m.Auto && m.Note == "eval 0.00" {
						notes++
					}
				}
				if notes == 0 {
					t.Errorf("%s: no move of the engine's carries its evaluation as a note", what)
				}
				t.Logf("%s as %s: %s after %d plies (%d passes)", what, []string{"black", "white"}[c], p.Result(), len(p.Moves), passes)
			}
		}
	}
}

// The engine misbehaving on purpose: each fault ends the game with the right
// reason (garbage lines are counted and the game goes on).
func TestNBoardFaults(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := newRunner(t)
	for i, tc := range []struct {
		fault, reason string
	}{
		{"silent", games.ReasonTimeout},
		{"slow", games.ReasonTimeout},
		{"crash", games.ReasonCrash},
		{"illegal", games.ReasonIllegal},
		{"garbage", games.ReasonNormal},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			e := nboardEngine(t, python, "FAULT="+tc.fault, "FAULT_AT=2", "FAULT_SLEEP_MS=2500", "TAIKAI_SEED=1")
			other := quickBuiltin(t, "othello-greedy", "othello-board", 50)
			spec := tournament.GameSpec{ID: int64(i + 1), Black: e, White: other, LogDir: t.TempDir(),
				Settings: tournament.Settings{Game: "othello", MoveTimeMS: 1500}}
			p := play(t, r, spec)
			log, _ := os.ReadFile(p.Logs[0])
			if p.Outcome.Reason != tc.reason || (tc.reason != games.ReasonNormal && p.Outcome.Winner != games.White) {
				t.Fatalf("fault %s: outcome %+v, want black loses by %s\n%s", tc.fault, p.Outcome, tc.reason, tail(string(log), 2000))
			}
			if tc.fault == "garbage" && p.Violations[0]["unknown_command"] == 0 {
				t.Errorf("garbage: violations %v, want unknown_command counted", p.Violations[0])
			}
			if tc.fault == "garbage" {
				// Thinking output and the moves with their evaluations are kept in the engine's log.
				for _, want := range []string{"[stdout] HELLO WORLD", "[stdout] status thinking", "[stdout] nodestats 1234 0.01", "/0.00/0.01"} {
					if !strings.Contains(string(log), want) {
						t.Errorf("the engine's log lacks %q:\n%s", want, tail(string(log), 1500))
					}
				}
			}
		})
	}
}
