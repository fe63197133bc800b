package cluster

import (
	"encoding/json"
	"testing"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// Whatever a worker sends as a result, reading it and replaying it under the
// rules of any game (CheckRecord, what the server trusts) never panics.
func FuzzWorkerResult(f *testing.F) {
	legal, _ := json.Marshal(resultMsg{Attempt: 1, Worker: "w", Played: &tournament.Played{Record: legalGame(f, 1)}})
	f.Add(uint8(0), legal)
	fake, _ := json.Marshal(resultMsg{Attempt: 1, Worker: "w", Played: &tournament.Played{Record: games.Record{Outcome: games.Outcome{Winner: games.White, Reason: games.ReasonNormal}}}})
	f.Add(uint8(0), fake)
	f.Add(uint8(1), []byte(`{"attempt":1,"worker":"w","played":{"moves":[{"Color":1,"X":7,"Y":7},{"Color":-1,"X":-1,"Y":-1,"Pass":true}],"outcome":{"reason":"timeout"}}}`))
	f.Add(uint8(2), []byte(`{"attempt":1,"worker":"w","played":{"moves":[{"Color":1,"X":2,"Y":5,"Path":[{"X":3,"Y":4}]}],"outcome":{"reason":"normal"}}}`))
	f.Add(uint8(0), []byte(`{"played":null}`))
	names := []string{"othello", "gomoku", "checkers"}
	f.Fuzz(func(t *testing.T, game uint8, data []byte) {
		var r resultMsg
		if json.Unmarshal(data, &r) != nil || r.Played == nil {
			return
		}
		set := tournament.Settings{Game: names[int(game)%len(names)]}
		_ = tournament.CheckRecord(set, r.Played.Record)
	})
}
