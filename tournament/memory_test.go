package tournament

import (
	"testing"

	"github.com/taikai-dev/taikai/games"
)

// memoryOutcome: who loses by reason memory.
func TestMemoryOutcome(t *testing.T) {
	blackWins := games.Outcome{Winner: games.Black, Loser: games.White, Reason: games.ReasonNormal}
	whiteTimeout := games.Outcome{Winner: games.Black, Loser: games.White, Reason: games.ReasonTimeout}
	aborted := games.Outcome{Reason: games.ReasonAborted}
	byMemory := func(loser games.Color) games.Outcome {
		return games.Outcome{Winner: loser.Opponent(), Loser: loser, Reason: games.ReasonMemory}
	}
	for _, c := range []struct {
		name           string
		in             games.Outcome
		oom, overAtEnd [2]bool
		want           games.Outcome
	}{
		{"on the board, nobody over", blackWins, [2]bool{}, [2]bool{}, blackWins},
		// Killed for memory only after the game ended: the board stands.
		{"on the board, over after the end", blackWins, [2]bool{true, false}, [2]bool{}, blackWins},
		// Over before the end, the poll had not stopped it yet: the winner
		// on the board loses by memory.
		{"on the board, winner over at the end", blackWins, [2]bool{true, false}, [2]bool{true, false}, byMemory(games.Black)},
		{"on the board, loser over at the end", blackWins, [2]bool{false, true}, [2]bool{false, true}, byMemory(games.White)},
		{"on the board, both over at the end", blackWins, [2]bool{true, true}, [2]bool{true, true}, blackWins},
		{"timed out, over", whiteTimeout, [2]bool{false, true}, [2]bool{}, byMemory(games.White)},
		{"timed out, the other over", whiteTimeout, [2]bool{true, false}, [2]bool{}, whiteTimeout},
		{"aborted", aborted, [2]bool{true, false}, [2]bool{true, false}, aborted},
	} {
		if got := memoryOutcome(c.in, c.oom, c.overAtEnd); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
