package games

import (
	"io"
	"time"
)

// RecordGame is a played game as a record format writes it.
type RecordGame struct {
	Event        string // the tournament's name, or "taikai match"
	Round        string // the game's number or slot in it
	Black, White string
	Rule         string
	Size         int
	Moves        []Ply  // from the game's start position, an opening's plies included
	Winner       Color  // None: a draw
	Reason       string // a game-end reason (ReasonNormal, ReasonTimeout, ...)
	Stones       [2]int // pieces at the end, black's and white's
	Date         time.Time
	MoveTimeMS   int64 // per-move clock, 0 if none
	TotalTimeMS  int64 // per-side clock, 0 if none
}

// RecordFormat is a file format a game's community reads and writes (GGF for
// Othello, PSQ for Gomoku).
type RecordFormat struct {
	Ext         string // file name extension: "ggf"
	Title       string // as people know it: "GGF (NBoard, GGS)"
	ContentType string
	// Write writes games (finished ones: aborted games have no result).
	Write func(w io.Writer, games []RecordGame) error
	// Read reads the move lists of a file's games from the game's start
	// position (an opening suite imported from such a file); each error
	// names the game and the move.
	Read func(r io.Reader) ([][]Move, error)
}

// RecordFormatOf returns a game's record format with extension ext.
func RecordFormatOf(game, ext string) (RecordFormat, bool) {
	g, ok := Lookup(game)
	if !ok {
		return RecordFormat{}, false
	}
	for _, f := range g.Records {
		if f.Ext == ext {
			return f, true
		}
	}
	return RecordFormat{}, false
}

// RecordExts lists the extensions of a game's record formats, the usual one
// first.
func RecordExts(game string) []string {
	g, _ := Lookup(game)
	var out []string
	for _, f := range g.Records {
		out = append(out, f.Ext)
	}
	return out
}
