package tournament_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/internal/testkit"
	"github.com/taikai-dev/taikai/tournament"
)

// What real community engines tripped on (issue 38), each played by a spec
// engine that behaves as the real one does.

// NTest's thinking output (a 60-line banner, then 24 lines a move of
// status, search and nodestats) against a built-in answering in 1 ms: far
// over 200 lines a second, and none of it a flood.
func TestNBoardThinkingOutputIsNoFlood(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := newRunner(t)
	for i, black := range []bool{true, false} {
		e := nboardEngine(t, python, "THINK=ntest", fmt.Sprintf("TAIKAI_SEED=%d", i))
		opp := quickBuiltin(t, "othello-greedy", "nboard", 1)
		spec := tournament.GameSpec{ID: int64(i + 1), Black: e, White: opp, LogDir: t.TempDir(),
			Settings: tournament.Settings{Game: "othello", MoveTimeMS: 3000}}
		c := 0
		if !black {
			spec.Black, spec.White, c = opp, e, 1
		}
		p := play(t, r, spec)
		log, _ := os.ReadFile(p.Logs[c])
		if p.Outcome.Reason != games.ReasonNormal {
			t.Fatalf("NTest-like engine as %s: ended %+v (%s)\n%s", games.ColorAt(c), p.Outcome, p.Detail, tail(string(log), 1500))
		}
		lines := strings.Count(string(log), "[stdout] ")
		secs := p.EndedAt.Sub(p.StartedAt).Seconds()
		// Its 60-line banner, and 24 lines of thinking and its === line for
		// every move it made (how many depends on the game).
		own := 0
		for _, m := range p.Moves {
			if m.Color == games.ColorAt(c) && !m.Auto {
				own++
			}
		}
		want := 60 + 25*own
		t.Logf("as %s: %d lines of its output in %.2f s (%.0f a second), %d plies, %d its own", games.ColorAt(c), lines, secs, float64(lines)/secs, len(p.Moves), own)
		if own < 2 || lines < want {
			t.Errorf("%d lines of the engine's output in its log for its %d moves, want at least %d: its banner and all its thinking output", lines, own, want)
		}
	}
}

// Edax and NTest search to the depth they are set, whatever their clock:
// at the default depth they must play a whole game within it.
func TestNBoardFixedDepthSearcher(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := newRunner(t)
	// 400 ms a move at depth 12, twice as long a ply deeper (as an
	// iterative alpha-beta search grows): at 1.5 s a move the default
	// depth must be at most 13.
	e := nboardEngine(t, python, "DEPTH_MS=400", "TAIKAI_SEED=3")
	spec := tournament.GameSpec{ID: 1, Black: e, White: quickBuiltin(t, "othello-greedy", "nboard", 5), LogDir: t.TempDir(),
		Settings: tournament.Settings{Game: "othello", MoveTimeMS: 1500}}
	p := play(t, r, spec)
	if p.Outcome.Reason != games.ReasonNormal {
		log, _ := os.ReadFile(p.Logs[0])
		t.Fatalf("a fixed-depth searcher at the default depth: %+v (%s)\n%s", p.Outcome, p.Detail, tail(string(log), 1500))
	}
	// The option still sets the depth: 14 takes 1.6 s a move, over the clock.
	spec.Settings.SetOption("depth", "14")
	spec.ID = 2
	if p := play(t, r, spec); p.Outcome.Reason != games.ReasonTimeout || p.Outcome.Loser != games.Black {
		t.Errorf("depth=14: %+v, want black loses on time", p.Outcome)
	}
}

// An engine that takes 2.5 s to start (a brain loading its weights in
// START, an NBoard engine reading its book) does not lose its first move on
// time: its clock starts once it answered (OK, pong).
func TestSlowStartNotOnTheClock(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := newRunner(t)
	// The five games at once: each waits out a start, not the CPU.
	g := testkit.Concurrent(t)
	defer g.Wait()
	for i, tc := range []struct {
		engine engines.Engine
		opp    engines.Engine
		game   string
		ms     int64
	}{
		// 1 s a move and 1 s of tolerance: 2 s, under the start's 2.5 s.
		{pbrainBrain(t, python, "STARTUP_MS=2500", "TAIKAI_SEED=1"), quickBuiltin(t, "gomoku-random", "pbrain", 5), "gomoku", 1000},
		{nboardEngine(t, python, "STARTUP_MS=2500", "TAIKAI_SEED=1"), quickBuiltin(t, "othello-greedy", "nboard", 5), "othello", 1500},
	} {
		for c := range 2 {
			spec := tournament.GameSpec{ID: int64(10*i + c + 1), Black: tc.engine, White: tc.opp, LogDir: t.TempDir(),
				Settings: tournament.Settings{Game: tc.game, Rule: map[string]string{"gomoku": "freestyle"}[tc.game], MoveTimeMS: tc.ms}}
			if c == 1 {
				spec.Black, spec.White = tc.opp, tc.engine
			}
			g.Run(fmt.Sprintf("%s-as-%s", tc.engine.Protocol, games.ColorAt(c)), func(t *testing.T) {
				p := play(t, r, spec)
				if p.Outcome.Reason != games.ReasonNormal {
					log, _ := os.ReadFile(p.Logs[c])
					t.Fatalf("%s starting in 2.5 s, as %s: %+v (%s)\n%s", tc.engine.Protocol, games.ColorAt(c), p.Outcome, p.Detail, tail(string(log), 1500))
				}
				if p.ConnectMS[c] < 2500 {
					t.Errorf("%s: ready after %d ms, want the 2.5 s start counted there", tc.engine.Protocol, p.ConnectMS[c])
				}
			})
		}
	}
	// An engine that never answers is not started, within its connect timeout.
	// The built-in has a time of its own: a race-built one may take more
	// than 1.5 s to start on a loaded machine.
	opponent := quickBuiltin(t, "gomoku-random", "pbrain", 5)
	opponent.ConnectTimeoutMS = 30000
	spec := tournament.GameSpec{ID: 30, Black: pbrainBrain(t, python, "STARTUP_MS=60000"), White: opponent,
		Settings: tournament.Settings{Game: "gomoku", Rule: "freestyle", MoveTimeMS: 1000, ConnectMS: 1500}}
	g.Run("never-ready", func(t *testing.T) {
		if p := play(t, r, spec); p.Outcome.Reason != games.ReasonNoConnect || p.Outcome.Loser != games.Black {
			t.Errorf("a brain that never answers START: %+v (%s), want black loses by no_connect", p.Outcome, p.Detail)
		}
	})
}

