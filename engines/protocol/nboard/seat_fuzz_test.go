package nboard_test

import (
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol/nboard"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
	"github.com/taikai-dev/taikai/games"
	_ "github.com/taikai-dev/taikai/games/all"
)

// Whatever an NBoard engine prints, the adapter reports it in order and ends
// with the engine's leaving; a move it passes on is on the board or a pass.
func FuzzSeat(f *testing.F) {
	for _, seed := range []string{
		"set myname x\n=== F5/1.5/0.1\n",
		"pong 1\nstatus thinking\n=== pa\n=== d3\n=== z9\n===\n",
		"nodestats 1 2\nsearch d3 1 2 3\n=== F5 junk\r\n",
	} {
		f.Add([]byte(seed))
	}
	g, _ := games.Lookup("othello")
	f.Fuzz(func(t *testing.T, input []byte) {
		rules, err := g.New("", 8)
		if err != nil {
			t.Fatal(err)
		}
		seat := nboard.New(protocoltest.NewStream(input), engines.SeatConfig{Color: games.Black}, 1)
		_ = seat.Begin(t.Context(), engines.Start{Color: games.Black, Opponent: "o", Board: rules, Turn: games.Black})
		for _, ev := range protocoltest.Drive(t, seat) {
			m := ev.Move
			if ev.Kind == engines.Attempt && !m.Pass && (m.X < 0 || m.X > 7 || m.Y < 0 || m.Y > 7) {
				t.Fatalf("a move became %+v", m)
			}
		}
	})
}
