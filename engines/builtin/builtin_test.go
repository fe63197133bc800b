package builtin_test

import (
	"io"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines/builtin"
)

func TestParseArgs(t *testing.T) {
	// The othello-move client's own flags work too.
	opt, err := builtin.ParseArgs([]string{"othello-alphabeta", "--protocol", "othello-move", "-H", "10.0.0.2", "-p", "3000", "-n", "ab"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Host != "10.0.0.2" || opt.Port != 3000 || opt.Name != "ab" || opt.Protocol != "othello-move" || opt.MoveTime != time.Second {
		t.Errorf("parsed %+v", opt)
	}
	opt, err = builtin.ParseArgs([]string{"gomoku-threat", "--port", "10000", "-w", "--time-ms", "250"}, io.Discard)
	if err != nil || opt.Color != "white" || opt.MoveTime != 250*time.Millisecond || opt.Protocol != "gomoku-turn" {
		t.Errorf("parsed %+v, %v", opt, err)
	}
	for _, bad := range [][]string{
		{},
		{"stockfish", "--port", "1"},
		{"othello-random"},
		{"othello-random", "--port", "1", "--protocol", "gomoku-turn"},
		{"othello-random", "--port", "1", "extra"},
	} {
		if _, err := builtin.ParseArgs(bad, io.Discard); err == nil {
			t.Errorf("ParseArgs(%q) accepted", bad)
		}
	}
}
