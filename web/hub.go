package web

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

// Hub defaults.
const (
	DefaultSendQueue = 256              // messages a viewer may fall behind before it is dropped
	writeWait        = 10 * time.Second // per websocket write
	pongWait         = 60 * time.Second
	pingPeriod       = pongWait * 9 / 10
	maxViewerMessage = 512 // viewers only send pongs and the odd keep-alive
)

// Hub streams live games to browsers. One goroutine (run) owns the viewers and
// the live state of running games; the referee's Publish only appends to a
// queue, so a game never waits for a viewer. Each viewer has a bounded send
// queue and one writer goroutine; a viewer whose queue is full is dropped and
// its browser reconnects and resyncs from a new snapshot.
type Hub struct {
	DB        *storage.DB
	Log       *slog.Logger
	SendQueue int

	upgrader websocket.Upgrader

	qmu   sync.Mutex
	queue []any
	wake  chan struct{}

	viewers atomic.Int64 // subscribed viewers, of any topic

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	ctx       context.Context // cancelled by Close: ends standings reads
	cancel    context.CancelFunc
	readers   sync.WaitGroup // standings reads in flight

	// State of running games, written by run, read by the API.
	smu   sync.RWMutex
	games map[int64]*liveGame

	// Owned by run.
	topics map[string]map[*viewer]struct{}
	dirty  map[int64]int // tournaments whose standings are being read: 1, or 2 if they changed meanwhile
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
// (the start position before any). The caller holds h.smu for writing, or
// has the game to itself.
func (g *liveGame) catchUp() frame {
	for ; g.applied < len(g.moves); g.applied++ {
		g.last = g.replay.apply(g.moves[g.applied])
	}
	return g.last
}

// viewer is one websocket connection.
type viewer struct {
	conn    *websocket.Conn
	send    chan *websocket.PreparedMessage
	topics  []string
	closed  bool // send was closed (by run only)
	counted bool // in h.viewers (by run only)
}

type subscribe struct {
	v     *viewer
	topic string
	first func(h *Hub) func() []byte // runs in run: see serve
	ok    chan subscribed
}

// subscribed answers a subscribe: ok false when there is nothing to watch;
// snapshot, if any, encodes what the viewer is sent before any event.
type subscribed struct {
	ok       bool
	snapshot func() []byte
}

type unsubscribe struct{ v *viewer }

type standingsReady struct {
	tid int64
	msg []byte
}

// NewHub returns a running hub; Close stops it.
func NewHub(db *storage.DB, log *slog.Logger) *Hub {
	h := &Hub{
		DB: db, Log: log, SendQueue: DefaultSendQueue,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		games: map[int64]*liveGame{}, topics: map[string]map[*viewer]struct{}{}, dirty: map[int64]int{},
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.upgrader.CheckOrigin = sameOrigin
	go h.run()
	return h
}

func (h *Hub) log() *slog.Logger {
	if h.Log != nil {
		return h.Log
	}
	return slog.New(slog.DiscardHandler)
}

// sameOrigin accepts browsers on this site and non-browser clients.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	return o == "http://"+r.Host || o == "https://"+r.Host
}

// Publish queues an event. It never blocks on viewers.
func (h *Hub) Publish(ev tournament.Event) { h.enqueue(ev) }

func (h *Hub) enqueue(x any) {
	h.qmu.Lock()
	h.queue = append(h.queue, x)
	h.qmu.Unlock()
	h.signal()
}

// signal wakes run, unless it has a wake-up pending already.
func (h *Hub) signal() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Close stops the hub, disconnects every viewer and waits for the standings
// reads in flight, so that none outlives the database.
func (h *Hub) Close() {
	h.closeOnce.Do(func() {
		h.cancel()
		close(h.stop)
	})
	<-h.done
	h.readers.Wait()
}

func (h *Hub) run() {
	defer close(h.done)
	var batch []any
	for {
		select {
		case <-h.wake:
		case <-h.stop:
			for _, set := range h.topics {
				for v := range set {
					h.drop(v)
				}
			}
			return
		}
		h.qmu.Lock()
		batch, h.queue = h.queue, batch[:0]
		h.qmu.Unlock()
		for i, x := range batch {
			h.handle(x)
			batch[i] = nil
		}
	}
}

func (h *Hub) handle(x any) {
	switch x := x.(type) {
	case tournament.Event:
		h.event(x)
	case subscribe:
		var snapshot func() []byte
		if x.first != nil {
			if snapshot = x.first(h); snapshot == nil {
				x.ok <- subscribed{}
				return
			}
		}
		set := h.topics[x.topic]
		if set == nil {
			set = map[*viewer]struct{}{}
			h.topics[x.topic] = set
		}
		set[x.v] = struct{}{}
		x.v.topics = append(x.v.topics, x.topic)
		if !x.v.counted {
			x.v.counted = true
			h.viewers.Add(1)
		}
		x.ok <- subscribed{ok: true, snapshot: snapshot}
	case unsubscribe:
		h.drop(x.v)
	case standingsReady:
		h.broadcast(x.msg, tournamentTopic(x.tid))
	case clearDirty:
		again := h.dirty[int64(x)] > 1
		delete(h.dirty, int64(x))
		if again {
			h.pushStandings(int64(x))
		}
	}
}

func gameTopic(id int64) string       { return "game:" + strconv.FormatInt(id, 10) }
func tournamentTopic(id int64) string { return "tournament:" + strconv.FormatInt(id, 10) }

const liveTopic = "live"

// deliver queues a message for a viewer, dropping the viewer if it is behind.
func (h *Hub) deliver(v *viewer, msg *websocket.PreparedMessage) {
	if v.closed {
		return
	}
	select {
	case v.send <- msg:
	default:
		h.log().Info("websocket viewer dropped: too far behind", "remote", v.conn.RemoteAddr().String())
		h.drop(v)
	}
}

// broadcast sends a message to the viewers of the topics. It is framed once
// for all of them (a prepared message), not once per viewer or topic, and not
// at all when nobody watches.
func (h *Hub) broadcast(msg []byte, topics ...string) {
	var pm *websocket.PreparedMessage
	for _, topic := range topics {
		for v := range h.topics[topic] {
			if pm == nil {
				pm = prepare(msg)
			}
			h.deliver(v, pm)
		}
	}
}

func prepare(msg []byte) *websocket.PreparedMessage {
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, msg)
	if err != nil {
		panic(err) // only compression can fail, and it is off
	}
	return pm
}

