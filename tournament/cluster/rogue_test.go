package cluster

import (
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/games"
	_ "github.com/taikai-dev/taikai/games/all"
	"github.com/taikai-dev/taikai/tournament"
)

// legalGame is a random Othello game played to its end under the rules.
func legalGame(tb testing.TB, seed uint64) games.Record {
	tb.Helper()
	g, ok := games.Lookup("othello")
	if !ok {
		tb.Fatal("no othello")
	}
	rules, err := g.New("", 8)
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	var rec games.Record
	passes := 0
	for rules.Turn() != games.None && !rules.Finished() && passes < 2 {
		m := games.PassMove
		if !rules.MustPass() {
			m = rules.Random(r)
		}
		rec.Moves = append(rec.Moves, games.Ply{Color: rules.Turn(), Move: m})
		rules.Play(m)
		if m.Pass {
			passes++
		} else {
			passes = 0
		}
	}
	rec.Outcome = games.Outcome{Winner: rules.Winner(), Reason: games.ReasonNormal}
	if w := rules.Winner(); w != games.None {
		rec.Outcome.Loser = w.Opponent()
	}
	return rec
}

// A rogue client on the workers' NATS (issue 36, item 4): a result from a
// worker that does not hold the game's claim is refused; the claim holder's
// result that does not replay under the rules ("white won, 0 plies") is
// stored as aborted, to be played again, never scored; ticks beyond the
// bound, or too big, are not shown.
func TestRogueResultsAndTicks(t *testing.T) {
	nc := embedded(t)
	ctx := context.Background()
	srv, err := NewServer(ctx, nc, 5*time.Second, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var shown atomic.Int64
	spec := tournament.GameSpec{ID: 7, Settings: tournament.Settings{Game: "othello", Size: 8},
		OnMove: func(tournament.Tick) { shown.Add(1) }}
	got := make(chan *tournament.Played, 1)
	go func() {
		p, stored := srv.Play(ctx, spec)
		stored(true)
		got <- p
	}()
	ask := func(kind string, v any) string {
		t.Helper()
		data, _ := json.Marshal(v)
		m, err := nc.Request(gameSubject(7, kind), data, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		return string(m.Data)
	}
	for deadline := time.Now().Add(30 * time.Second); ask("claim", claimMsg{Attempt: 1, Worker: "honest"}) != answerGo; {
		if time.Now().After(deadline) {
			t.Fatal("the game was never claimable")
		}
		time.Sleep(10 * time.Millisecond) // Play may not have queued it yet
	}
	// 3,000 ticks, and one of 5 KB.
	for i := range 3000 {
		data, _ := json.Marshal(tickMsg{Attempt: 1, Tick: tournament.Tick{Ply: i + 1}})
		nc.Publish(gameSubject(7, "tick"), data)
	}
	big, _ := json.Marshal(tickMsg{Attempt: 1, Tick: tournament.Tick{Ply: 1, Move: games.Ply{Note: strings.Repeat("x", 5000)}}})
	nc.Publish(gameSubject(7, "tick"), big)
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// A legal game, but not from the claim's worker.
	stolen := legalGame(t, 3)
	if a := ask("result", resultMsg{Attempt: 1, Worker: "mallory", Played: &tournament.Played{Record: stolen}}); a != answerStale {
		t.Errorf("a result from a worker without the claim: %s, want stale", a)
	}
	select {
	case p := <-got:
		t.Fatalf("a result from a worker without the claim was taken: %+v", p.Outcome)
	default:
	}
	// The claim's worker hands in a game the rules do not allow.
	fake := games.Record{Outcome: games.Outcome{Winner: games.White, Loser: games.Black, Reason: games.ReasonNormal}}
	ask("result", resultMsg{Attempt: 1, Worker: "honest", Played: &tournament.Played{Record: fake}})
	var p *tournament.Played
	select {
	case p = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("Play did not return")
	}
	t.Logf("fake result stored as %+v (%s); %d of 3,001 ticks shown; stats %+v", p.Outcome, p.Detail, shown.Load(), srv.Stats())
	if p.Outcome.Reason != games.ReasonAborted || !strings.Contains(p.Detail, "refused") {
		t.Errorf("'white won, 0 plies' stored as %+v (%s), want aborted (played again)", p.Outcome, p.Detail)
	}
	if n := shown.Load(); n > maxTicks {
		t.Errorf("%d ticks shown, want at most %d", n, maxTicks)
	}
	if st := srv.Stats(); st.Rejected != 2 {
		t.Errorf("stats %+v, want 2 rejected", st)
	}
}
