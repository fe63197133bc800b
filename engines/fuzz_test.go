package engines_test

import (
	"slices"
	"testing"

	"github.com/taikai-dev/taikai/engines"
)

// A command line as a person types it: splitting never panics, and a
// command quoted back splits into the same arguments.
func FuzzSplitCommand(f *testing.F) {
	for _, seed := range []string{`java OthelloClient.java {host}`, `./client '{host}' "{port}" -b`, `a\ b "c\"d" 'e''f'`, `"unterminated`, ``} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv, err := engines.SplitCommand(s)
		if err != nil || len(argv) == 0 {
			return
		}
		again, err := engines.SplitCommand(engines.QuoteCommand(argv))
		if err != nil || !slices.Equal(again, argv) {
			t.Fatalf("%q split into %q, quoted back as %q, which splits into %q (%v)", s, argv, engines.QuoteCommand(argv), again, err)
		}
	})
}

// An engine spec of taikai match, on any text: never a panic, and a spec
// that parses names an engine that validates.
func FuzzParseSpec(f *testing.F) {
	for _, seed := range []string{"othello-greedy", "name=seed cmd='java OthelloClient.java {host}' dir=x port=46000 protocol=othello-board", "name= cmd=", "port=x", "builtin=gomoku-threat"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		e, err := engines.ParseSpec(spec, "othello")
		if err != nil {
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("%q parsed as %+v, which does not validate: %v", spec, e, err)
		}
	})
}
