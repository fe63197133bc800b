package pbrain_test

import (
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol/pbrain"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
	"github.com/taikai-dev/taikai/games"
	_ "github.com/taikai-dev/taikai/games/all"
)

// Whatever a brain prints, the adapter reports it in order and ends with
// the brain's leaving; a move it passes on is a placement (the referee
// checks the point).
func FuzzSeat(f *testing.F) {
	for _, seed := range []string{
		"OK\n7,7\nMESSAGE thinking\n8,8\n",
		"DEBUG x\r\nSUGGEST 1,1\r7,7\rUNKNOWN\nERROR bad\n",
		"-1,3\n15,15\n1,\n,1\n1,2,3\nMESSAGE " + "\x00\u2028\r" + "\n",
	} {
		f.Add([]byte(seed))
	}
	g, _ := games.Lookup("gomoku")
	f.Fuzz(func(t *testing.T, input []byte) {
		rules, err := g.New("", 15)
		if err != nil {
			t.Fatal(err)
		}
		seat := pbrain.New(protocoltest.NewStream(input), engines.SeatConfig{Color: games.Black})
		_ = seat.Begin(t.Context(), engines.Start{Color: games.Black, Opponent: "o", Board: rules, Turn: games.Black})
		for _, ev := range protocoltest.Drive(t, seat) {
			// Off-board points reach the referee, which refuses them.
			if m := ev.Move; ev.Kind == engines.Attempt && (m.Pass || len(m.Path) > 0) {
				t.Fatalf("a move became %+v", m)
			}
		}
	})
}
