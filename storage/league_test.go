package storage_test

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

// league registers n engines and a running league between them.
func league(tb testing.TB, db *storage.DB, n int) *tournament.Tournament {
	tb.Helper()
	return running(tb, db, n, &tournament.Tournament{Name: "league", Kind: tournament.KindLeague, Settings: tournament.Settings{Game: "othello"}, Seed: 1})
}

// playLeague plays n league games the scheduler's way: the next pair from
// the league's state, each game stored as started and finished (one in ten
// aborted, not counted).
func playLeague(tb testing.TB, db *storage.DB, t *tournament.Tournament, n int, next *int64, rng *rand.Rand) {
	tb.Helper()
	ctx := context.Background()
	for range n {
		st, err := db.LeagueState(ctx, t)
		if err != nil {
			tb.Fatal(err)
		}
		a, b, ok := tournament.NextLeaguePair(st, nil, t.PlacementGames)
		if !ok {
			tb.Fatalf("no pair in %+v", st)
		}
		seat := map[int64]int{}
		for i, id := range st.Entrants {
			seat[id] = i
		}
		p := tournament.Pairing{Index: *next, Black: seat[a.Engine], White: seat[b.Engine], Pair: *next + 1}
		*next++
		id, err := db.StartGame(ctx, t, p, a.Engine, b.Engine, 1)
		if err != nil {
			tb.Fatal(err)
		}
		moves, stones, winner := randomGame(rng)
		played := &tournament.Played{
			Spec:   tournament.GameSpec{ID: id, TournamentID: t.ID, Index: p.Index, Pair: p.Pair, Settings: t.Settings, Black: engines.Engine{ID: a.Engine}, White: engines.Engine{ID: b.Engine}},
			Record: games.Record{Moves: moves, Stones: stones, Outcome: games.Outcome{Winner: winner, Reason: games.ReasonNormal}}, EndedAt: time.Now(),
		}
		if rng.IntN(10) == 0 {
			played.Outcome = games.Outcome{Reason: games.ReasonAborted}
		}
		if err := db.FinishGame(ctx, played); err != nil {
			tb.Fatal(err)
		}
	}
}

