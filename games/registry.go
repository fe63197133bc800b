package games

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Game is a game as taikai knows it: registered once by its package (see
// games/all), and looked up by name everywhere else.
type Game struct {
	Name  string // as in the API and the database: "othello"
	Title string // as people read it: "Othello"
	Order int    // where it is listed among the games (forms, messages), the default first
	// Rules are the names of the game's rule sets, the default first; nil
	// for a game with one rule.
	Rules []string
	// Rule checks a rule set's name and returns it as stored ("" is the
	// default rule).
	Rule func(name string) (string, error)
	// Board size: the default and the range; all three equal for a fixed board.
	Size, MinSize, MaxSize int
	// New starts a game under a rule set (as Rule returned it) on a board of size.
	New func(rule string, size int) (Rules, error)
	// Notation prints a move as people read it ("f5"); a pass is "pass".
	Notation func(m Move) string
	// ParseMove reads a move in the game's notation.
	ParseMove func(text string) (Move, error)
	// OnTimeout is what the server does for a side out of time unless told
	// otherwise: "forfeit" or "random".
	OnTimeout string
	// MaxErrors is how many refused commands a side may send before it loses
	// by illegal, -1 for no limit.
	MaxErrors int
	// View tells the dashboard how to draw a board of the given size.
	View func(size int) View
	// Records are the file formats its games export to (and suites import
	// from), the community's usual one first; nil if none.
	Records []RecordFormat
}

// View is how the dashboard draws a game's board; it knows no game by name.
type View struct {
	// Style is "cells" (pieces inside squares, Othello) or "points" (stones
	// on the intersections of lines, Gomoku).
	Style string `json:"style"`
	// Dark: only the cells with x+y odd are played on, drawn dark
	// (checkers); a piece written X or O in a board row is a king.
	Dark bool `json:"dark,omitempty"`
	// Stars are the dots drawn on the board: in cells style at the corner
	// below and right of the named cell, in points style on the point.
	Stars []Point `json:"stars,omitempty"`
	// Flips: moves turn pieces over, which the dashboard animates.
	Flips bool `json:"flips,omitempty"`
	// Score: the piece count is the score and is shown as one ("33-31").
	Score bool `json:"score,omitempty"`
	// Coords: "algebraic" (columns a, b, ... and rows from 1 at the top,
	// Othello), "renju" (columns a, b, ... and rows from 1 at the bottom,
	// Gomoku: h8 is the centre of 15x15), "index" (columns and rows from
	// 0, as a protocol counts them), or "squares" (the dark squares numbered
	// 1-32 row by row from the top, checkers).
	Coords string `json:"coords"`
	// Pieces is what the pieces are called: "discs", "stones".
	Pieces string `json:"pieces"`
	// Win and Draw say how a game ends normally, in words ("five in a
	// row", "board full"); empty where the score says it (Othello).
	Win  string `json:"win,omitempty"`
	Draw string `json:"draw,omitempty"`
}

var (
	mu       sync.RWMutex
	registry = map[string]Game{}
)

// Register adds a game; a name registered twice panics, as it is a
// programming error.
func Register(g Game) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[g.Name]; dup {
		panic("games: " + g.Name + " registered twice")
	}
	registry[g.Name] = g
}

// Lookup returns a registered game.
func Lookup(name string) (Game, bool) {
	mu.RLock()
	defer mu.RUnlock()
	g, ok := registry[name]
	return g, ok
}

// Names lists the registered games in their Order.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(registry[a].Order, registry[b].Order), strings.Compare(a, b))
	})
	return names
}

// Unknown is the message for a game name that is not registered.
func Unknown(name string) string {
	return fmt.Sprintf("unknown game %q, want one of %s", name, strings.Join(Names(), ", "))
}

// Text names a move of a game for people: the game's notation, "pass", or
// "x,y" for a game nobody registered.
func Text(game string, m Move) string {
	if m.Pass {
		return "pass"
	}
	if g, ok := Lookup(game); ok && g.Notation != nil {
		return g.Notation(m)
	}
	return strconv.Itoa(m.X) + "," + strconv.Itoa(m.Y)
}

// MoveView is a move as people and tools read it (the API, `taikai match
// --json`, the live view): a pass has null coordinates and the text "pass".
type MoveView struct {
	Ply   int    `json:"ply,omitempty"`
	Color string `json:"color"`
	X     *int   `json:"x"`
	Y     *int   `json:"y"`
	Text  string `json:"text"`
	MS    int64  `json:"ms"`
	Auto  bool   `json:"auto,omitempty"`
	// Opening: one of the moves of the opening the game started from.
	Opening bool `json:"opening,omitempty"`
	// Path: where a piece that moves went from (x, y), in order, as [x, y]
	// pairs (checkers); absent for games that place pieces.
	Path [][2]int `json:"path,omitempty"`
	// Note: what the engine said about its move (an NBoard evaluation, a
	// brain's MESSAGE): the last thing, when it said several.
	Note string `json:"note,omitempty"`
	// Notes: everything it said about its move, in order, when that is
	// more than one thing (a brain's MESSAGEs); Note is the last of them.
	Notes []string `json:"notes,omitempty"`
}

// View renders move number ply (from 1) of a game of the given kind.
func (p Ply) View(game string, ply int) MoveView {
	v := MoveView{Ply: ply, Color: p.Color.String(), Text: Text(game, p.Move), MS: p.MS, Auto: p.Auto, Note: p.Note}
	if notes := strings.Split(p.Note, "\n"); len(notes) > 1 {
		v.Note, v.Notes = notes[len(notes)-1], notes
	}
	if !p.Pass {
		x, y := p.X, p.Y
		v.X, v.Y = &x, &y
	}
	for _, q := range p.Path {
		v.Path = append(v.Path, [2]int{q.X, q.Y})
	}
	return v
}
