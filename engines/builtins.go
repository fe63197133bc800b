package engines

import (
	"slices"
	"sort"
)

// Builtin describes a built-in engine: a real client of the protocols, run as
// `taikai engine NAME` in its own process.
type Builtin struct {
	Name      string
	Game      string
	Protocols []string // default first
	About     string
}

var builtins = []Builtin{
	{"othello-random", "othello", []string{"othello-board", "othello-move", "nboard"}, "a uniformly random legal move"},
	{"othello-greedy", "othello", []string{"othello-board", "othello-move", "nboard"}, "seed 000's weighted-square table, without its threshold bug"},
	{"othello-alphabeta", "othello", []string{"othello-board", "othello-move", "nboard"}, "iterative-deepening alpha-beta, exact endgame"},
	{"gomoku-random", "gomoku", []string{"gomoku-turn", "pbrain"}, "seed 001's sample: a random point next to a stone"},
	{"gomoku-threat", "gomoku", []string{"gomoku-turn", "pbrain"}, "seed 003's threat scoring: win, block fours, build threes"},
	{"checkers-random", "checkers", []string{"checkers-board"}, "a uniformly random legal move"},
	{"checkers-minimax", "checkers", []string{"checkers-board"}, "seed 004's plain minimax, 4 plies, the seed's evaluation"},
	{"checkers-alphabeta", "checkers", []string{"checkers-board"}, "iterative-deepening alpha-beta under its move time"},
}

// LookupBuiltin finds a built-in engine by name.
func LookupBuiltin(name string) (Builtin, bool) {
	i := slices.IndexFunc(builtins, func(b Builtin) bool { return b.Name == name })
	if i < 0 {
		return Builtin{}, false
	}
	return builtins[i], true
}

// BuiltinNames lists the built-in engines in alphabetical order.
func BuiltinNames() []string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.Name
	}
	sort.Strings(names)
	return names
}

// Builtins lists the built-in engines.
func Builtins() []Builtin { return slices.Clone(builtins) }

// BuiltinCommand is the command line that runs a built-in engine from the taikai
// binary self, with the placeholders the launcher fills in.
func BuiltinCommand(self, name, protocol string) []string {
	return []string{self, "engine", name, "--protocol", protocol,
		"--host", "{host}", "--port", "{port}", "--color", "{color}",
		"--time-ms", "{time_ms}", "--name", "{name}"}
}
