package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

// demoFields are the engines of the demo round robins.
var demoFields = []struct {
	game    string
	engines []string
}{
	{"othello", []string{"othello-random", "othello-greedy", "othello-alphabeta"}},
	{"gomoku", []string{"gomoku-random", "gomoku-threat"}},
	{"checkers", []string{"checkers-random", "checkers-minimax", "checkers-alphabeta"}},
}

// startDemo registers the built-in engines (once) and starts a round robin per
// game with short move times: one demo per game, ever (a database that has
// had one keeps it, whatever became of it).
func startDemo(ctx context.Context, db *storage.DB, svc *tournament.Service, log *slog.Logger) error {
	list, err := db.Engines(ctx)
	if err != nil {
		return err
	}
	ids := map[string]int64{}
	for _, e := range list {
		if e.Builtin != "" && e.Name == e.Builtin {
			ids[e.Builtin] = e.ID
		}
	}
	for _, b := range engines.Builtins() {
		if _, ok := ids[b.Name]; ok {
			continue
		}
		e := engines.Engine{Name: b.Name, Game: b.Game, Protocol: b.Protocols[0], Builtin: b.Name}
		if err := db.CreateEngine(ctx, &e); err != nil {
			return fmt.Errorf("register %s: %w", b.Name, err)
		}
		ids[b.Name] = e.ID
	}
	ts, err := db.Tournaments(ctx)
	if err != nil {
		return err
	}
	for _, f := range demoFields {
		name := "Demo: " + f.game
		had := false
		for _, t := range ts {
			had = had || t.Name == name
		}
		if had {
			log.Info("demo tournament not started: this database has had one", "game", f.game)
			continue
		}
		// The built-ins answer at once: pace the moves so that people can follow.
		t := &tournament.Tournament{
			Name: name, Kind: tournament.KindRoundRobin, GamesPerPair: 10, Concurrency: 2, Seed: rand.Uint64(),
			Settings: tournament.Settings{Game: f.game, MoveTimeMS: 300, PaceMS: 400},
		}
		for _, n := range f.engines {
			t.Engines = append(t.Engines, ids[n])
		}
		if err := t.Validate(); err != nil {
			return err
		}
		if err := db.CreateTournament(ctx, t); err != nil {
			return err
		}
		if _, err := svc.Start(ctx, t.ID); err != nil {
			return err
		}
		log.Info("demo tournament started", "tournament", t.ID, "game", f.game, "games", t.TotalGames)
	}
	return nil
}
