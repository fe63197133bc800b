package tournament_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/stats"
)

// unstorable is a real store whose FinishGame fails for the first game it is
// given, until that game is stored as aborted.
type unstorable struct {
	*storage.DB
	mu     sync.Mutex
	victim int64
	fails  int
}

func (u *unstorable) FinishGame(ctx context.Context, p *tournament.Played) error {
	u.mu.Lock()
	if u.victim == 0 {
		u.victim = p.Spec.ID
	}
	fail := p.Spec.ID == u.victim && p.Outcome.Reason != games.ReasonAborted
	if fail {
		u.fails++
	}
	u.mu.Unlock()
	if fail {
		return errors.New("disk on fire")
	}
	return u.DB.FinishGame(ctx, p)
}

// A game that cannot be stored is stored as aborted and played again in the
// same run, even when it was the last one running; before, its running row
// held the tournament until a restart.
func TestUnstorableGameIsPlayedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "taikai.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := &unstorable{DB: db}
	tour := &tournament.Tournament{Name: "t", Settings: tournament.Settings{Game: "othello", MoveTimeMS: 2000}, GamesPerPair: 2, Concurrency: 2}
	createBetweenBuiltins(t, db, tour, "")
	svc := &tournament.Service{Store: store, Runner: newRunner(t)}
	defer svc.Close()
	if _, err := svc.Start(ctx, tour.ID); err != nil {
		t.Fatal(err)
	}
	cur := waitFinished(t, db, tour.ID)
	if cur.FinishedGames != cur.TotalGames {
		t.Errorf("finished %d of %d games", cur.FinishedGames, cur.TotalGames)
	}
	store.mu.Lock()
	fails := store.fails
	store.mu.Unlock()
	if fails != 6 {
		t.Errorf("FinishGame failed %d times for the victim, want 6 (one try and five retries)", fails)
	}
	games, err := db.Games(ctx, tour.ID, storage.GameFilter{})
	if err != nil {
		t.Fatal(err)
	}
	finished := map[int64]int{}
	aborted := 0
	for _, g := range games {
		switch g.Status {
		case tournament.GameFinished:
			finished[g.Index]++
		case tournament.GameAborted:
			aborted++
			if g.ID != store.victim {
				t.Errorf("game %d aborted, want only the unstorable %d", g.ID, store.victim)
			}
		default:
			t.Errorf("game %d left %s", g.ID, g.Status)
		}
	}
	if aborted != 1 || len(finished) != int(cur.TotalGames) {
		t.Errorf("%d aborted, %d indexes finished; want 1 and %d", aborted, len(finished), cur.TotalGames)
	}
	for idx, n := range finished {
		if n != 1 {
			t.Errorf("index %d finished %d times", idx, n)
		}
	}
}

// countingRecords is a real store that counts the reads of engine records.
type countingRecords struct {
	*storage.DB
	mu    sync.Mutex
	reads int
}

func (c *countingRecords) Tallies(ctx context.Context, tid int64, ids [2]int64) ([2]engines.Tally, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.DB.Tallies(ctx, tid, ids)
}

// The service reads the engines' tournament records before a game only when
// a seat speaks othello-move, whose BYE reports them.
func TestRecordsReadOnlyForOthelloMove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "taikai.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := &countingRecords{DB: db}
	svc := &tournament.Service{Store: store, Runner: newRunner(t)}
	defer svc.Close()
	for _, tc := range []struct {
		proto     string
		wantReads int
	}{{"othello-board", 0}, {"othello-move", 2}} {
		tour := &tournament.Tournament{Name: tc.proto, Settings: tournament.Settings{Game: "othello", MoveTimeMS: 2000}, GamesPerPair: 2}
		createBetweenBuiltins(t, db, tour, tc.proto)
		store.mu.Lock()
		store.reads = 0
		store.mu.Unlock()
		if _, err := svc.Start(ctx, tour.ID); err != nil {
			t.Fatal(err)
		}
		waitFinished(t, db, tour.ID)
		store.mu.Lock()
		reads := store.reads
		store.mu.Unlock()
		if reads != tc.wantReads {
			t.Errorf("%s: %d record reads for 2 games, want %d", tc.proto, reads, tc.wantReads)
		}
	}
}

