package othelloboard_test

import (
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol/othelloboard"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
	"github.com/taikai-dev/taikai/games"
)

// Whatever a client sends, the adapter reports it in order and ends with the
// client's leaving; a move it passes on is one a PUT can say.
func FuzzSeat(f *testing.F) {
	for _, seed := range []string{"PUT 3 2\nPUT32\nNICK alice\nSAY hi\nCLOSE\n", "PUT -1 99\nPUT a b\nput 3 2\n", "NICK\nNICK " + string(make([]byte, 40)) + "\n", "SAYx\r\n\n\tPUT 1 2 3"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		seat := othelloboard.New(protocoltest.NewStream(input), games.Black, othelloboard.Options{})
		// Black's turn: PUT is an attempt, not out of turn.
		_ = seat.Begin(t.Context(), engines.Start{Color: games.Black, Board: empty{}, Turn: games.Black})
		for _, ev := range protocoltest.Drive(t, seat) {
			if ev.Kind == engines.Attempt && (ev.Move.Pass || len(ev.Move.Path) > 0) {
				t.Fatalf("a PUT became %+v", ev.Move)
			}
		}
	})
}

type empty struct{}

func (empty) Size() int        { return 8 }
func (empty) At(x, y int) int8 { return 0 }
