package protocol

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
)

// Limits common to all line protocols (PROTOCOLS.md, "Common rules").
const (
	MaxLine      = 4096        // longer lines are format errors, discarded up to the newline
	MaxNoNewline = 64 << 10    // more bytes than this without a newline: disconnected
	FloodLines   = 200         // more lines than this ...
	FloodWindow  = time.Second // ... within this window: disconnected
	WriteTimeout = 5 * time.Second
	// ChatterRate is how many lines a second a client's allowed chatter
	// (Base.Chatter) is read at, at most, after a burst of ChatterBurst.
	ChatterRate  = 2000
	ChatterBurst = 500
)

// Errors of ReadLine.
var (
	// ErrLineTooLong: the line was longer than MaxLine and has been discarded.
	// The connection is still usable.
	ErrLineTooLong = errors.New("line longer than 4096 bytes")
	// ErrFlood: too many lines too fast, or too many bytes without a newline.
	ErrFlood = errors.New("client flooded the connection")
)

// Conn is a client connection read line by line under the common limits and
// written with a deadline on every write. Reads belong to one goroutine;
// writes may come from several.
type Conn struct {
	c     engines.Stream
	r     *bufio.Reader
	k     *kernelClock // nil unless the kernel stamps what it receives
	wmu   sync.Mutex
	stamp [FloodLines]time.Time // times of the last FloodLines lines, a ring
	next  int
	full  bool
	prev  time.Time // the stamp the last line replaced, for Invited
	pfull bool
}

// NewConn wraps a connection.
func NewConn(c engines.Stream) *Conn {
	// Room for a maximal line plus "\r\n", so ReadSlice fills only on a long line.
	if k := newKernelClock(c); k != nil {
		return &Conn{c: c, k: k, r: bufio.NewReaderSize(k, MaxLine+2)}
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, MaxLine+2)}
}

// arrived is when the line just read reached this machine: the kernel's time
// for its bytes where the kernel gives one (TCP on Linux), else now. The
// reader fills its buffer only when no line is left in it, so every line it
// returns ends in the last read's bytes.
func (c *Conn) arrived() time.Time {
	if c.k != nil {
		if at := c.k.received(); !at.IsZero() {
			return at
		}
	}
	return time.Now()
}

// Unread reports whether the client's input holds bytes the reader has not
// finished with, and if so calls wake once when the reader next waits on an
// empty socket (see engines.Unread); false when the kernel gives no time.
func (c *Conn) Unread(wake func()) bool { return c.k != nil && c.k.unread(wake) }