// createBetweenBuiltins stores tour between two built-in engines speaking
// proto ("" for the game's default), registered under names of their own.
func createBetweenBuiltins(tb testing.TB, db *storage.DB, tour *tournament.Tournament, proto string) {
	tb.Helper()
	ctx := context.Background()
	for _, name := range []string{"othello-random", "othello-greedy"} {
		e := builtinEngine(name, proto)
		if proto != "" {
			e.Name += "-" + proto
		}
		if err := db.CreateEngine(ctx, &e); err != nil {
			tb.Fatal(err)
		}
		tour.Engines = append(tour.Engines, e.ID)
	}
	if err := tour.Validate(); err != nil {
		tb.Fatal(err)
	}
	if err := db.CreateTournament(ctx, tour); err != nil {
		tb.Fatal(err)
	}
}

// waitFinished waits, for at most 60 s, until the tournament has finished.
func waitFinished(tb testing.TB, db *storage.DB, id int64) *tournament.Tournament {
	tb.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		cur, err := db.Tournament(context.Background(), id)
		if err != nil {
			tb.Fatal(err)
		}
		if cur.Status == tournament.StatusFinished {
			return cur
		}
		if time.Now().After(deadline) {
			tb.Fatalf("tournament %d still %s with %d of %d games after 60 s", id, cur.Status, cur.FinishedGames, cur.TotalGames)
		}
	}
}

// events records what a Service publishes, but the moves.
type events struct {
	mu   sync.Mutex
	list []tournament.Event
}

func (e *events) Publish(ev tournament.Event) {
	if ev.Type == tournament.EventMove {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, ev)
}

// Run plays a match (taikai match's way of running on the Service) until
// its SPRT decides, and returns it finished; the decision is published, with
// its LLR past the bound, before the ends of the games it stopped.
func TestRunStopsWhenTheSPRTDecides(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "taikai.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sprt, err := stats.ParseSPRT("elo0=0", "elo1=50")
	if err != nil {
		t.Fatal(err)
	}
	// Random against greedy: random's SPRT decides H0 within some tens of
	// games, well before the 400.
	tour := &tournament.Tournament{Name: "m", Kind: tournament.KindMatch, GamesPerPair: 400, Concurrency: 2,
		Settings: tournament.Settings{Game: "othello", MoveTimeMS: 2000, SPRT: &sprt}}
	createBetweenBuiltins(t, db, tour, "")
	sink := &events{}
	svc := &tournament.Service{Store: db, Runner: newRunner(t), Sink: sink}
	defer svc.Close()
	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cur, err := svc.Run(rctx, tour.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rctx.Err() != nil {
		t.Fatalf("the SPRT did not decide within 3 minutes: %d games", cur.FinishedGames)
	}
	if cur.Status != tournament.StatusFinished || cur.FinishedGames >= cur.TotalGames {
		t.Errorf("status %s after %d of %d games; want finished early", cur.Status, cur.FinishedGames, cur.TotalGames)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	var decided *tournament.SPRTDecision
	for _, ev := range sink.list {
		switch {
		case ev.SPRT != nil && decided == nil:
			decided = ev.SPRT
			if ev.Tournament == nil || ev.Tournament.Status != tournament.StatusFinished {
				t.Errorf("the decision came with the tournament %+v, want it finished", ev.Tournament)
			}
		case ev.Type == tournament.EventGameEnded && ev.Played.Outcome.Reason == games.ReasonAborted && decided == nil:
			t.Errorf("game %d ended aborted before the SPRT's decision was told", ev.GameID)
		}
	}
	if decided == nil {
		t.Fatal("no SPRT decision published")
	}
	lo, _ := sprt.Bounds()
	if decided.Result != "H0" || decided.LLR > lo {
		t.Errorf("decision %+v; want H0 with the LLR at or under %.2f", decided, lo)
	}
	_, pairs, err := db.Standings(ctx, tour.ID)
	if err != nil || len(pairs) != 1 {
		t.Fatalf("pairs %v, %v", pairs, err)
	}
	t.Logf("%s after %d games, LLR %.2f; stored %+v", decided.Result, cur.FinishedGames, decided.LLR, pairs[0])
}