// drop unsubscribes a viewer and closes its queue; its writer then closes the
// connection.
func (h *Hub) drop(v *viewer) {
	for _, t := range v.topics {
		if set := h.topics[t]; set != nil {
			delete(set, v)
			if len(set) == 0 {
				delete(h.topics, t)
			}
		}
	}
	v.topics = nil
	if v.counted {
		v.counted = false
		h.viewers.Add(-1)
	}
	if !v.closed {
		v.closed = true
		close(v.send)
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
func (h *Hub) event(ev tournament.Event) {
	switch ev.Type {
	case tournament.EventGameStarted:
		g := &liveGame{header: *ev.Game, replay: newReplay(ev.Game.Game, ev.Game.Rule, ev.Game.Size)}
		g.last = frame{Board: g.replay.rows()}
		h.smu.Lock()
		h.games[ev.GameID] = g
		h.smu.Unlock()
		msg := mustJSON(map[string]any{"type": "game_started", "game": toGameJSON(&g.header), "board": g.last.Board})
		h.broadcast(msg, tournamentTopic(ev.TournamentID), liveTopic)
	case tournament.EventMove:
		h.smu.Lock()
		g := h.games[ev.GameID]
		if g == nil {
			h.smu.Unlock()
			return
		}
		m := ev.Tick.Move
		g.moves = append(g.moves, m)
		g.header.Plies = len(g.moves)
		g.remaining = [2]int64{ev.Tick.Remaining[0].Milliseconds(), ev.Tick.Remaining[1].Milliseconds()}
		if len(h.topics[gameTopic(ev.GameID)]) == 0 && len(h.topics[liveTopic]) == 0 && len(h.topics[tournamentTopic(ev.TournamentID)]) == 0 {
			h.smu.Unlock()
			return // nobody watches: not even the board is drawn
		}
		f := g.catchUp()
		h.smu.Unlock()
		msg := mustJSON(moveMessage{
			Type: "move", GameID: ev.GameID, TournamentID: ev.TournamentID,
			MoveView: m.View(g.header.Game, ev.Tick.Ply), Board: f.Board, Flipped: f.Flipped,
			Remaining: remainingJSON(g.remaining), Sent: time.Now().UnixMicro(),
		})
		h.broadcast(msg, gameTopic(ev.GameID), tournamentTopic(ev.TournamentID), liveTopic)
	case tournament.EventGameEnded:
		h.smu.Lock()
		g := h.games[ev.GameID]
		delete(h.games, ev.GameID)
		h.smu.Unlock()
		end := map[string]any{"type": "end", "game_id": ev.GameID, "game": toGameJSON(ev.Game), "result": ev.Game.Result, "reason": ev.Game.Reason}
		if g != nil && len(h.topics[gameTopic(ev.GameID)]) > 0 {
			g.catchUp() // out of h.games: the hub has it to itself
			end["five"] = g.replay.five()
		}
		if p := ev.Played; p != nil {
			end["stones"] = map[string]int{"black": p.Stones[0], "white": p.Stones[1]}
			end["violations"] = map[string]games.Violations{"black": nonNilViolations(p.Violations[0]), "white": nonNilViolations(p.Violations[1])}
		}
		msg := mustJSON(end)
		h.broadcast(msg, gameTopic(ev.GameID))
		ended := mustJSON(map[string]any{"type": "game_ended", "game": toGameJSON(ev.Game)})
		h.broadcast(ended, tournamentTopic(ev.TournamentID), liveTopic)
		// Viewers of a finished game have all there is: let them go.
		for v := range h.topics[gameTopic(ev.GameID)] {
			h.drop(v)
		}
		h.pushStandings(ev.TournamentID)
	case tournament.EventTournament:
		msg := mustJSON(map[string]any{"type": "tournament", "tournament": tournamentSummary(ev.Tournament)})
		h.broadcast(msg, tournamentTopic(ev.TournamentID), liveTopic)
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
	Sent      int64            `json:"sent_us"` // server time the move was published, for latency figures
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
		"total_games": t.TotalGames, "finished_games": t.FinishedGames, "eta_seconds": eta(t),
	}
}

// pushStandings reads a tournament's table outside the hub's goroutine and
// broadcasts it; while one read is in flight, later requests fold into one.
func (h *Hub) pushStandings(tid int64) {
	if h.DB == nil || len(h.topics[tournamentTopic(tid)]) == 0 {
		return
	}
	if h.dirty[tid] > 0 {
		h.dirty[tid] = 2
		return
	}
	h.dirty[tid] = 1
	h.readers.Go(func() {
		ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
		defer cancel()
		msg, err := h.standingsMessage(ctx, tid)
		h.enqueue(clearDirty(tid))
		if err != nil {
			if h.ctx.Err() == nil { // not the hub closing
				h.log().Error("standings for viewers", "tournament", tid, "err", err)
			}
			return
		}
		h.enqueue(standingsReady{tid: tid, msg: msg})
	})
}

type clearDirty int64

func (h *Hub) standingsMessage(ctx context.Context, tid int64) ([]byte, error) {
	m, err := h.standings(ctx, tid)
	if err != nil {
		return nil, err
	}
	return mustJSON(m), nil
}

// standings is a tournament's table as the "standings" message has it.
func (h *Hub) standings(ctx context.Context, tid int64) (map[string]any, error) {
	t, err := h.DB.Tournament(ctx, tid)
	if err != nil {
		return nil, err
	}
	rows, pairs, err := h.DB.Standings(ctx, tid)
	if err != nil {
		return nil, err
	}
	rows = tournament.Table(rows, pairs)
	return map[string]any{
		"type": "standings", "tournament": tournamentSummary(t),
		"standings": nonNilStandings(rows), "crosstable": crosstable(rows, pairs),
	}, nil
}

// ---- live state for the API ----

// Running lists the games being played, oldest first.
func (h *Hub) Running() []*tournament.Game {
	h.smu.RLock()
	defer h.smu.RUnlock()
	out := make([]*tournament.Game, 0, len(h.games))
	for _, g := range h.games {
		c := g.header
		out = append(out, &c)
	}
	slices.SortFunc(out, func(a, b *tournament.Game) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// RunningIn counts a tournament's games being played.
func (h *Hub) RunningIn(tid int64) int {
	h.smu.RLock()
	defer h.smu.RUnlock()
	n := 0
	for _, g := range h.games {
		if g.header.TournamentID == tid {
			n++
		}
	}
	return n
}

// LivePlies returns how many moves a running game has so far.
func (h *Hub) LivePlies(id int64) (int, bool) {
	h.smu.RLock()
	defer h.smu.RUnlock()
	g, ok := h.games[id]
	if !ok {
		return 0, false
	}
	return len(g.moves), true
}

// LiveMoves returns the moves of a running game so far.
func (h *Hub) LiveMoves(id int64) ([]games.Ply, bool) {
	h.smu.RLock()
	defer h.smu.RUnlock()
	g, ok := h.games[id]
	if !ok {
		return nil, false
	}
	return append([]games.Ply(nil), g.moves...), true
}

// ---- websocket endpoints ----

// snapshot of a game: everything so far, frames for stepping through it.
func gameSnapshot(g *tournament.Game, moves []games.Ply, frames []frame, remaining map[string]int64, live bool, five [][2]int) []byte {
	mj := make([]games.MoveView, len(moves))
	for i, m := range moves {
		mj[i] = m.View(g.Game, i+1)
	}
	hdr := toGameJSON(g)
	hdr.Plies = len(moves)
	return mustJSON(map[string]any{
		"type": "snapshot", "game": hdr, "moves": mj, "frames": frames, "live": live,
		"remaining": remaining, "five": five,
	})
}

// ServeGame is /ws/games/{id}: a snapshot, then a message per move and one at
// the end.
func (h *Hub) ServeGame(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		http.Error(w, "no such game", http.StatusNotFound)
		return
	}
	stored, err := h.DB.Game(r.Context(), id)
	if err != nil {
		http.Error(w, fmt.Sprintf("game %d: not found", id), http.StatusNotFound)
		return
	}
	h.serve(w, r, gameTopic(id), func(h *Hub) func() []byte {
		h.smu.RLock()
		defer h.smu.RUnlock()
		lg := h.games[id]
		if lg == nil {
			return nil
		}
		// The game as it is now; the frames are drawn and the whole encoded by
		// the viewer's goroutine, not the hub's.
		g, remaining := lg.header, remainingJSON(lg.remaining)
		g.Moves = lg.moves[:len(lg.moves):len(lg.moves)]
		return func() []byte {
			frames, _ := framesOf(&g)
			return gameSnapshot(&g, g.Moves, frames, remaining, true, nil)
		}
	}, nil, func() [][]byte {
		// Not live: a stored game (finished or aborted) is sent whole, then
		// end. The one read above will do unless it was still running then.
		g := stored
		if g.Status == tournament.GameRunning {
			if g, err = h.DB.Game(r.Context(), id); err != nil {
				h.log().Error("stored game for a viewer", "game", id, "err", err)
				return nil
			}
		}
		frames, rep := framesOf(g)
		snap := gameSnapshot(g, g.Moves, frames, nil, false, rep.five())
		d := gameDetail(g)
		end := mustJSON(map[string]any{"type": "end", "game_id": g.ID, "game": toGameJSON(g), "result": g.Result, "reason": g.Reason,
			"five": rep.five(), "stones": d.Stones, "violations": d.Violations, "logs": d.Logs})
		return [][]byte{snap, end}
	})
}

// ServeTournament is /ws/tournaments/{id}: a snapshot of the table and the
// running games, then game_started, game_ended and standings.
func (h *Hub) ServeTournament(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		http.Error(w, "no such tournament", http.StatusNotFound)
		return
	}
	if _, err := h.DB.Tournament(r.Context(), id); err != nil {
		http.Error(w, fmt.Sprintf("tournament %d: not found", id), http.StatusNotFound)
		return
	}
	// The table is read after subscribing, outside the hub's goroutine: events
	// queued meanwhile are older than it or equal, and standings messages are
	// whole tables.
	h.serve(w, r, tournamentTopic(id), nil, func() []byte {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		snap, err := h.standings(ctx, id)
		if err != nil {
			h.log().Error("tournament snapshot for a viewer", "tournament", id, "err", err)
			return nil
		}
		snap["type"] = "snapshot"
		snap["running"] = h.runningBoards(id)
		return mustJSON(snap)
	}, nil)
}

// ServeLive is /ws/live: the running games of every tournament, for the overview.
func (h *Hub) ServeLive(w http.ResponseWriter, r *http.Request) {
	h.serve(w, r, liveTopic, func(h *Hub) func() []byte {
		running := h.runningBoards(0)
		return func() []byte { return mustJSON(map[string]any{"type": "snapshot", "running": running}) }
	}, nil, nil)
}

// runningBoards lists running games (of one tournament, or all for 0) with
// their current boards.
func (h *Hub) runningBoards(tid int64) []map[string]any {
	h.smu.Lock() // for catchUp
	defer h.smu.Unlock()
	out := []map[string]any{}
	for _, g := range h.games {
		if tid != 0 && g.header.TournamentID != tid {
			continue
		}
		item := map[string]any{"game": toGameJSON(&g.header), "board": g.catchUp().Board, "remaining": remainingJSON(g.remaining)}
		if n := len(g.moves); n > 0 {
			item["last"] = g.moves[n-1].View(g.header.Game, n)
		}
		out = append(out, item)
	}
	return out
}

// serve upgrades the connection, subscribes it and pumps messages until the
// browser goes away or the hub drops it. first, if given, runs in the hub's
// goroutine at subscription and takes what the snapshot needs, so that the
// snapshot is the state just before the first event queued for the viewer;
// the function it returns encodes the snapshot on this goroutine, so that a
// long game's snapshot holds up no one else. (The overview's first still
// brings every running board up to date in the hub's goroutine; only its
// encoding moves.) If first returns nil there is
// nothing live, and offline gives the messages to send before closing.
// initial, if given, gives the snapshot after subscribing, outside the hub.
func (h *Hub) serve(w http.ResponseWriter, r *http.Request, topic string, first func(*Hub) func() []byte, initial func() []byte, offline func() [][]byte) {
	conn, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	q := h.SendQueue
	if q <= 0 {
		q = DefaultSendQueue
	}
	// A small kernel send buffer: a viewer that stops reading fills it, then its
	// queue, and is dropped, instead of hiding megabytes in the socket.
	if tc, ok := conn.NetConn().(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(64 << 10)
	}
	v := &viewer{conn: conn, send: make(chan *websocket.PreparedMessage, q)}
	ok := make(chan subscribed, 1)
	h.enqueue(subscribe{v: v, topic: topic, first: first, ok: ok})
	var sub subscribed
	select {
	case sub = <-ok:
	case <-h.stop:
		conn.Close()
		return
	}
	if !sub.ok {
		// Nothing live: send what there is and close.
		if offline != nil {
			for _, msg := range offline() {
				conn.SetWriteDeadline(time.Now().Add(writeWait))
				if conn.WriteMessage(websocket.TextMessage, msg) != nil {
					break
				}
			}
		}
		conn.SetWriteDeadline(time.Now().Add(writeWait))
		_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "game over"))
		conn.Close()
		return
	}
	var snap []byte
	if sub.snapshot != nil {
		snap = sub.snapshot()
	}
	if initial != nil {
		if snap = initial(); snap == nil {
			h.enqueue(unsubscribe{v: v})
			conn.Close()
			return
		}
	}
	writerDone := make(chan struct{})
	go h.write(v, snap, writerDone)
	h.read(v)
	h.enqueue(unsubscribe{v: v})
	<-writerDone
}