// ReadLine returns the next line without its "\n" and a trailing "\r", and the
// time it arrived (see arrived). The slice is valid until the next call. ErrLineTooLong is
// not fatal; any other error is.
func (c *Conn) ReadLine() ([]byte, time.Time, error) {
	line, err := c.r.ReadSlice('\n')
	now := c.arrived()
	if err == bufio.ErrBufferFull {
		// Discard to the newline, but not forever.
		n := len(line)
		for err == bufio.ErrBufferFull {
			line, err = c.r.ReadSlice('\n')
			if n += len(line); n > MaxNoNewline {
				return nil, now, ErrFlood
			}
		}
		if err != nil && err != io.EOF {
			return nil, now, err
		}
		// A too-long line, the last one without a newline included: counted
		// like any other (at EOF the next call sees the end).
		if c.flooded(time.Now()) {
			return nil, now, ErrFlood
		}
		return nil, time.Now(), ErrLineTooLong
	}
	if err != nil {
		if err != io.EOF || len(line) == 0 {
			return nil, now, err
		}
		// A last line without newline is still a line, under the same rules;
		// the next call sees EOF.
		if c.flooded(now) {
			return nil, now, ErrFlood
		}
		if line = trimCR(line); len(line) > MaxLine {
			return nil, now, ErrLineTooLong
		}
		return line, now, nil
	}
	if c.flooded(now) {
		return nil, now, ErrFlood
	}
	line = trimCR(line[:len(line)-1])
	if len(line) > MaxLine {
		// The buffer holds a maximal line and its "\r\n", so a line one byte too
		// long can still arrive whole.
		return nil, now, ErrLineTooLong
	}
	return line, now, nil
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// Invited takes the line just read off the flood count: the protocol asked
// for it (gomoku-turn's get and put on the client's turn). Call it at most
// once for a line, from the reader, before the next ReadLine.
func (c *Conn) Invited() {
	c.next = (c.next + FloodLines - 1) % FloodLines
	c.stamp[c.next], c.full = c.prev, c.pfull
}

// flooded records a line at now and reports whether it is one too many: the
// line FloodLines lines ago was read less than FloodWindow ago.
func (c *Conn) flooded(now time.Time) bool {
	oldest, had := c.stamp[c.next], c.full
	c.prev, c.pfull = oldest, had
	c.stamp[c.next] = now
	c.next = (c.next + 1) % FloodLines
	if c.next == 0 {
		c.full = true
	}
	return had && now.Sub(oldest) < FloodWindow
}

// Send writes b whole, with a deadline, or fails. Nothing to write is no
// system call.
func (c *Conn) Send(ctx context.Context, b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.write(ctx, b)
}

// write is Send under wmu.
func (c *Conn) write(ctx context.Context, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	dl := time.Now().Add(WriteTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	if err := c.c.SetWriteDeadline(dl); err != nil {
		return err
	}
	_, err := c.c.Write(b)
	return err
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Base is the machinery every adapter shares: the reader goroutine's life and
// the delivery of events to the referee.
//
// Events are delivered by a plain call on the reader goroutine, not through a
// channel to another goroutine: the referee handles a move on the goroutine
// that read it and writes the next turn from there. A hand-over between
// goroutines and back on every move woke other threads of the Go scheduler,
// which on a small machine compete with the engines for the CPU: taikai bench
// measured the median turnaround at 22-25 µs with the hand-overs and 16-20 µs
// without (2 vCPUs). It also gives the order the protocols need for free: the
// line after a move is read only once the referee has answered the move.
type Base struct {
	*Conn
	loop    func()
	sink    atomic.Pointer[func(engines.Action)]
	closed  chan struct{}
	gone    atomic.Bool // the client left or was cut off: write nothing more
	life    sync.Mutex  // orders starting the reader with closing
	started bool
	paced   time.Time       // the chatter's virtual schedule (Chatter)
	hello   chan struct{}   // closed by Greeted
	early   *engines.Action // the client left during Greet: told to the next Listen
	helloed sync.Once
	once    sync.Once
	wg      sync.WaitGroup
}

// NewBase wraps a connection for an adapter.
func NewBase(c engines.Stream) *Base {
	return &Base{Conn: NewConn(c), closed: make(chan struct{}), hello: make(chan struct{})}
}

// Greet writes hello, starts reading, and waits until the adapter's handler
// calls Greeted (it read the answer), the client leaves (engines.ErrGone),
// or ctx ends. Events before the referee's Listen go nowhere: the adapter
// logs the lines. See engines.Greeter.
func (b *Base) Greet(ctx context.Context, hello []byte) error {
	left := make(chan struct{})
	var once sync.Once
	mine := new(func(engines.Action))
	*mine = func(ev engines.Action) {
		if ev.Kind == engines.Left {
			once.Do(func() {
				b.life.Lock()
				if cur := b.sink.Load(); cur != mine {
					// The referee listens already (it did between the
					// hello and this end): tell it, as Listen would.
					h := *cur
					b.wg.Go(func() { h(ev) })
				} else {
					b.early = &ev // for the referee's Listen
				}
				b.life.Unlock()
				close(left)
			})
		}
	}
	b.listen(mine)
	if err := b.Send(ctx, hello); err != nil {
		return fmt.Errorf("%w (%v)", engines.ErrGone, err)
	}
	select {
	case <-b.hello:
		return nil
	case <-left:
		select {
		case <-b.hello: // it answered, then left: the game finds out
			return nil
		default:
			return engines.ErrGone
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Greeted tells Greet that the engine answered; later calls do nothing.
func (b *Base) Greeted() { b.helloed.Do(func() { close(b.hello) }) }

// Reader sets the adapter's reader loop, which Listen starts.
func (b *Base) Reader(loop func()) { b.loop = loop }

// Listen starts reading the client and delivers its events to handle, in
// order, on the seat's reader goroutine; nothing more is read until handle
// returns. A later call (the next game on the same connection) only changes
// where events go.
func (b *Base) Listen(handle func(engines.Action)) { b.listen(&handle) }

// listen is Listen of a handler Greet can tell apart; the handler changes
// under life, so that an end seen by Greet's handler is never lost between
// it and the referee's.
func (b *Base) listen(handle *func(engines.Action)) {
	b.life.Lock()
	defer b.life.Unlock()
	b.sink.Store(handle)
	if ev := b.early; ev != nil && !b.isClosed() {
		// The reader has stopped; tell the new handler on a goroutine of
		// its own, as Listen's caller may hold what the handler takes.
		b.early = nil
		h := *handle
		b.wg.Go(func() { h(*ev) })
		return
	}
	if b.started || b.isClosed() {
		return
	}
	b.started = true
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.loop()
	}()
}

// Chatter takes the line just read off the flood count, as Invited does, for
// a line the protocol lets an engine send as often as it likes: NBoard's
// thinking output (search, status, pong: NTest prints 18-28 a move), a
// brain's MESSAGE and DEBUG. No number of them is a fault. What they cost is
// bounded instead: beyond a burst of ChatterBurst they are read at most
// ChatterRate a second (the reader waits), so an engine that prints faster
// fills its own output pipe and spends its own clock, and the server's CPU
// per engine stays bounded; the log they go to is capped (Launcher.LogLimit).
// Call it from the reader, before the next ReadLine.
func (b *Base) Chatter() {
	b.Invited()
	const every = time.Second / ChatterRate
	now := time.Now()
	if earliest := now.Add(-ChatterBurst * every); b.paced.Before(earliest) {
		b.paced = earliest
	}
	b.paced = b.paced.Add(every)
	wait := b.paced.Sub(now)
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-b.closed:
	}
}

// ReadLoop is an adapter's reader: it reads the client's lines under the
// common limits until the client is gone or a handler says stop. Blank lines
// are skipped (every protocol ignores them); a line over MaxLine goes to
// tooLong; a fatal read error becomes the Left event it means. Handlers
// return false to stop reading. Set it with Reader.
func (b *Base) ReadLoop(tooLong func(at time.Time) bool, handle func(line []byte, at time.Time) bool) {
	for {
		line, at, err := b.ReadLine()
		switch {
		case err == ErrLineTooLong:
			if !tooLong(at) {
				return
			}
		case err != nil:
			b.ReadError(err)
			return
		case len(bytes.Trim(line, " \t")) == 0:
		case !handle(line, at):
			return
		}
	}
}

// Emit delivers an event and returns when it has been handled; false once the
// seat is closed. A line read before Close is still delivered, and Close
// waits for that: a refused line the adapter has already answered is counted
// even when the game ends in between.
func (b *Base) Emit(ev engines.Action) bool {
	if h := b.sink.Load(); h != nil {
		(*h)(ev)
	}
	return !b.isClosed()
}

func (b *Base) isClosed() bool {
	select {
	case <-b.closed:
		return true
	default:
		return false
	}
}

// Leave reports that the client is gone and stops writing to it.
func (b *Base) Leave(reason, cause string) {
	b.gone.Store(true)
	b.Emit(engines.Action{Kind: engines.Left, Reason: reason, Cause: cause, At: time.Now()})
}

// Gone reports whether the client left.
func (b *Base) Gone() bool { return b.gone.Load() }

// SendUnlessGone writes to a client that is still there. The check and the
// write are one step under the write lock, so that nothing written from
// another goroutine (the reader's ERROR answer to a line) follows SendLast's
// message.
func (b *Base) SendUnlessGone(ctx context.Context, p []byte) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if b.gone.Load() {
		return nil
	}
	return b.write(ctx, p)
}

// SendLast writes the seat's last message (END) to a client that is still
// there; nothing is written after it, not even the answer to a line the
// client sent meanwhile ("the server closes the connection right after").
func (b *Base) SendLast(ctx context.Context, p []byte) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if b.gone.Swap(true) {
		return nil
	}
	return b.write(ctx, p)
}

// Refused answers a line the adapter refused with reply and reports it to
// the referee as a violation of kind what; false when the seat is done.
func (b *Base) Refused(reply, what string, at time.Time) bool {
	if err := b.SendUnlessGone(context.Background(), []byte(reply)); err != nil {
		b.ReadError(err)
		return false
	}
	return b.Emit(engines.Action{Kind: engines.Violation, What: what, At: at})
}

// LogSent puts what the server sends a pipe engine in the engine's log, a
// line at a time, marked "[sent]" (its own lines are marked "[stdout]"), so
// that the log holds both sides of the conversation. A nil log keeps nothing.
func LogSent(log engines.LineLogger, b []byte) {
	if log == nil {
		return
	}
	for line := range bytes.Lines(b) {
		if line = bytes.TrimRight(line, "\r\n"); len(line) > 0 {
			log.LogLine("[sent] " + string(line))
		}
	}
}

// ValidNick reports whether name is a nickname the board protocols accept:
// 1-32 printable characters of valid UTF-8.
func ValidNick(name string) bool {
	n := utf8.RuneCountInString(name)
	if n < 1 || n > 32 || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// ReadError turns a fatal read error into the Left event it means.
func (b *Base) ReadError(err error) {
	if b.isClosed() {
		return // we closed it: not the client's doing
	}
	if errors.Is(err, ErrFlood) {
		b.Leave(games.ReasonDisconnect, games.CauseFlood)
		b.Conn.Close()
		return
	}
	if engines.ServerFault(err) {
		// The server's own socket failed (no memory, no buffers): not the
		// client's doing; the game is aborted and played again.
		b.Leave(games.ReasonAborted, games.CauseServer)
		return
	}
	b.Leave(games.ReasonDisconnect, "")
}

// Close closes the connection and waits for the reader goroutine. It must not
// be called from an event handler, which runs on that goroutine.
func (b *Base) Close() error {
	var err error
	b.once.Do(func() {
		b.life.Lock()
		close(b.closed)
		b.life.Unlock()
		err = b.Conn.Close()
		b.wg.Wait()
	})
	return err
}

// Fields splits a line into its tokens, separated by spaces or tabs, appending
// to dst (reused between lines: no allocation per line).
func Fields(line []byte, dst [][]byte) [][]byte {
	dst = dst[:0]
	for i := 0; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		if j > i {
			dst = append(dst, line[i:j])
		}
		i = j
	}
	return dst
}