// A league's results between versions, kept game by game, equal a recount
// of its games; games record the version each side played; a replaced
// version leaves the field and keeps its row; the league never finishes by
// itself.
func TestLeagueVersionsAndRecount(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	tr := league(t, db, 3)
	rng := rand.New(rand.NewPCG(1, 2))
	var next int64
	playLeague(t, db, tr, 30, &next, rng)
	e := engines.Engine{ID: tr.Engines[2], Name: "e2", Game: "othello", Protocol: "othello-board", Builtin: "othello-greedy"}
	v, err := db.ReplaceEngine(ctx, e, storage.Submission{})
	if err != nil || v != 2 {
		t.Fatalf("replace an engine of a running league: version %d, %v", v, err)
	}
	st, err := db.LeagueState(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	if want := (tournament.VersionKey{Engine: tr.Engines[2], Version: 2}); st.Field[2] != want {
		t.Errorf("field after the replacement %+v, want %+v last", st.Field, want)
	}
	playLeague(t, db, tr, 30, &next, rng)

	games, err := db.Games(ctx, tr.ID, storage.GameFilter{})
	if err != nil {
		t.Fatal(err)
	}
	versions := map[int]int{}
	for _, g := range games {
		if g.Black.Version == 0 || g.White.Version == 0 {
			t.Errorf("game %d has no version: %+v %+v", g.ID, g.Black, g.White)
		}
		if g.Black.EngineID == tr.Engines[2] {
			versions[g.Black.Version]++
		}
		if g.White.EngineID == tr.Engines[2] {
			versions[g.White.Version]++
		}
	}
	if versions[1] == 0 || versions[2] == 0 {
		t.Errorf("the replaced engine's games by version: %v", versions)
	}
	cur, err := db.Tournament(ctx, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Status != tournament.StatusRunning || cur.PlacementGames != tournament.DefaultPlacementGames {
		t.Errorf("league after 60 games: status %s, placement %d", cur.Status, cur.PlacementGames)
	}
	kept, err := db.Ladder(ctx, cur, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 4 {
		t.Errorf("ladder of every version: %d rows, want 4: %+v", len(kept), kept)
	}
	current, err := db.Ladder(ctx, cur, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range current {
		if !r.Current || r.EngineID == tr.Engines[2] && r.Version != 2 {
			t.Errorf("current ladder row %+v", r)
		}
		if r.EngineID == tr.Engines[2] && (r.Previous == nil || r.Previous.Version != 1 || r.EloChange == nil) {
			t.Errorf("the new version's row has no previous version: %+v", r)
		}
	}
	if err := db.Recount(ctx, tr.ID); err != nil {
		t.Fatal(err)
	}
	recounted, err := db.Ladder(ctx, cur, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kept, recounted) {
		t.Errorf("ladder kept game by game:\n%+v\nrecounted:\n%+v", kept, recounted)
	}
	ratings, err := db.VersionRatings(ctx, tr.Engines[2])
	if err != nil {
		t.Fatal(err)
	}
	if len(ratings[1]) != 1 || len(ratings[2]) != 1 || ratings[1][0].Current || !ratings[2][0].Current || ratings[1][0].TournamentID != tr.ID {
		t.Errorf("ratings of the replaced engine's versions: %+v", ratings)
	}
}

// A league game pair of which one game finished and the other never did
// (the server stopped) is listed to be completed, colours swapped.
func TestLeagueHalfPairs(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	tr := league(t, db, 2)
	a, b := tr.Engines[0], tr.Engines[1]
	id, err := db.StartGame(ctx, tr, tournament.Pairing{Index: 0, Black: 0, White: 1, Pair: 1}, a, b, 1)
	if err != nil {
		t.Fatal(err)
	}
	moves, stones, winner := randomGame(rand.New(rand.NewPCG(5, 6)))
	if err := db.FinishGame(ctx, &tournament.Played{Spec: tournament.GameSpec{ID: id, TournamentID: tr.ID, Pair: 1, Settings: tr.Settings, Black: engines.Engine{ID: a}, White: engines.Engine{ID: b}},
		Record: games.Record{Moves: moves, Stones: stones, Outcome: games.Outcome{Winner: winner, Reason: games.ReasonNormal}}, EndedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.StartGame(ctx, tr, tournament.Pairing{Index: 1, Black: 1, White: 0, Pair: 1}, b, a, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Recover(ctx); err != nil { // the server stopped
		t.Fatal(err)
	}
	half, err := db.LeagueHalfPairs(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	want := []tournament.LeagueGame{{Black: tournament.VersionKey{Engine: b, Version: 1}, White: tournament.VersionKey{Engine: a, Version: 1}, Pair: 1}}
	if !reflect.DeepEqual(half, want) {
		t.Errorf("half pairs %+v, want %+v", half, want)
	}
}

// BenchmarkLeagueNextPair measures what a league's scheduler does before
// each game with 40 entrants (ten of them on their second version) and
// 10,000 stored games: read the league's state and choose the next pair.
func BenchmarkLeagueNextPair(b *testing.B) {
	ctx := context.Background()
	db := open(b)
	tr := league(b, db, 40)
	for _, id := range tr.Engines[:10] {
		if _, err := db.ReplaceEngine(ctx, engines.Engine{ID: id, Game: "othello", Protocol: "othello-board", Builtin: "othello-greedy"}, storage.Submission{}); err != nil {
			b.Fatal(err)
		}
	}
	if err := bulkLeagueGames(ctx, db, tr, 10000, rand.New(rand.NewPCG(7, 8))); err != nil {
		b.Fatal(err)
	}
	if err := db.Recount(ctx, tr.ID); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st, err := db.LeagueState(ctx, tr)
		if err != nil {
			b.Fatal(err)
		}
		if len(st.Field) != 40 || len(st.Results) < 780 {
			b.Fatalf("%d versions in the field, %d results", len(st.Field), len(st.Results))
		}
		if _, _, ok := tournament.NextLeaguePair(st, st.Running, tr.PlacementGames); !ok {
			b.Fatal("no pair")
		}
	}
}

// bulkLeagueGames writes n finished league games between random entrants,
// an engine replaced (version 2) playing either version, in one transaction.
func bulkLeagueGames(ctx context.Context, db *storage.DB, t *tournament.Tournament, n int, rng *rand.Rand) error {
	raw, err := sql.Open("sqlite3", "file:"+db.Path()+"?_journal_mode=WAL&_busy_timeout=10000")
	if err != nil {
		return err
	}
	defer raw.Close()
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO games (tournament_id, idx, black_id, white_id, status, result, reason, plies, black_stones, white_stones, seed, started_at, ended_at, pair, black_version, white_version)
		VALUES (?, ?, ?, ?, 'finished', ?, 'normal', 60, 32, 32, 0, 0, 0, ?, ?, ?)`)
	if err != nil {
		return err
	}
	version := func(seat int) int {
		if seat < 10 {
			return 1 + rng.IntN(2)
		}
		return 1
	}
	for k := range n {
		bs := rng.IntN(len(t.Engines))
		ws := (bs + 1 + rng.IntN(len(t.Engines)-1)) % len(t.Engines)
		res := []string{"black", "white", "draw"}[rng.IntN(3)]
		if _, err := stmt.ExecContext(ctx, t.ID, k, t.Engines[bs], t.Engines[ws], res, k/2+1, version(bs), version(ws)); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tournaments SET next_index = ? WHERE id = ?`, n, t.ID); err != nil {
		return err
	}
	return tx.Commit()
}
