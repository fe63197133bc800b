package web

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

// Live is the live model of running games: it takes the tournament
// service's events, keeps each running game's moves and board, tells the
// viewers through its Hub, and answers the API's questions about running
// games. Publish only appends to a queue, so a game never waits for Live.
type Live struct {
	DB  *storage.DB
	Log *slog.Logger
	Hub *Hub // the fan-out to viewers

	qmu     sync.Mutex
	queue   []tournament.Event
	flushed []chan struct{} // closed once the events queued before them are taken
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once

	// mu guards games, and orders what viewers are sent: a viewer subscribed
	// under mu gets every message broadcast after its snapshot, none before.
	mu    sync.Mutex
	games map[int64]*liveGame

	standings *standingsFeed
}

// liveGame is a running game as viewers see it. The board is brought up to
// date only when someone looks: a move nobody watches costs an append.
type liveGame struct {
	header    tournament.Game
	moves     []games.Ply // only appended to: a snapshot keeps a prefix
	remaining [2]int64
	replay    *replay // the position after moves[:applied]
	applied   int
	last      frame // the frame of moves[applied-1], or the start position
}

// catchUp brings the board up to the last move and returns that move's frame
// (the start position before any). The caller holds Live.mu, or has the game
// to itself.
func (g *liveGame) catchUp() frame {
	for ; g.applied < len(g.moves); g.applied++ {
		g.last = g.replay.apply(g.moves[g.applied])
	}
	return g.last
}

// NewLive returns a running live model with its hub; Close stops both.
func NewLive(db *storage.DB, log *slog.Logger) *Live {
	l := &Live{
		DB: db, Log: log, Hub: NewHub(log),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		games: map[int64]*liveGame{},
	}
	l.standings = newStandingsFeed(db, l.Hub, l.log())
	go l.run()
	return l
}

