package tournament

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games/openings"
)

// ParseSlot reads a Slot.Key ("r2m3g1"); the entrants are not in it.
func ParseSlot(key string) (Slot, error) {
	var s Slot
	if _, err := fmt.Sscanf(key, "r%dm%dg%d", &s.Round, &s.Match, &s.Game); err != nil || s.Key() != key {
		return Slot{}, fmt.Errorf("bad slot %q", key)
	}
	return s, nil
}

// slotPair numbers the game pair a slot's game is one of (games 2k and 2k+1
// of a match), unique in its tournament, from 1.
func slotPair(s Slot) int64 {
	return (int64(s.Round)*10000+int64(s.Match))*1000 + int64(s.Game/2) + 1
}

// scheduleDynamic plays a swiss or knockout tournament: it asks the plan for
// the games that may start, given those started and finished (read from the
// store, so that a restart goes on where it stopped), starts them up to the
// tournament's concurrency, and finishes the tournament when the plan is done.
func (s *Service) scheduleDynamic(ctx context.Context, t *Tournament, suite *openings.Suite) {
	log := s.log().With("tournament", t.ID)
	plan, err := t.Plan()
	if err != nil {
		log.Error("tournament cannot run", "err", err)
		return
	}
	cur, err := s.Store.Tournament(ctx, t.ID)
	if err != nil {
		log.Error("tournament cannot run", "err", err)
		return
	}
	next := cur.NextIndex // games are numbered as they start
	run := newRunning(t.Concurrency)
	var played sync.WaitGroup
	defer played.Wait()
	cache := map[int64]engines.Engine{}
	var total int64 = -1
	for {
		run.collect()
		if ctx.Err() != nil {
			return
		}
		if run.full() {
			if !run.wait(ctx) {
				return
			}
			continue
		}
		started, finished, err := s.Store.Slots(ctx, t)
		if err != nil {
			if !s.failedNext(ctx, log, "next game", err, "tournament", t.ID) {
				return
			}
			continue
		}
		ready, done := plan.Next(started, finished)
		if n := plan.Total(finished); n != total {
			if err := s.Store.SetTotal(ctx, t.ID, n); err != nil {
				log.Error("games expected not stored (tried again with the next game)", "total", n, "err", err)
			} else {
				total = n
			}
		}
		if done {
			break
		}
		if len(ready) == 0 {
			// Waiting for a game of this round (or of this match) to end.
			if run.n == 0 {
				// No game running to wait for: the plan is stuck (a bug), and
				// waiting would hang the tournament without a word.
				log.Error("tournament stuck: its plan has no game to start and none is running", "finished_games", len(finished))
				return
			}
			if !run.wait(ctx) {
				return
			}
			continue
		}
		sl := ready[0]
		p := Pairing{Index: next, Round: int64(sl.Round), Black: sl.Black, White: sl.White, Slot: sl.Key()}
		if t.Settings.Paired() {
			p.Pair = slotPair(sl)
		}
		spec, err := s.prepare(ctx, t, p, cache, suite)
		if err != nil {
			if !s.failedNext(ctx, log, "start game", err, "tournament", t.ID, "slot", p.Slot) {
				return
			}
			continue
		}
		s.storeOK()
		next++
		run.start(&played, func() {
			if !s.play(ctx, t, spec) && ctx.Err() == nil {
				sleepCtx(ctx, time.Second)
			}
		})
	}
	played.Wait()
	if err := s.Store.SetTournamentStatus(context.WithoutCancel(ctx), t.ID, StatusFinished); err != nil {
		log.Error("tournament over but not marked finished", "err", err)
	}
	cur, err = s.Store.Tournament(context.WithoutCancel(ctx), t.ID)
	if err != nil {
		return
	}
	log.Info("tournament over", "status", cur.Status, "finished_games", cur.FinishedGames)
	s.publish(Event{Type: EventTournament, TournamentID: t.ID, Tournament: cur})
}

// SwissTable adds to a swiss tournament's table (as Table made it) the points
// of its byes and the Buchholz tie-break, and sorts it again.
func SwissTable(t *Tournament, rows []Standing, finished []SlotResult) ([]Standing, error) {
	plan, err := t.Plan()
	if err != nil {
		return nil, err
	}
	byes := plan.Byes(finished)
	buch := Buchholz(len(t.Engines), finished, byes, float64(t.GamesPerPair))
	seat := make(map[int64]int, len(t.Engines))
	for i, id := range t.Engines {
		seat[id] = i
	}
	for i := range rows {
		r := &rows[i]
		k, ok := seat[r.EngineID]
		if !ok {
			continue
		}
		for _, list := range byes {
			for _, e := range list {
				if e == k {
					r.Byes++
					r.Points += float64(t.GamesPerPair)
				}
			}
		}
		r.Buchholz = buch[k]
	}
	sortTable(rows)
	return rows, nil
}
