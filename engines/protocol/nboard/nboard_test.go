package nboard

import (
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/games"
)

// The evaluation of "===" in the protocol's form and in Edax's.
func TestEvalNote(t *testing.T) {
	for line, want := range map[string]string{
		"=== d6/-1.00/0.5": "eval -1.00",
		"=== D6 -1.00 0.0": "eval -1.00",
		"=== F5":           "",
		"=== F5//1.2":      "",
		"=== PA/0/0":       "eval 0",
		"=== F5 book":      "",
	} {
		if got := evalNote(strings.Fields(line)); got != want {
			t.Errorf("%q: note %q, want %q", line, got, want)
		}
	}
}

// The game as set game sends it: the start position, the moves in upper
// case, a pass as PA, TI in whole seconds rounded up.
func TestAppendGame(t *testing.T) {
	moves := []games.Ply{{Color: games.Black, Move: games.Move{X: 5, Y: 4}}, {Color: games.White, Move: games.PassMove}}
	got := string(AppendGame(nil, [2]string{"a[1]", "b"}, moves, 1500*time.Millisecond))
	want := "(;GM[Othello]PC[taikai]PB[a(1)]PW[b]RE[?]TI[0:02]TY[8]BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]B[F5]W[PA];)"
	if got != want {
		t.Errorf("set game\n%s\nwant\n%s", got, want)
	}
}

// The default depth follows the clock: 10 at 5 s a move, a ply less for each
// halving, a total clock counted as 30 moves.
func TestDepthFor(t *testing.T) {
	for _, tc := range []struct {
		move, total time.Duration
		want        int
	}{
		{5 * time.Second, 0, 10},
		{1500 * time.Millisecond, 0, 8},
		{10 * time.Second, 0, 11},
		{100 * time.Millisecond, 0, 4},
		{0, 150 * time.Second, 10},
		{time.Hour, 0, 19},
		{10 * time.Hour, 0, 20},
		{0, 0, 10},
	} {
		if got := DepthFor(tc.move, tc.total); got != tc.want {
			t.Errorf("DepthFor(%v, %v) = %d, want %d", tc.move, tc.total, got, tc.want)
		}
	}
}
