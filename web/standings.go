package web

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

// standingsFeed sends a tournament's table to its viewers when a game ends.
// It reads the table outside Live's goroutine; while one read of a
// tournament is in flight, later requests fold into one more read.
type standingsFeed struct {
	db  *storage.DB
	hub *Hub
	log *slog.Logger

	ctx    context.Context // cancelled by close: ends the reads
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	pending map[int64]int // tournaments being read: 1, or 2 if they changed meanwhile
}

func newStandingsFeed(db *storage.DB, hub *Hub, log *slog.Logger) *standingsFeed {
	f := &standingsFeed{db: db, hub: hub, log: log, pending: map[int64]int{}}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f
}

// push reads a tournament's table and broadcasts it.
func (f *standingsFeed) push(tid int64) {
	if f.db == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending[tid] > 0 {
		f.pending[tid] = 2
		return
	}
	f.pending[tid] = 1
	f.wg.Go(func() {
		for {
			ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
			t, err := f.table(ctx, tid)
			cancel()
			if err == nil {
				f.hub.Broadcast(mustJSON(t), tournamentTopic(tid))
			} else if f.ctx.Err() == nil { // not the feed closing
				f.log.Error("standings for viewers", "tournament", tid, "err", err)
			}
			f.mu.Lock()
			if f.pending[tid] > 1 && f.ctx.Err() == nil {
				f.pending[tid] = 1
				f.mu.Unlock()
				continue
			}
			delete(f.pending, tid)
			f.mu.Unlock()
			return
		}
	})
}

// close ends the reads in flight and waits for them.
func (f *standingsFeed) close() {
	f.cancel()
	f.wg.Wait()
}

// table is a tournament's table as the "standings" message has it.
func (f *standingsFeed) table(ctx context.Context, tid int64) (map[string]any, error) {
	t, err := f.db.Tournament(ctx, tid)
	if err != nil {
		return nil, err
	}
	if t.Kind == tournament.KindLeague {
		rows, err := f.db.Ladder(ctx, t, false)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "standings", "tournament": tournamentSummary(t), "standings": rows}, nil
	}
	rows, pairs, err := standingsOf(ctx, f.db, t)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"type": "standings", "tournament": tournamentSummary(t),
		"standings": nonNilStandings(rows), "crosstable": crosstable(rows, pairs),
	}, nil
}

// standingsOf returns a tournament's table, best first (swiss: with its byes
// and the Buchholz tie-break), and its pair results.
func standingsOf(ctx context.Context, db *storage.DB, t *tournament.Tournament) ([]tournament.Standing, []tournament.PairResult, error) {
	rows, pairs, err := db.Standings(ctx, t.ID)
	if err != nil {
		return nil, nil, err
	}
	rows = tournament.Table(rows, pairs)
	if t.Kind == tournament.KindSwiss {
		_, finished, err := db.Slots(ctx, t)
		if err != nil {
			return nil, nil, err
		}
		if rows, err = tournament.SwissTable(t, rows, finished); err != nil {
			return nil, nil, err
		}
	}
	return rows, pairs, nil
}