func (l *Live) log() *slog.Logger {
	if l.Log != nil {
		return l.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Publish queues an event. It never blocks.
func (l *Live) Publish(ev tournament.Event) {
	l.qmu.Lock()
	l.queue = append(l.queue, ev)
	l.qmu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Close stops taking events, disconnects every viewer and waits for the
// standings reads in flight, so that none outlives the database.
func (l *Live) Close() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
	l.standings.close()
	l.Hub.Close()
}

func (l *Live) run() {
	defer close(l.done)
	var batch []tournament.Event
	for {
		select {
		case <-l.wake:
		case <-l.stop:
			return
		}
		l.qmu.Lock()
		batch, l.queue = l.queue, batch[:0]
		flushed := l.flushed
		l.flushed = nil
		l.qmu.Unlock()
		for i := range batch {
			l.event(batch[i])
			batch[i] = tournament.Event{}
		}
		for _, c := range flushed {
			close(c)
		}
	}
}

// Flush returns once every event published before it has been taken into
// the live state (or ctx is done).
func (l *Live) Flush(ctx context.Context) {
	c := make(chan struct{})
	l.qmu.Lock()
	l.flushed = append(l.flushed, c)
	l.qmu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	select {
	case <-c:
	case <-ctx.Done():
	case <-l.done:
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own message types always encode
	}
	return b
}

// event updates the live state and tells the viewers.
func (l *Live) event(ev tournament.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ev.Type {
	case tournament.EventGameStarted:
		g := &liveGame{header: *ev.Game, replay: newReplay(ev.Game.Game, ev.Game.Rule, ev.Game.Size)}
		g.last = frame{Board: g.replay.rows()}
		l.games[ev.GameID] = g
		if ev.Again {
			// Its worker was lost and another plays it from the start: the
			// game's viewers start over from the empty board.
			l.Hub.Broadcast(gameSnapshot(&g.header, nil, []frame{g.last}, nil, true, nil), gameTopic(ev.GameID))
		}
		msg := mustJSON(map[string]any{"type": "game_started", "game": withView(toGameJSON(&g.header)), "board": g.last.Board})
		l.Hub.Broadcast(msg, tournamentTopic(ev.TournamentID), liveTopic)
	case tournament.EventMove:
		g := l.games[ev.GameID]
		if g == nil {
			return
		}
		m := ev.Tick.Move
		g.moves = append(g.moves, m)
		g.header.Plies = len(g.moves)
		g.remaining = [2]int64{ev.Tick.Remaining[0].Milliseconds(), ev.Tick.Remaining[1].Milliseconds()}
		topics := []string{gameTopic(ev.GameID), tournamentTopic(ev.TournamentID), liveTopic}
		if !l.Hub.Watched(topics...) {
			return // nobody watches: not even the board is drawn
		}
		f := g.catchUp()
		msg := mustJSON(moveMessage{
			Type: "move", GameID: ev.GameID, TournamentID: ev.TournamentID,
			MoveView: openingView(m.View(g.header.Game, ev.Tick.Ply), ev.Tick.Opening), Board: f.Board, Flipped: f.Flipped,
			Remaining: remainingJSON(g.remaining),
		})
		l.Hub.Broadcast(msg, topics...)
	case tournament.EventGameEnded:
		g := l.games[ev.GameID]
		delete(l.games, ev.GameID)
		end := map[string]any{"type": "end", "game_id": ev.GameID, "game": withView(toGameJSON(ev.Game)), "result": ev.Game.Result, "reason": ev.Game.Reason}
		if g != nil && l.Hub.Watched(gameTopic(ev.GameID)) {
			g.catchUp()
			end["five"] = g.replay.five()
		}
		if p := ev.Played; p != nil {
			end["stones"] = map[string]int{"black": p.Stones[0], "white": p.Stones[1]}
			end["violations"] = map[string]games.Violations{"black": nonNilViolations(p.Violations[0]), "white": nonNilViolations(p.Violations[1])}
		}
		l.Hub.Broadcast(mustJSON(end), gameTopic(ev.GameID))
		ended := mustJSON(map[string]any{"type": "game_ended", "game": withView(toGameJSON(ev.Game))})
		l.Hub.Broadcast(ended, tournamentTopic(ev.TournamentID), liveTopic)
		// Viewers of a finished game have all there is: let them go.
		l.Hub.DropTopic(gameTopic(ev.GameID))
		if l.Hub.Watched(tournamentTopic(ev.TournamentID)) {
			l.standings.push(ev.TournamentID)
		}
	case tournament.EventTournament:
		msg := mustJSON(map[string]any{"type": "tournament", "tournament": tournamentSummary(ev.Tournament)})
		l.Hub.Broadcast(msg, tournamentTopic(ev.TournamentID), liveTopic)
	}
}

type moveMessage struct {
	Type         string `json:"type"`
	GameID       int64  `json:"game_id"`
	TournamentID int64  `json:"tournament_id"`
	games.MoveView
	Board     []string         `json:"board"`
	Flipped   [][2]int         `json:"flipped,omitempty"`
	Remaining map[string]int64 `json:"remaining,omitempty"`
}

func remainingJSON(r [2]int64) map[string]int64 {
	if r[0] == 0 && r[1] == 0 {
		return nil
	}
	return map[string]int64{"black": r[0], "white": r[1]}
}

// tournamentSummary is what live viewers need of a tournament.
func tournamentSummary(t *tournament.Tournament) map[string]any {
	if t == nil {
		return nil
	}
	return map[string]any{
		"id": t.ID, "name": t.Name, "game": t.Settings.Game, "status": t.Status,
		"total_games": totalGames(t), "finished_games": t.FinishedGames, "eta_seconds": eta(t),
	}
}

// ---- live state for the API ----

// Running lists the games being played, oldest first.
func (l *Live) Running() []*tournament.Game {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*tournament.Game, 0, len(l.games))
	for _, g := range l.games {
		c := g.header
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *tournament.Game) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// RunningIn counts a tournament's games being played.
func (l *Live) RunningIn(tid int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, g := range l.games {
		if g.header.TournamentID == tid {
			n++
		}
	}
	return n
}

// LivePlies returns how many moves a running game has so far.
func (l *Live) LivePlies(id int64) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ok := l.games[id]
	if !ok {
		return 0, false
	}
	return len(g.moves), true
}

// openingView marks a move as one of the opening's.
func openingView(v games.MoveView, opening bool) games.MoveView {
	v.Opening = opening
	return v
}

// LiveMoves returns the moves of a running game so far, and the opening it
// started from (nil if none).
func (l *Live) LiveMoves(id int64) ([]games.Ply, *tournament.SuiteLine, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ok := l.games[id]
	if !ok {
		return nil, nil, false
	}
	return append([]games.Ply(nil), g.moves...), g.header.Opening, true
}

// ---- websocket endpoints ----

// gameSnapshot is a game so far, with frames for stepping through it.
func gameSnapshot(g *tournament.Game, moves []games.Ply, frames []frame, remaining map[string]int64, live bool, five [][2]int) []byte {
	mj := make([]games.MoveView, len(moves))
	for i, m := range moves {
		mj[i] = openingView(m.View(g.Game, i+1), g.Opening != nil && i < g.Opening.Plies)
	}
	hdr := withView(toGameJSON(g))
	hdr.Plies = len(moves)
	return mustJSON(map[string]any{
		"type": "snapshot", "game": hdr, "moves": mj, "frames": frames, "live": live,
		"remaining": remaining, "five": five,
	})
}

// ServeGame is /ws/games/{id}: a snapshot, then a message per move and one at
// the end.
func (l *Live) ServeGame(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		http.Error(w, "no such game", http.StatusNotFound)
		return
	}
	stored, err := l.DB.Game(r.Context(), id)
	if err != nil {
		http.Error(w, fmt.Sprintf("game %d: not found", id), http.StatusNotFound)
		return
	}
	// What was published before this request is in the snapshot (waited for
	// at most 5 s; then the snapshot is what the hub has): a game whose start
	// the hub had not taken yet was sent as stored, and ended.
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	l.Flush(ctx)
	cancel()
	v, ok := l.Hub.connect(w, r)
	if !ok {
		return
	}
	l.mu.Lock()
	if lg := l.games[id]; lg != nil {
		// The game as it is now; the frames are drawn and the whole encoded
		// here, on the viewer's goroutine.
		g, remaining := lg.header, remainingJSON(lg.remaining)
		g.Moves = lg.moves[:len(lg.moves):len(lg.moves)]
		l.Hub.subscribe(v, gameTopic(id))
		l.mu.Unlock()
		frames, _ := framesOf(&g)
		l.Hub.pump(v, gameSnapshot(&g, g.Moves, frames, remaining, true, nil))
		return
	}
	l.mu.Unlock()
	// Not live: a stored game (finished or aborted) is sent whole, then end.
	// The read above will do unless the game was still running then.
	g := stored
	if g.Status == tournament.GameRunning {
		if g, err = l.DB.Game(r.Context(), id); err != nil {
			l.log().Error("stored game for a viewer", "game", id, "err", err)
			l.Hub.finish(v, nil)
			return
		}
	}
	frames, rep := framesOf(g)
	snap := gameSnapshot(g, g.Moves, frames, nil, false, rep.five())
	d := gameDetail(g)
	end := mustJSON(map[string]any{"type": "end", "game_id": g.ID, "game": withView(toGameJSON(g)), "result": g.Result, "reason": g.Reason,
		"five": rep.five(), "stones": d.Stones, "violations": d.Violations, "logs": d.Logs})
	l.Hub.finish(v, [][]byte{snap, end})
}

