package gomokuturn_test

import (
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol/gomokuturn"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
	"github.com/taikai-dev/taikai/games"
)

// Whatever a client sends, the adapter reports it in order and ends with the
// client's leaving; a move it passes on is a placement.
func FuzzSeat(f *testing.F) {
	for _, seed := range []string{"get text\nget bin\nput 7 7\nend\n", "put -1 3\nput a b\nput 1\nput 1 2 3\n", "your turn\nget\n\n\tput  3  4\r\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		seat := gomokuturn.New(protocoltest.NewStream(input), games.Black, gomokuturn.Options{EndMessage: true})
		_ = seat.Begin(t.Context(), engines.Start{Color: games.Black, Board: board{}, Turn: games.Black})
		for _, ev := range protocoltest.Drive(t, seat) {
			if ev.Kind == engines.Attempt && (ev.Move.Pass || len(ev.Move.Path) > 0) {
				t.Fatalf("a put became %+v", ev.Move)
			}
		}
	})
}

type board struct{}

func (board) Size() int        { return 15 }
func (board) At(x, y int) int8 { return 0 }
