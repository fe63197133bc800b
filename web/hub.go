package web

import (
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// Hub defaults.
const (
	DefaultSendQueue = 256              // messages a viewer may fall behind before it is dropped
	writeWait        = 10 * time.Second // per websocket write
	pongWait         = 60 * time.Second
	pingPeriod       = pongWait * 9 / 10
	maxViewerMessage = 512 // viewers only send pongs and the odd keep-alive
)

// Hub fans messages out to websocket viewers, and does nothing else (the
// gorilla/websocket chat example's pattern): one goroutine (run) owns the
// viewers of each topic; Broadcast only appends to its queue, so a sender
// never waits for a viewer. Each viewer has a bounded send queue and one
// writer goroutine with a deadline on every write; a viewer whose queue is
// full is dropped, and its browser reconnects and resyncs from a new
// snapshot. What the messages say is Live's business.
type Hub struct {
	Log       *slog.Logger
	SendQueue int

	upgrader websocket.Upgrader

	qmu   sync.Mutex
	queue []any
	wake  chan struct{}

	cmu     sync.RWMutex
	watched map[string]int // viewers subscribed to each topic, counted at Subscribe
	viewers atomic.Int64   // connected viewers, of any topic

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	topics map[string]map[*viewer]struct{} // owned by run
}

// viewer is one websocket connection.
type viewer struct {
	conn   *websocket.Conn
	send   chan *websocket.PreparedMessage
	topics []string
	closed bool // send was closed (by run only)
}

type (
	subscribe struct {
		v     *viewer
		topic string
	}
	unsubscribe  struct{ v *viewer }
	dropTopic    string
	broadcastMsg struct {
		msg    []byte
		topics []string
	}
)

// NewHub returns a running hub; Close stops it.
func NewHub(log *slog.Logger) *Hub {
	h := &Hub{
		Log: log, SendQueue: DefaultSendQueue,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		watched: map[string]int{}, topics: map[string]map[*viewer]struct{}{},
	}
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

func gameTopic(id int64) string       { return "game:" + strconv.FormatInt(id, 10) }
func tournamentTopic(id int64) string { return "tournament:" + strconv.FormatInt(id, 10) }

const liveTopic = "live"

// Broadcast queues a message for the viewers of the topics. It never blocks.
func (h *Hub) Broadcast(msg []byte, topics ...string) {
	h.enqueue(broadcastMsg{msg: msg, topics: topics})
}

// DropTopic lets the viewers of a topic go, once they have what was queued
// for them.
func (h *Hub) DropTopic(topic string) { h.enqueue(dropTopic(topic)) }

// Watched reports whether any viewer is subscribed to one of the topics. A
// viewer counts from the moment it is subscribed, so that a message
// broadcast after its subscription is never skipped for want of viewers.
func (h *Hub) Watched(topics ...string) bool {
	h.cmu.RLock()
	defer h.cmu.RUnlock()
	for _, t := range topics {
		if h.watched[t] > 0 {
			return true
		}
	}
	return false
}

func (h *Hub) enqueue(x any) {
	h.qmu.Lock()
	h.queue = append(h.queue, x)
	h.qmu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Close stops the hub and disconnects every viewer.
func (h *Hub) Close() {
	h.closeOnce.Do(func() { close(h.stop) })
	<-h.done
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
	case broadcastMsg:
		var pm *websocket.PreparedMessage // framed once for every viewer, and only if there is one
		for _, topic := range x.topics {
			for v := range h.topics[topic] {
				if pm == nil {
					pm = prepare(x.msg)
				}
				h.deliver(v, pm)
			}
		}
	case subscribe:
		if x.v.closed {
			h.uncount(x.topic)
			return
		}
		set := h.topics[x.topic]
		if set == nil {
			set = map[*viewer]struct{}{}
			h.topics[x.topic] = set
		}
		set[x.v] = struct{}{}
		x.v.topics = append(x.v.topics, x.topic)
	case unsubscribe:
		h.drop(x.v)
	case dropTopic:
		for v := range h.topics[string(x)] {
			h.drop(v)
		}
	}
}

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
		h.uncount(t)
	}
	v.topics = nil
	if !v.closed {
		v.closed = true
		close(v.send)
	}
}

func (h *Hub) uncount(topic string) {
	h.cmu.Lock()
	if h.watched[topic]--; h.watched[topic] <= 0 {
		delete(h.watched, topic)
	}
	h.cmu.Unlock()
}

// connect upgrades a request to a viewer; false if it could not (the
// upgrader has answered).
func (h *Hub) connect(w http.ResponseWriter, r *http.Request) (*viewer, bool) {
	conn, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return nil, false
	}
	// A small kernel send buffer: a viewer that stops reading fills it, then its
	// queue, and is dropped, instead of hiding megabytes in the socket.
	if tc, ok := conn.NetConn().(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(64 << 10)
	}
	q := h.SendQueue
	if q <= 0 {
		q = DefaultSendQueue
	}
	return &viewer{conn: conn, send: make(chan *websocket.PreparedMessage, q)}, true
}

// subscribe adds a viewer to a topic: it gets every message broadcast after
// this call. The caller orders this call with its broadcasts.
func (h *Hub) subscribe(v *viewer, topic string) {
	h.cmu.Lock()
	h.watched[topic]++
	h.cmu.Unlock()
	h.enqueue(subscribe{v: v, topic: topic})
}

// pump sends first, then the viewer's queue, until the browser goes away or
// the hub drops the viewer; then it unsubscribes it everywhere.
func (h *Hub) pump(v *viewer, first []byte) {
	h.viewers.Add(1)
	defer h.viewers.Add(-1)
	writerDone := make(chan struct{})
	go h.write(v, first, writerDone)
	h.read(v)
	h.enqueue(unsubscribe{v: v})
	<-writerDone
}

// finish sends a viewer that is subscribed to nothing its last messages and
// closes the connection.
func (h *Hub) finish(v *viewer, msgs [][]byte) {
	for _, msg := range msgs {
		v.conn.SetWriteDeadline(time.Now().Add(writeWait))
		if v.conn.WriteMessage(websocket.TextMessage, msg) != nil {
			break
		}
	}
	v.conn.SetWriteDeadline(time.Now().Add(writeWait))
	_ = v.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "game over"))
	v.conn.Close()
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
		case <-h.stop:
			return
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