// ServeTournament is /ws/tournaments/{id}: a snapshot of the table and the
// running games, then game_started, game_ended and standings.
func (l *Live) ServeTournament(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		http.Error(w, "no such tournament", http.StatusNotFound)
		return
	}
	if _, err := l.DB.Tournament(r.Context(), id); err != nil {
		http.Error(w, fmt.Sprintf("tournament %d: not found", id), http.StatusNotFound)
		return
	}
	v, ok := l.Hub.connect(w, r)
	if !ok {
		return
	}
	l.mu.Lock()
	l.Hub.subscribe(v, tournamentTopic(id))
	running := l.runningBoards(id)
	l.mu.Unlock()
	// The table is read after subscribing: standings messages queued
	// meanwhile are whole tables, as new as this one or newer.
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	snap, err := l.standings.table(ctx, id)
	cancel()
	if err != nil {
		l.log().Error("tournament snapshot for a viewer", "tournament", id, "err", err)
		l.Hub.enqueue(unsubscribe{v: v})
		v.conn.Close()
		return
	}
	snap["type"] = "snapshot"
	snap["running"] = running
	l.Hub.pump(v, mustJSON(snap))
}

// ServeLive is /ws/live: the running games of every tournament, for the overview.
func (l *Live) ServeLive(w http.ResponseWriter, r *http.Request) {
	v, ok := l.Hub.connect(w, r)
	if !ok {
		return
	}
	l.mu.Lock()
	l.Hub.subscribe(v, liveTopic)
	running := l.runningBoards(0)
	l.mu.Unlock()
	l.Hub.pump(v, mustJSON(map[string]any{"type": "snapshot", "running": running}))
}

// runningBoards lists running games (of one tournament, or all for 0) with
// their current boards. The caller holds l.mu.
func (l *Live) runningBoards(tid int64) []map[string]any {
	out := []map[string]any{}
	for _, g := range l.games {
		if tid != 0 && g.header.TournamentID != tid {
			continue
		}
		item := map[string]any{"game": withView(toGameJSON(&g.header)), "board": g.catchUp().Board, "remaining": remainingJSON(g.remaining)}
		if n := len(g.moves); n > 0 {
			item["last"] = g.moves[n-1].View(g.header.Game, n)
		}
		out = append(out, item)
	}
	return out
}