// write is the viewer's only writer: queued messages and pings, each with a
// deadline. It closes the connection when the queue is closed or a write fails.
func (h *Hub) write(v *viewer, first []byte, done chan struct{}) {
	defer close(done)
	ping := time.NewTicker(pingPeriod)
	defer ping.Stop()
	defer v.conn.Close()
	if first != nil {
		v.conn.SetWriteDeadline(time.Now().Add(writeWait))
		if err := v.conn.WriteMessage(websocket.TextMessage, first); err != nil {
			return
		}
	}
	for {
		select {
		case msg, ok := <-v.send:
			v.conn.SetWriteDeadline(time.Now().Add(writeWait))
			if !ok {
				_ = v.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "resync"))
				return
			}
			if err := v.conn.WritePreparedMessage(msg); err != nil {
				return
			}
		case <-ping.C:
			v.conn.SetWriteDeadline(time.Now().Add(writeWait))
			if err := v.conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				return
			}
		}
	}
}

// read consumes what the browser sends (pongs) until the connection fails.
func (h *Hub) read(v *viewer) {
	v.conn.SetReadLimit(maxViewerMessage)
	v.conn.SetReadDeadline(time.Now().Add(pongWait))
	v.conn.SetPongHandler(func(string) error {
		return v.conn.SetReadDeadline(time.Now().Add(pongWait))
	})
	for {
		if _, _, err := v.conn.ReadMessage(); err != nil {
			return
		}
	}
}
