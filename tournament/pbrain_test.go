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

func pbrainBrain(t *testing.T, python string, env ...string) engines.Engine {
	cmd := append(append([]string{"env"}, env...), python, filepath.Join(clientsDir(t), "pbrain_brain.py"))
	return engines.Engine{Name: "py-brain", Game: "gomoku", Protocol: "pbrain", Command: cmd}
}

// A brain written from the pbrain protocol text plays the built-ins, as
// gomoku-turn TCP clients (a mixed game) and as pbrain brains themselves,
// with both colours, from the empty board and from an opening, its lines
// ended each way the text allows; it checks every command it gets.
func TestPbrainBrainFromSpec(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := clientRunner(t)
	set := tournament.Settings{Game: "gomoku", Rule: "freestyle", MoveTimeMS: 3000}
	id := int64(0)
	for _, opp := range []engines.Engine{
		quickBuiltin(t, "gomoku-threat", "gomoku-turn", 100),
		quickBuiltin(t, "gomoku-random", "pbrain", 50),
		quickBuiltin(t, "gomoku-threat", "pbrain", 100),
	} {
		for _, end := range []string{"lf", "crlf", "cr"} {
			for _, brainBlack := range []bool{true, false} {
				id++
				brain := pbrainBrain(t, python, fmt.Sprintf("TAIKAI_SEED=%d", id), "LINE_END="+end)
				spec := tournament.GameSpec{ID: id, Black: brain, White: opp, Settings: set, LogDir: t.TempDir(), Seed: uint64(id)}
				c := 0
				if !brainBlack {
					spec.Black, spec.White, c = opp, brain, 1
				}
				if end == "cr" {
					// From a three-stone opening: BOARD ... DONE to each side.
					spec.Opening = &tournament.SuiteLine{Suite: "test", Moves: []games.Move{{X: 7, Y: 7}, {X: 8, Y: 8}, {X: 6, Y: 8}}}
				}
				p := play(t, r, spec)
				what := fmt.Sprintf("py-brain (%s line ends) vs %s over %s", end, opp.Name, opp.Protocol)
				if p.Outcome.Reason != games.ReasonNormal {
					log, _ := os.ReadFile(p.Logs[c])
					other, _ := os.ReadFile(p.Logs[1-c])
					t.Fatalf("%s: ended %+v (%s)\n%s\nopponent:\n%s", what, p.Outcome, p.Detail, tail(string(log), 2000), tail(string(other), 1000))
				}
				checkClient(t, p, c, what)
				if p.Nicks[c] != "py-brain 1.0 by taikai tests" {
					t.Errorf("%s: nick from ABOUT %q, want py-brain 1.0 by taikai tests", what, p.Nicks[c])
				}
				t.Logf("%s as %s: %s after %d moves", what, []string{"black", "white"}[c], p.Result(), len(p.Moves))
			}
		}
	}
}

// The brain misbehaving on purpose: each fault ends the game with the right
// reason (garbage lines are counted and the game goes on).
func TestPbrainFaults(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := newRunner(t)
	for i, tc := range []struct {
		fault, reason string
	}{
		{"silent", games.ReasonTimeout},
		{"slow", games.ReasonTimeout},
		{"crash", games.ReasonCrash},
		{"raise", games.ReasonCrash},
		{"illegal", games.ReasonIllegal},
		{"garbage", games.ReasonNormal},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			// 1.5 s a move and GomocupJudge's tolerance of 1 s: slow sleeps 4 s.
			brain := pbrainBrain(t, python, "FAULT="+tc.fault, "FAULT_AT=2", "FAULT_SLEEP_MS=4000", "TAIKAI_SEED=1")
			other := quickBuiltin(t, "gomoku-threat", "gomoku-turn", 50)
			spec := tournament.GameSpec{ID: int64(i + 1), Black: brain, White: other, LogDir: t.TempDir(),
				Settings: tournament.Settings{Game: "gomoku", Rule: "freestyle", MoveTimeMS: 1500}}
			p := play(t, r, spec)
			log, _ := os.ReadFile(p.Logs[0])
			if p.Outcome.Reason != tc.reason || (tc.reason != games.ReasonNormal && p.Outcome.Winner != games.White) {
				t.Fatalf("fault %s: outcome %+v, want black loses by %s\n%s", tc.fault, p.Outcome, tc.reason, tail(string(log), 2000))
			}
			// A brain on pipes that died is scored crash (issue 37, item
			// 15), with its exit status and, for an exception, its traceback.
			if tc.fault == "crash" && p.Exits[0] != "exit status 3" {
				t.Errorf("crash: exit %q, want exit status 3", p.Exits[0])
			}
			if tc.fault == "raise" && (p.Exits[0] != "exit status 1" || !strings.Contains(string(log), "RuntimeError")) {
				t.Errorf("raise: exit %q, want exit status 1 and the traceback in the log:\n%s", p.Exits[0], tail(string(log), 1500))
			}
			if tc.fault == "garbage" && p.Violations[0]["unknown_command"] == 0 {
				t.Errorf("garbage: violations %v, want unknown_command counted", p.Violations[0])
			}
			if tc.fault == "garbage" {
				noted := false
				for _, m := range p.Moves {
					noted = noted || (m.Color == games.Black && m.Note == "thinking hard")
				}
				if !noted {
					t.Errorf("garbage: no move of the brain's carries its MESSAGE as a note")
				}
				// The lines the referee drops are kept in the brain's log.
				for _, want := range []string{"[stdout] HELLO WORLD", "[stdout] MESSAGE thinking hard", "[stdout] DEBUG depth 3", "[stdout] ERROR not really",
					"[sent] START 15", "[sent] INFO rule 0", "[sent] INFO timeout_turn 1500"} {
					if !strings.Contains(string(log), want) {
						t.Errorf("the brain's log lacks %q:\n%s", want, tail(string(log), 1500))
					}
				}
			}
		})
	}
}

// A brain may go over its move time by the tolerance (1 s by default,
// option tolerance_ms), which it is not told: INFO timeout_turn says the
// move time.
func TestPbrainTolerance(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := newRunner(t)
	for i, tc := range []struct {
		tolerance string // "" the default
		reason    string
	}{
		{"", games.ReasonNormal},     // 1.3 s thinking within 1 s + 1 s
		{"0", games.ReasonTimeout},   // not within 1 s
		{"3000", games.ReasonNormal}, // within 1 s + 3 s
	} {
		brain := pbrainBrain(t, python, "FAULT=slowonce", "FAULT_AT=2", "FAULT_SLEEP_MS=1300", "TAIKAI_SEED=2")
		set := tournament.Settings{Game: "gomoku", Rule: "freestyle", MoveTimeMS: 1000}
		if tc.tolerance != "" {
			set.SetOption("tolerance_ms", tc.tolerance)
		}
		spec := tournament.GameSpec{ID: int64(i + 1), Black: brain, White: quickBuiltin(t, "gomoku-random", "gomoku-turn", 20), Settings: set, LogDir: t.TempDir()}
		p := play(t, r, spec)
		if p.Outcome.Reason != tc.reason {
			log, _ := os.ReadFile(p.Logs[0])
			t.Errorf("tolerance %q: %+v, want %s\n%s", tc.tolerance, p.Outcome, tc.reason, tail(string(log), 1500))
		}
	}
}
