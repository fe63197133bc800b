package web

import (
	"errors"
	"testing"

	"github.com/taikai-dev/taikai/games"
)

// playGames are the games the move fuzzer picks from by its first input.
var playGames = []string{"othello", "gomoku", "checkers"}

// A person's move request on any bytes, for any game (issue 39; issue 36
// item 9): parseMove never panics; it refuses with an invalid error naming
// a field, or returns a move that the game's rules then judge without
// panicking (the referee's Check and, if legal, Play on the start
// position); a move prints as text that reads back as the same move, or
// has no notation and is refused by the rules.
func FuzzPlayMove(f *testing.F) {
	for _, s := range []struct {
		game uint8
		body string
	}{
		{0, `{"x": 5, "y": 4}`},
		{0, `{"text": "f5"}`},
		{0, `{"text": "pass"}`},
		{0, `{"pass": true}`},
		{0, `{"x": 5}`},
		{0, `{"x": -1, "y": 99999999999}`},
		{1, `{"x": 7, "y": 7}`},
		{1, `{"text": "7,7"}`},
		{1, `{"text": " 14 , 0 "}`},
		{1, `{"text": "h8"}`},
		{2, `{"text": "11-15"}`},
		{2, `{"text": "22x15x8"}`},
		{2, `{"path": [[2, 5], [3, 4]]}`},
		{2, `{"x": 2, "y": 5, "path": [[3, 4]]}`},
		{2, `{"path": [[0, 0]]}`},
		{2, `{"text": "1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16-17-18-19-20-21-22-23-24-25-26-27-28-29-30-31-32"}`},
		{0, `{"x": 1, "y": 2, "text": "a1"}`},
		{0, `{"nope": 1}`},
		{0, `[]`},
		{0, `{"x": 1.5, "y": 2}`},
		{0, `{"text": "\u0000"}`},
		{0, `{} {}`},
		{0, ``},
	} {
		f.Add(s.game, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, gi uint8, body []byte) {
		game := playGames[int(gi)%len(playGames)]
		m, err := parseMove(game, body)
		if err != nil {
			var ge *games.Error
			if !errors.As(err, &ge) || ge.Code != games.EInvalid || ge.Field == "" || ge.Message == "" {
				t.Fatalf("%s %q: error %#v, want an invalid error naming a field", game, body, err)
			}
			return
		}
		g, _ := games.Lookup(game)
		r, err := g.New("", g.Size)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := r.Check(m); ok {
			r.Play(m)
		}
		if m.Pass {
			return
		}
		text := games.Text(game, m)
		back, err := g.ParseMove(text)
		if err != nil {
			// A move with no notation (a negative column, a checkers
			// move without its landing squares) is one the rules refuse.
			if why, ok := mustNew(t, g).Check(m); ok {
				t.Fatalf("%s %q: move %+v prints as %q, which does not read (%v), and the rules say %v, %v", game, body, m, text, err, why, ok)
			}
			return
		}
		if !back.Equal(m) {
			// A point off the board may print as one on it (Othello's
			// square numbers wrap): the rules refuse it.
			if _, ok := mustNew(t, g).Check(m); !ok {
				return
			}
			t.Fatalf("%s %q: move %+v prints as %q, which reads as %+v", game, body, m, text, back)
		}
	})
}

func mustNew(t *testing.T, g games.Game) games.Rules {
	r, err := g.New("", g.Size)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