// Every MESSAGE a brain prints before its move is one of the move's notes
// (Rapfi prints a "Speed | Depth | Eval | Time" line, then a "Bestline"),
// and the log holds what taikai sent, each line marked, with CR LF ends the
// brain checks.
func TestPbrainNotesAndLog(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := newRunner(t)
	brain := pbrainBrain(t, python, "MESSAGES=3", "TAIKAI_SEED=5")
	spec := tournament.GameSpec{ID: 1, Black: brain, White: quickBuiltin(t, "gomoku-random", "gomoku-turn", 5), LogDir: t.TempDir(),
		Settings: tournament.Settings{Game: "gomoku", Rule: "freestyle", MoveTimeMS: 2000}}
	p := play(t, r, spec)
	log, _ := os.ReadFile(p.Logs[0])
	if p.Outcome.Reason != games.ReasonNormal {
		t.Fatalf("%+v (%s)\n%s", p.Outcome, p.Detail, tail(string(log), 1500))
	}
	own := 0
	for _, m := range p.Moves {
		if m.Color != games.Black {
			continue
		}
		own++
		want := fmt.Sprintf("move %d line 1\nmove %d line 2\nmove %d line 3", own, own, own)
		if m.Note != want {
			t.Fatalf("move %d's notes %q, want %q", own, m.Note, want)
		}
		v := m.View("gomoku", 1)
		if v.Note != fmt.Sprintf("move %d line 3", own) || len(v.Notes) != 3 {
			t.Fatalf("move %d's view: note %q, notes %q; want the last, and all three", own, v.Note, v.Notes)
		}
	}
	for _, want := range []string{"[sent] START 15", "[sent] BEGIN", "[sent] TURN ", "[sent] END", "[stdout] OK", "[stdout] 7,7"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the brain's log lacks %q:\n%s", want, tail(string(log), 1500))
		}
	}
}

// A brain filling its persistent folder with directories and empty files
// (which take no bytes) and data is stopped at the bound while it plays, and
// the folder does not grow from game to game.
func TestPbrainFolderBound(t *testing.T) {
	t.Parallel()
	python := ciRequires(t, "python3")
	r := newRunner(t)
	r.Launcher.FoldersDir = t.TempDir()
	r.Launcher.FolderLimit = 4 << 20
	r.Launcher.FolderEntries = 2000
	brain := pbrainBrain(t, python, "FAULT=fillfolder", "FAULT_AT=2", "TAIKAI_SEED=1")
	brain.ID = 9
	folder := filepath.Join(r.Launcher.FoldersDir, "9")
	var sizes []string
	for g := range 3 {
		spec := tournament.GameSpec{ID: int64(g + 1), Black: brain, White: quickBuiltin(t, "gomoku-random", "gomoku-turn", 5), LogDir: t.TempDir(),
			Settings: tournament.Settings{Game: "gomoku", Rule: "freestyle", MoveTimeMS: 20000}}
		p := play(t, r, spec)
		log, _ := os.ReadFile(p.Logs[0])
		if p.Outcome.Loser != games.Black || p.Outcome.Cause != games.CauseFolder {
			t.Fatalf("game %d: %+v (%s), want black stopped for its folder\n%s", g+1, p.Outcome, p.Detail, tail(string(log), 1500))
		}
		var bytes int64
		entries := 0
		filepath.WalkDir(folder, func(path string, d os.DirEntry, err error) error {
			if err == nil && path != folder {
				entries++
				if fi, err := d.Info(); err == nil && d.Type().IsRegular() {
					bytes += fi.Size()
				}
			}
			return nil
		})
		sizes = append(sizes, fmt.Sprintf("%d entries, %d bytes", entries, bytes))
		// Polled every 50 ms: the brain is stopped within a poll of the
		// bound, plus however late the poll runs on a busy machine. This brain
		// writes as fast as Python can, so that window is worth megabytes:
		// 3.3-4.3x the bound in CI's race run, 1.1-1.4x on a quiet machine.
		// Unstopped, it would write for the whole 20 s move (gigabytes).
		if entries > 16*2000 || bytes > 16*(4<<20) {
			t.Errorf("game %d: the folder holds %d entries and %d bytes after the game, far over its bound", g+1, entries, bytes)
		}
	}
	t.Logf("the folder after each game: %s", strings.Join(sizes, "; "))
}
