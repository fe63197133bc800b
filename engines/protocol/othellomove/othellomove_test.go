package othellomove_test

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol/othellomove"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
	"github.com/taikai-dev/taikai/games"
)

type board struct{}

func (board) Size() int        { return 8 }
func (board) At(x, y int) int8 { return 0 }

// The adapter alone against an in-process TCP client: one connection plays two
// games in a row, as the reference server's connections did (START after END),
// and BYE comes only with the last.
func TestTwoGamesOnOneConnection(t *testing.T) {
	client, server := protocoltest.TCPPair(t)
	// The records before the last game: BYE adds that game (a win by 4-1).
	seat := othellomove.New(server, engines.SeatConfig{Color: games.Black, Tallies: [2]engines.Tally{{Name: "me", Wins: 1}, {Name: "you", Losses: 1}}})
	defer seat.Close()
	events := make(chan engines.Action, 16)
	seat.Listen(func(ev engines.Action) { events <- ev })
	r := bufio.NewReader(client)
	expect := func(want string) {
		t.Helper()
		client.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := r.ReadString('\n')
		if err != nil || got != want+"\n" {
			t.Fatalf("got %q (%v), want %q", got, err, want)
		}
	}
	next := func() engines.Action {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-time.After(5 * time.Second):
			t.Fatal("no event")
		}
		return engines.Action{}
	}
	ctx := context.Background()
	client.Write([]byte("OPEN twice\n"))
	for game := range 2 {
		seat.Begin(ctx, engines.Start{Color: games.Black, Opponent: "white engine", Board: board{}, Turn: games.Black, Remaining: 60 * time.Second})
		expect("START BLACK white_engine 60000")
		client.Write([]byte("MOVE f5\n"))
		ev := next()
		if ev.Kind != engines.Attempt || !ev.Move.Equal(games.Move{X: 5, Y: 4}) {
			t.Fatalf("game %d: event %+v, want the attempt f5", game, ev)
		}
		seat.Update(ctx, engines.Update{Moves: []games.Ply{{Color: games.Black, Move: ev.Move}}, Board: board{}, Turn: games.White, Remaining: 59500 * time.Millisecond})
		expect("ACK 59500")
		seat.Update(ctx, engines.Update{Moves: []games.Ply{{Color: games.White, Move: games.Move{X: 3, Y: 5}}}, Board: board{}, Turn: games.Black, Remaining: 59500 * time.Millisecond})
		expect("MOVE D6")
		res := engines.Ending{Verdict: engines.Win, Reason: games.ReasonResign, Own: 4, Opp: 1}
		if game == 0 {
			seat.EndGame(ctx, res)
			expect("END WIN 4 1 GIVEUP")
		} else {
			seat.End(ctx, res)
			expect("END WIN 4 1 GIVEUP")
			expect("BYE me 2 2 0 you -2 0 2")
		}
	}
	if seat.Nick() != "twice" {
		t.Errorf("OPEN name %q", seat.Nick())
	}
	// Out of a game, a stray line is only counted, not a loss.
	client.Write([]byte("HELLO\n"))
	if ev := next(); ev.Kind != engines.Violation || !strings.Contains(ev.What, "invalid") {
		t.Errorf("between games: %+v, want a counted violation", ev)
	}
}

// Names reach the wire as plain words the course's clients lex as names
// (issue 16, item 3): not a number, not a keyword, one token.
func TestNamesAreWords(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"greedy", "greedy"},
		{"6321120", "n6321120"},
		{"WHITE", "WHITE_"},
		{"bye", "bye_"},
		{"white engine", "white_engine"},
		{"v2.1-final", "v2.1-final"},
		{"-12", "n-12"},
		{"", "-"},
		{"田中 2", "田中_2"},
	} {
		client, server := protocoltest.TCPPair(t)
		seat := othellomove.New(server, engines.SeatConfig{Color: games.White})
		seat.Listen(func(engines.Action) {})
		seat.Begin(context.Background(), engines.Start{Color: games.White, Opponent: tc.name, Board: board{}, Turn: games.Black, Remaining: time.Second})
		client.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := bufio.NewReader(client).ReadString('\n')
		if want := "START WHITE " + tc.want + " 1000\n"; got != want || err != nil {
			t.Errorf("opponent %q: got %q (%v), want %q", tc.name, got, err, want)
		}
		seat.Close()
	}
}
