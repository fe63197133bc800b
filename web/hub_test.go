package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/web"
)

// liveGame is a hub serving one running game (stored as running, announced
// with game_started), as a referee would leave it; the test publishes its moves.
type liveGame struct {
	hub  *web.Live
	url  string
	game *tournament.Game
	tid  int64
	b    othello.Board
	ply  int
}

func newLiveGame(tb testing.TB, queue int) *liveGame {
	tb.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(tb.TempDir(), "hub.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tr := &tournament.Tournament{Name: "fan-out", Settings: tournament.Settings{Game: "othello"}, Seed: 1}
	for _, n := range []string{"a", "b"} {
		e := engines.Engine{Name: n, Game: "othello", Protocol: "othello-board", Builtin: "othello-random"}
		if err := db.CreateEngine(ctx, &e); err != nil {
			tb.Fatal(err)
		}
		tr.Engines = append(tr.Engines, e.ID)
	}
	if err := tr.Validate(); err != nil {
		tb.Fatal(err)
	}
	if err := db.CreateTournament(ctx, tr); err != nil {
		tb.Fatal(err)
	}
	p := tr.Schedule().Game(0)
	id, err := db.StartGame(ctx, tr, p, tr.Engines[p.Black], tr.Engines[p.White], 1)
	if err != nil {
		tb.Fatal(err)
	}
	hub := web.NewLive(db, nil)
	hub.Hub.SendQueue = queue
	r := chi.NewRouter()
	r.Get("/ws/games/{id}", hub.ServeGame)
	ts := httptest.NewServer(r)
	tb.Cleanup(func() {
		hub.Close()
		ts.Close()
		db.Close()
	})
	g := &tournament.Game{ID: id, TournamentID: tr.ID, Game: "othello", Size: 8, Status: tournament.GameRunning,
		Black: tournament.Player{EngineID: tr.Engines[0], Name: "a"}, White: tournament.Player{EngineID: tr.Engines[1], Name: "b"}}
	hub.Publish(tournament.Event{Type: tournament.EventGameStarted, TournamentID: tr.ID, GameID: id, Game: g})
	return &liveGame{hub: hub, url: "ws" + strings.TrimPrefix(ts.URL, "http") + fmt.Sprintf("/ws/games/%d", id), game: g, tid: tr.ID, b: othello.New()}
}

// move publishes the next move of a game of first legal moves, as the referee
// does when it accepts one, and returns when Publish returned.
func (g *liveGame) move() (ply int, took time.Duration) {
	s := othello.Pass
	if legal := othello.Squares(g.b.Legal()); len(legal) > 0 {
		s = legal[0]
	}
	if g.b.Over() {
		g.b = othello.New() // a long benchmark wraps around; viewers only count plies
		s = othello.Squares(g.b.Legal())[0]
	}
	m := games.Ply{Color: games.Color(g.b.Turn()), Move: games.Move{X: s.X(), Y: s.Y(), Pass: s == othello.Pass}}
	if m.Pass {
		m.X, m.Y = -1, -1
	}
	g.b.Play(s)
	g.ply++
	start := time.Now()
	g.hub.Publish(tournament.Event{Type: tournament.EventMove, TournamentID: g.tid, GameID: g.game.ID, Tick: &tournament.Tick{Ply: g.ply, Move: m}})
	return g.ply, time.Since(start)
}

// viewer is a websocket client that records when each ply arrived.
type viewer struct {
	conn    *websocket.Conn
	mu      sync.Mutex
	plies   []int
	arrived []time.Time
	done    chan struct{}
	err     error
}

func dialViewer(tb testing.TB, url string) *viewer {
	tb.Helper()
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, _, err := d.Dial(url, nil)
	if err != nil {
		tb.Fatalf("dial %s: %v", url, err)
	}
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, snap, err := conn.ReadMessage()
	if err != nil || !strings.Contains(string(snap), `"type":"snapshot"`) {
		tb.Fatalf("first message %q, %v; want the snapshot", snap, err)
	}
	v := &viewer{conn: conn, done: make(chan struct{})}
	go v.read()
	return v
}

func (v *viewer) read() {
	defer close(v.done)
	for {
		v.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		_, msg, err := v.conn.ReadMessage()
		now := time.Now()
		if err != nil {
			v.err = err
			return
		}
		// A cheap look at the type and ply: with a thousand viewers in this
		// process, decoding whole messages would measure the clients, not the hub.
		if bytes.HasPrefix(msg, []byte(`{"type":"move"`)) {
			ply := plyOf(msg)
			v.mu.Lock()
			v.plies = append(v.plies, ply)
			v.arrived = append(v.arrived, now)
			v.mu.Unlock()
		}
	}
}

// plyOf reads the "ply" field of a move message.
func plyOf(msg []byte) int {
	i := bytes.Index(msg, []byte(`"ply":`))
	if i < 0 {
		return -1
	}
	n := 0
	for _, c := range msg[i+len(`"ply":`):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func (v *viewer) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.plies)
}

// waitAll waits until every viewer has n moves.
func waitAll(tb testing.TB, vs []*viewer, n int, within time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for _, v := range vs {
		for v.count() < n {
			if time.Now().After(deadline) {
				tb.Fatalf("a viewer has %d of %d moves after %v (err %v)", v.count(), n, within, v.err)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// stalled opens a websocket the way a browser tab that froze would: it
// completes the handshake and never reads again.
func stalled(tb testing.TB, url string) net.Conn {
	tb.Helper()
	u := strings.TrimPrefix(url, "ws://")
	host, path, _ := strings.Cut(u, "/")
	c, err := net.Dial("tcp", host)
	if err != nil {
		tb.Fatal(err)
	}
	tc := c.(*net.TCPConn)
	tc.SetReadBuffer(4096) // a small window fills fast
	fmt.Fprintf(c, "GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", path, host)
	r := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	status, err := r.ReadString('\n')
	if err != nil || !strings.Contains(status, "101") {
		tb.Fatalf("handshake: %q %v", status, err)
	}
	return c
}

// A viewer that stops reading is dropped; the others get every move in order
// and publishing (the referee's side) never waits.
func TestStalledViewerIsDropped(t *testing.T) {
	g := newLiveGame(t, 64)
	frozen := stalled(t, g.url)
	defer frozen.Close()
	var live []*viewer
	for range 3 {
		live = append(live, dialViewer(t, g.url))
	}
	// Enough moves to fill the frozen viewer's socket buffers and its queue.
	const moves = 2000
	var slowest time.Duration
	for range moves {
		_, took := g.move()
		slowest = max(slowest, took)
		time.Sleep(time.Millisecond) // a very fast game, but one viewers can follow
	}
	waitAll(t, live, moves, 30*time.Second)
	for i, v := range live {
		v.mu.Lock()
		for k, p := range v.plies {
			if p != k+1 {
				t.Fatalf("viewer %d: move %d has ply %d: out of order or lost", i, k, p)
			}
		}
		v.mu.Unlock()
	}
	// The frozen viewer was dropped: once we read what the kernel buffered, the
	// server has closed the connection.
	frozen.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 64<<10)
	n := 0
	for {
		k, err := frozen.Read(buf)
		n += k
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the stalled viewer is still connected after %d bytes", n)
			}
			break
		}
	}
	// Publishing is an append to a queue: the referee never waits for viewers.
	if slowest > 50*time.Millisecond {
		t.Errorf("a Publish took %v with a stalled viewer attached", slowest)
	}
	t.Logf("stalled viewer dropped after %d bytes; slowest Publish %v", n, slowest)
}

// BenchmarkFanOut1000 has 1,000 websocket viewers on one live game and
// reports the delay from the referee publishing a move to each viewer receiving
// it (p50, p99), with one stalled viewer attached that must not delay the rest.
func BenchmarkFanOut1000(b *testing.B) {
	g := newLiveGame(b, web.DefaultSendQueue)
	frozen := stalled(b, g.url)
	defer frozen.Close()
	viewers := make([]*viewer, 1000)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	for i := range viewers {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			viewers[i] = dialViewer(b, g.url)
		})
	}
	wg.Wait()
	var published []time.Time
	b.ResetTimer()
	for b.Loop() {
		// A move every 20 ms: a blitz game, faster than people watch.
		g.move()
		published = append(published, time.Now())
		time.Sleep(20 * time.Millisecond)
	}
	b.StopTimer()
	waitAll(b, viewers, len(published), 60*time.Second)
	var delays []time.Duration
	for _, v := range viewers {
		v.mu.Lock()
		for k, at := range v.arrived {
			if v.plies[k] != k+1 {
				b.Fatalf("move %d arrived as ply %d", k+1, v.plies[k])
			}
			delays = append(delays, at.Sub(published[k]))
		}
		v.mu.Unlock()
		v.conn.Close()
	}
	slices.Sort(delays)
	q := func(p float64) float64 {
		return float64(delays[min(int(p*float64(len(delays))), len(delays)-1)].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(float64(len(delays)), "deliveries")
}

// The hub draws a live game's board only when someone looks: a viewer who
// arrives after moves nobody watched gets every frame in its snapshot, and
// the next move's board is right. The moves are published, not yet taken by
// the hub, when the viewer connects: its snapshot held none, and the game
// was sent as stored and ended, before ServeGame flushed the hub's queue
// (GOMAXPROCS=1 -race: fails within 300 runs without it).
func TestViewerAfterUnwatchedMoves(t *testing.T) {
	g := newLiveGame(t, 256)
	for range 10 {
		g.move()
	}
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, _, err := d.Dial(g.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var snap struct {
		Type   string `json:"type"`
		Moves  []any  `json:"moves"`
		Frames []struct {
			Board []string `json:"board"`
		} `json:"frames"`
	}
	if err := conn.ReadJSON(&snap); err != nil {
		t.Fatal(err)
	}
	if snap.Type != "snapshot" || len(snap.Moves) != 10 || len(snap.Frames) != 11 {
		t.Fatalf("first message: type %q, %d moves, %d frames; want a snapshot of 10 moves and 11 frames", snap.Type, len(snap.Moves), len(snap.Frames))
	}
	if got, want := snap.Frames[10].Board, rowsOf(g.b); !slices.Equal(got, want) {
		t.Errorf("snapshot's last frame %q, want %q", got, want)
	}
	if got, want := snap.Frames[0].Board, rowsOf(othello.New()); !slices.Equal(got, want) {
		t.Errorf("snapshot's first frame %q, want the start position %q", got, want)
	}

	ply, _ := g.move()
	var mv struct {
		Type  string   `json:"type"`
		Ply   int      `json:"ply"`
		Board []string `json:"board"`
	}
	if err := conn.ReadJSON(&mv); err != nil {
		t.Fatal(err)
	}
	if mv.Type != "move" || mv.Ply != ply {
		t.Fatalf("next message: type %q, ply %d; want move %d", mv.Type, mv.Ply, ply)
	}
	if want := rowsOf(g.b); !slices.Equal(mv.Board, want) {
		t.Errorf("board after move %d: %q, want %q", ply, mv.Board, want)
	}
}

// Moves published while no browser is connected do not wake the hub, but
// they are still taken, soon: the API's live state shows them.
func TestUnwatchedMovesAreTaken(t *testing.T) {
	g := newLiveGame(t, 256)
	// Once the hub has taken the game's start, nothing else wakes it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := g.hub.LivePlies(g.game.ID); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the game's start not taken after 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	for range 5 {
		g.move()
	}
	for {
		n, ok := g.hub.LivePlies(g.game.ID)
		if ok && n == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("live plies %d (%v) 5 s after 5 moves nobody watched", n, ok)
		}
		time.Sleep(time.Millisecond)
	}
}

// rowsOf draws a position as the dashboard does: rows from the top, 'x' for
// black, 'o' for white, '.' for empty.
func rowsOf(b othello.Board) []string {
	rows := make([]string, 8)
	for y := range 8 {
		var row []byte
		for x := range 8 {
			switch b.At(x, y) {
			case othello.Black:
				row = append(row, 'x')
			case othello.White:
				row = append(row, 'o')
			default:
				row = append(row, '.')
			}
		}
		rows[y] = string(row)
	}
	return rows
}

// BenchmarkUnwatchedMoves is what publishing a move of a live game that
// nobody watches costs the referee, with the hub taking the moves meanwhile
// (each op publishes one move; at the end the hub must have them all). With
// no viewer, an op is an append and now and then the timer's Reset.
func BenchmarkUnwatchedMoves(b *testing.B) {
	g := newLiveGame(b, web.DefaultSendQueue)
	for b.Loop() {
		g.move()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, ok := g.hub.LivePlies(g.game.ID)
		if ok && n == g.ply {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the hub has %d of %d moves after 10 s", n, g.ply)
		}
		time.Sleep(time.Millisecond)
	}
}

// The hub counts its viewers, and a move while there are none does not wake
// it: the count must come back to 0 when a viewer leaves, whether it closes
// its connection or the hub drops it for falling behind.
func TestViewerCountComesBackToZero(t *testing.T) {
	g := newLiveGame(t, 4)
	waitViewers := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for web.Viewers(g.hub) != want {
			if time.Now().After(deadline) {
				t.Fatalf("the hub counts %d viewers, want %d", web.Viewers(g.hub), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	v := dialViewer(t, g.url)
	waitViewers(1)
	v.conn.Close()
	select {
	case <-v.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the viewer still reads 10 s after its connection closed")
	}
	waitViewers(0)

	// A viewer that stops reading falls behind its queue of 4 and is dropped.
	frozen := stalled(t, g.url)
	defer frozen.Close()
	waitViewers(1)
	for range 2000 {
		g.move()
		if web.Viewers(g.hub) == 0 {
			break
		}
	}
	waitViewers(0)
}

// A game whose worker was lost starts again from the beginning on another
// worker: its viewers get a fresh snapshot with no moves, then the new moves.
func TestGameRestartResetsViewers(t *testing.T) {
	g := newLiveGame(t, 64)
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, _, err := d.Dial(g.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	read := func() map[string]any {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, msg, err := conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := read(); m["type"] != "snapshot" {
		t.Fatalf("first message %v", m)
	}
	g.move()
	g.move()
	for range 2 {
		if m := read(); m["type"] != "move" {
			t.Fatalf("got %v, want a move", m)
		}
	}
	g.hub.Publish(tournament.Event{Type: tournament.EventGameStarted, TournamentID: g.tid, GameID: g.game.ID, Game: g.game, Again: true})
	m := read()
	if m["type"] != "snapshot" || len(m["moves"].([]any)) != 0 {
		t.Fatalf("after the restart: %v, want a snapshot with no moves", m)
	}
	g.b, g.ply = othello.New(), 0
	g.move()
	if m := read(); m["type"] != "move" || m["ply"] != float64(1) {
		t.Fatalf("after the restart: %v, want ply 1", m)
	}
	if moves, _, ok := g.hub.LiveMoves(g.game.ID); !ok || len(moves) != 1 {
		t.Errorf("live moves after the restart: %d, want 1", len(moves))
	}
}
