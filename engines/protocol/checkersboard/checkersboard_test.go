package checkersboard_test

import (
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol/checkersboard"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/checkers"
)

func TestParsePath(t *testing.T) {
	for in, want := range map[string]string{
		" 11-15": "11-15", " 22x15x8": "22x15x8", " 22X15-8 ": "22x15x8", "\t9-14": "9-14", " 1x10x19": "1x10x19",
	} {
		m, ok := checkersboard.ParsePath([]byte(in))
		if !ok || checkers.Notation(m) != want {
			t.Errorf("%q: %v %q, want %q", in, ok, checkers.Notation(m), want)
		}
	}
	for _, bad := range []string{"", " 11", " 11-", " -11-15", " 0-4", " 33-29", " 11--15", " 11 15", " 011-15", " 11-15x", " a-b", " 1x2x3x4x5x6x7x8x9x10x11x12x13x14"} {
		if m, ok := checkersboard.ParsePath([]byte(bad)); ok {
			t.Errorf("%q parsed as %s", bad, checkers.Notation(m))
		}
	}
}

// Whatever a client sends, the adapter reports it in order and ends with the
// client's leaving; a move it passes on is a path of dark squares.
func FuzzSeat(f *testing.F) {
	for _, seed := range []string{"MOVE 11-15\nMOVE 22x15x8\nNICK alice\nSAY hi\nCLOSE\n", "MOVE 0-99\nMOVE a b\nmove 3 2\n", "NICK\nNICK " + string(make([]byte, 40)) + "\n", "SAYx\r\n\n\tMOVE 1-5-9"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		seat := checkersboard.New(protocoltest.NewStream(input), games.Black, "seed")
		start := checkers.Start(checkers.Seed)
		_ = seat.Begin(t.Context(), engines.Start{Color: games.Black, Board: &start, Turn: games.Black})
		for _, ev := range protocoltest.Drive(t, seat) {
			if ev.Kind != engines.Attempt {
				continue
			}
			if ev.Move.Pass || len(ev.Move.Path) == 0 || checkers.SquareAt(ev.Move.X, ev.Move.Y) == checkers.NoSquare {
				t.Fatalf("a MOVE became %+v", ev.Move)
			}
			for _, p := range ev.Move.Path {
				if checkers.SquareAt(p.X, p.Y) == checkers.NoSquare {
					t.Fatalf("a MOVE became %+v", ev.Move)
				}
			}
		}
	})
}
