package storage_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

func open(tb testing.TB) *storage.DB {
	tb.Helper()
	db, err := storage.Open(context.Background(), filepath.Join(tb.TempDir(), "t.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// field registers n engines and a round robin between them.
func field(tb testing.TB, db *storage.DB, n, legs int) *tournament.Tournament {
	tb.Helper()
	return running(tb, db, n, &tournament.Tournament{Name: "t", Settings: tournament.Settings{Game: "othello"}, GamesPerPair: legs, Seed: 1})
}

// running registers n engines as t's entrants, stores t and marks it running.
func running(tb testing.TB, db *storage.DB, n int, t *tournament.Tournament) *tournament.Tournament {
	tb.Helper()
	ctx := context.Background()
	for i := range n {
		e := engines.Engine{Name: fmt.Sprintf("e%d", i), Game: "othello", Protocol: "othello-board", Builtin: "othello-random"}
		if err := db.CreateEngine(ctx, &e); err != nil {
			tb.Fatal(err)
		}
		t.Engines = append(t.Engines, e.ID)
	}
	if err := t.Validate(); err != nil {
		tb.Fatal(err)
	}
	if err := db.CreateTournament(ctx, t); err != nil {
		tb.Fatal(err)
	}
	if err := db.SetTournamentStatus(ctx, t.ID, tournament.StatusRunning); err != nil {
		tb.Fatal(err)
	}
	return t
}

// randomGame plays random legal Othello moves to produce a realistic record.
func randomGame(rng *rand.Rand) ([]games.Ply, [2]int, games.Color) {
	var moves []games.Ply
	b := othello.New()
	for !b.Over() {
		m := games.Ply{Color: games.Color(b.Turn()), Move: games.Move{X: -1, Y: -1, Pass: true}, MS: int64(rng.IntN(3000))}
		s := othello.Pass
		if legal := othello.Squares(b.Legal()); len(legal) > 0 {
			s = legal[rng.IntN(len(legal))]
			m.X, m.Y, m.Pass = s.X(), s.Y(), false
		}
		if _, err := b.Play(s); err != nil {
			panic(err)
		}
		moves = append(moves, m)
	}
	nb, nw := b.Count()
	w := games.None
	switch {
	case nb > nw:
		w = games.Black
	case nw > nb:
		w = games.White
	}
	return moves, [2]int{nb, nw}, w
}

// play stores n games of t with random outcomes; some are aborted.
func play(tb testing.TB, db *storage.DB, t *tournament.Tournament, n int, rng *rand.Rand) {
	tb.Helper()
	ctx := context.Background()
	sched := t.Schedule()
	for range n {
		idx, ok, err := db.NextIndex(ctx, t)
		if err != nil || !ok {
			tb.Fatalf("NextIndex: %v %v", ok, err)
		}
		p := sched.Game(idx)
		b, w := t.Engines[p.Black], t.Engines[p.White]
		id, err := db.StartGame(ctx, t, p, b, w, 1)
		if err != nil {
			tb.Fatal(err)
		}
		moves, stones, winner := randomGame(rng)
		played := &tournament.Played{
			Spec:   tournament.GameSpec{ID: id, TournamentID: t.ID, Index: idx, Settings: t.Settings, Black: engines.Engine{ID: b}, White: engines.Engine{ID: w}},
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

func sortedStandings(tb testing.TB, db *storage.DB, id int64) ([]tournament.Standing, []tournament.PairResult) {
	tb.Helper()
	rows, pairs, err := db.Standings(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].EngineID < rows[j].EngineID })
	sort.Slice(pairs, func(i, j int) bool {
		return pairs[i].A < pairs[j].A || pairs[i].A == pairs[j].A && pairs[i].B < pairs[j].B
	})
	return rows, pairs
}

// Standings kept game by game equal a recount from the games table; aborted
// games are not scored and their indexes are played again.
func TestStandingsEqualRecount(t *testing.T) {
	db := open(t)
	tr := field(t, db, 5, 6)
	play(t, db, tr, 50, rand.New(rand.NewPCG(1, 2)))
	rows, pairs := sortedStandings(t, db, tr.ID)
	counted, _ := db.Tournament(context.Background(), tr.ID)
	if err := db.Recount(context.Background(), tr.ID); err != nil {
		t.Fatal(err)
	}
	rows2, pairs2 := sortedStandings(t, db, tr.ID)
	if !reflect.DeepEqual(rows, rows2) || !reflect.DeepEqual(pairs, pairs2) {
		t.Errorf("standings kept %v %v, recount %v %v", rows, pairs, rows2, pairs2)
	}
	recounted, _ := db.Tournament(context.Background(), tr.ID)
	if counted.FinishedGames != recounted.FinishedGames {
		t.Errorf("finished games kept %d, recount %d", counted.FinishedGames, recounted.FinishedGames)
	}
	var games int64
	for _, r := range rows {
		games += r.Games
		if r.Wins+r.Draws+r.Losses != r.Games {
			t.Errorf("engine %d: %d+%d+%d != %d games", r.EngineID, r.Wins, r.Draws, r.Losses, r.Games)
		}
	}
	if games != 2*counted.FinishedGames {
		t.Errorf("%d engine-games for %d finished games", games, counted.FinishedGames)
	}
}

// A game is stored once: finishing it again, or after Recover marked it
// aborted, changes nothing; the aborted index is offered again first.
func TestFinishOnceAndRecover(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	tr := field(t, db, 3, 2)
	p0 := tr.Schedule().Game(0)
	id0, _ := db.StartGame(ctx, tr, p0, tr.Engines[p0.Black], tr.Engines[p0.White], 1)
	p1 := tr.Schedule().Game(1)
	id1, _ := db.StartGame(ctx, tr, p1, tr.Engines[p1.Black], tr.Engines[p1.White], 1)
	done := &tournament.Played{Spec: tournament.GameSpec{ID: id0, TournamentID: tr.ID, Settings: tr.Settings, Black: engines.Engine{ID: tr.Engines[p0.Black]}, White: engines.Engine{ID: tr.Engines[p0.White]}},
		Record: games.Record{Outcome: games.Outcome{Winner: games.Black, Reason: games.ReasonNormal}}, EndedAt: time.Now()}
	for range 2 {
		if err := db.FinishGame(ctx, done); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.Recover(ctx); err != nil || n != 1 {
		t.Fatalf("Recover = %d, %v; want 1 running game aborted", n, err)
	}
	// The interrupted game's late result must not count.
	late := *done
	late.Spec.ID = id1
	if err := db.FinishGame(ctx, &late); err != nil {
		t.Fatal(err)
	}
	got, _ := db.Tournament(ctx, tr.ID)
	if got.FinishedGames != 1 {
		t.Errorf("finished games %d, want 1", got.FinishedGames)
	}
	idx, ok, err := db.NextIndex(ctx, tr)
	if err != nil || !ok || idx != 1 {
		t.Errorf("NextIndex = %d %v %v, want the aborted index 1", idx, ok, err)
	}
	g, _ := db.Game(ctx, id1)
	if g.Status != tournament.GameAborted {
		t.Errorf("interrupted game status %q, want aborted", g.Status)
	}
}

// Moves go through the compact encoding unchanged, passes and server moves
// included.
func TestMovesRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	tr := field(t, db, 2, 1)
	moves, stones, w := randomGame(rand.New(rand.NewPCG(5, 5)))
	moves[3].Auto = true
	moves[4].Note = "eval -1.00" // what a pipe engine said about its move
	moves = append(moves, games.Ply{Color: moves[len(moves)-1].Color.Opponent(), Move: games.Move{X: -1, Y: -1, Pass: true}, Auto: true, MS: 20000})
	p := tr.Schedule().Game(0)
	id, _ := db.StartGame(ctx, tr, p, tr.Engines[p.Black], tr.Engines[p.White], 1)
	err := db.FinishGame(ctx, &tournament.Played{Spec: tournament.GameSpec{ID: id, TournamentID: tr.ID, Settings: tr.Settings, Black: engines.Engine{ID: 1}, White: engines.Engine{ID: 2}},
		Record: games.Record{Moves: moves, Stones: stones, Outcome: games.Outcome{Winner: w, Reason: games.ReasonNormal}}, EndedAt: time.Now(),
		ConnectMS: [2]int64{7012, 35}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := db.Game(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g.Moves, moves) {
		t.Errorf("moves changed in the store:\n got %v\nwant %v", g.Moves, moves)
	}
	if g.ConnectMS != [2]int64{7012, 35} {
		t.Errorf("times to connect %v, want [7012 35]", g.ConnectMS)
	}
}

// BenchmarkCreateRoundRobin1000 creates a 1,000-engine double round robin
// (999,000 games): the schedule is computed, so only entrants are written.
func BenchmarkCreateRoundRobin1000(b *testing.B) {
	ctx := context.Background()
	db := open(b)
	var ids []int64
	for i := range 1000 {
		e := engines.Engine{Name: fmt.Sprintf("e%d", i), Game: "othello", Protocol: "othello-board", Builtin: "othello-random"}
		if err := db.CreateEngine(ctx, &e); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	b.ReportAllocs()
	for b.Loop() {
		t := &tournament.Tournament{Name: "big", Settings: tournament.Settings{Game: "othello"}, Engines: ids, GamesPerPair: 2, Seed: 1}
		if err := t.Validate(); err != nil {
			b.Fatal(err)
		}
		if err := db.CreateTournament(ctx, t); err != nil {
			b.Fatal(err)
		}
		if t.TotalGames != 999000 {
			b.Fatalf("total %d", t.TotalGames)
		}
		// The last game of the schedule is one computation away.
		if p := t.Schedule().Game(t.TotalGames - 1); p.Black == p.White {
			b.Fatal("bad pairing")
		}
	}
}

// BenchmarkStandings1M reads the table of a tournament of 999,900 generated
// games between 100 engines, with Elo by maximum likelihood.
func BenchmarkStandings1M(b *testing.B) {
	ctx := context.Background()
	db := open(b)
	tr := field(b, db, 100, 202)
	if err := bulkGames(ctx, db, tr, rand.New(rand.NewPCG(3, 4))); err != nil {
		b.Fatal(err)
	}
	if err := db.Recount(ctx, tr.ID); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rows, pairs, err := db.Standings(ctx, tr.ID)
		if err != nil {
			b.Fatal(err)
		}
		rows = tournament.Table(rows, pairs)
		if len(rows) != 100 || rows[0].Games != 99*202 {
			b.Fatalf("%d rows, %d games for the first, want 100 rows of %d games", len(rows), rows[0].Games, 99*202)
		}
	}
}

// bulkGames writes every game of a schedule as finished, in one transaction,
// with random results (as a long tournament would leave them).
func bulkGames(ctx context.Context, db *storage.DB, t *tournament.Tournament, rng *rand.Rand) error {
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
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO games (tournament_id, idx, black_id, white_id, status, result, reason, plies, black_stones, white_stones, seed, started_at, ended_at)
		VALUES (?, ?, ?, ?, 'finished', ?, 'normal', 60, ?, ?, 0, 0, 0)`)
	if err != nil {
		return err
	}
	sched := t.Schedule()
	for k := range sched.Total() {
		p := sched.Game(k)
		nb := rng.IntN(65)
		nw := 64 - nb
		res := "draw"
		if nb > nw {
			res = "black"
		} else if nw > nb {
			res = "white"
		}
		if _, err := stmt.ExecContext(ctx, t.ID, k, t.Engines[p.Black], t.Engines[p.White], res, nb, nw); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tournaments SET next_index = total_games WHERE id = ?`, t.ID); err != nil {
		return err
	}
	return tx.Commit()
}

// The tournament list carries each tournament's entrants in seat order, and
// EngineNames names every entrant, a deleted engine too, and refuses an id
// nobody registered.
func TestTournamentListEntrantsAndNames(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	a := field(t, db, 3, 1)
	// Two more tournaments of the same engines in other seat orders; b runs.
	create := func(name string, ids ...int64) *tournament.Tournament {
		tr := &tournament.Tournament{Name: name, Settings: tournament.Settings{Game: "othello"}, GamesPerPair: 1, Seed: 1, Engines: ids}
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := db.CreateTournament(ctx, tr); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	b := create("b", a.Engines[1], a.Engines[0])
	if err := db.SetTournamentStatus(ctx, b.ID, tournament.StatusRunning); err != nil {
		t.Fatal(err)
	}
	c := create("c", a.Engines[2], a.Engines[0], a.Engines[1])
	list, err := db.Tournaments(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	for _, tr := range list {
		got[tr.ID] = fmt.Sprint(tr.Engines)
	}
	want := map[int64]string{a.ID: fmt.Sprint(a.Engines), b.ID: fmt.Sprint(b.Engines), c.ID: fmt.Sprint(c.Engines)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entrants by tournament %v, want %v", got, want)
	}
	running, err := db.TournamentsWithStatus(ctx, tournament.StatusRunning)
	if err != nil || len(running) != 2 || fmt.Sprint(running[1].Engines) != fmt.Sprint(b.Engines) {
		t.Errorf("running tournaments %+v (%v), want a and b with their entrants", running, err)
	}

	for _, tr := range []*tournament.Tournament{a, b, c} {
		if err := db.SetTournamentStatus(ctx, tr.ID, tournament.StatusCancelled); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.DeleteEngine(ctx, a.Engines[1]); err != nil {
		t.Fatal(err)
	}
	names, err := db.EngineNames(ctx, append(slices.Clone(a.Engines), c.Engines...))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 3 || names[a.Engines[0]] != "e0" || names[a.Engines[1]] != "e1" || names[a.Engines[2]] != "e2" {
		t.Errorf("names %v, want e0, e1 (deleted) and e2", names)
	}
	if _, err := db.EngineNames(ctx, []int64{a.Engines[0], 9999}); games.ErrorCode(err) != games.ENotFound {
		t.Errorf("an unknown engine id: %v, want not_found", err)
	}
}

// BenchmarkTournamentList lists 200 tournaments of 10 entrants each.
func BenchmarkTournamentList(b *testing.B) {
	ctx := context.Background()
	db := open(b)
	var ids []int64
	for i := range 10 {
		e := engines.Engine{Name: fmt.Sprintf("e%d", i), Game: "othello", Protocol: "othello-board", Builtin: "othello-random"}
		if err := db.CreateEngine(ctx, &e); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	for i := range 200 {
		t := &tournament.Tournament{Name: fmt.Sprintf("t%d", i), Settings: tournament.Settings{Game: "othello"}, GamesPerPair: 1, Seed: 1, Engines: ids}
		if err := t.Validate(); err != nil {
			b.Fatal(err)
		}
		if err := db.CreateTournament(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		list, err := db.Tournaments(ctx)
		if err != nil || len(list) != 200 || len(list[0].Engines) != 10 {
			b.Fatalf("%d tournaments, %v", len(list), err)
		}
	}
}
