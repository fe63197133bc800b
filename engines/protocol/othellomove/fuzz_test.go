package othellomove_test

import (
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol/othellomove"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
	"github.com/taikai-dev/taikai/games"
)

// Whatever a client sends, the adapter reports it in order and ends with the
// client's leaving; a move it passes on is on the board or a pass.
func FuzzSeat(f *testing.F) {
	for _, seed := range []string{"OPEN me\nMOVE f5\nMOVE PASS\nMOVE GIVEUP\n", "MOVE z9\nOPEN\nOPEN a b\n", "\t\tMOVE\tc4\r\n", "MOVE PASS PASS\nBYE\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		seat := othellomove.New(protocoltest.NewStream(input), engines.SeatConfig{Color: games.Black})
		_ = seat.Begin(t.Context(), engines.Start{Color: games.Black, Opponent: "o", Board: board{}, Turn: games.Black})
		for _, ev := range protocoltest.Drive(t, seat) {
			m := ev.Move
			if ev.Kind == engines.Attempt && !m.Pass && (m.X < 0 || m.X > 7 || m.Y < 0 || m.Y > 7) {
				t.Fatalf("a MOVE became %+v", m)
			}
		}
	})
}
