package protocol

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Limits common to all line protocols (PROTOCOLS.md, "Common rules").
const (
	MaxLine        = 4096        // longer lines are format errors, discarded up to the newline
	MaxNoNewline   = 64 << 10    // more bytes than this without a newline: disconnected
	FloodLines     = 200         // more lines than this ...
	FloodWindow    = time.Second // ... within this window: disconnected
	WriteTimeout   = 5 * time.Second
	verdictTimeout = time.Minute // an Attempt unanswered this long means the referee is gone
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
	c     net.Conn
	r     *bufio.Reader
	wmu   sync.Mutex
	stamp [FloodLines]time.Time // times of the last FloodLines lines, a ring
	next  int
	full  bool
}

// NewConn wraps a connection.
func NewConn(c net.Conn) *Conn {
	// Room for a maximal line plus "\r\n", so ReadSlice fills only on a long line.
	return &Conn{c: c, r: bufio.NewReaderSize(c, MaxLine+2)}
}

// ReadLine returns the next line without its "\n" and a trailing "\r", and the
// time it was read. The slice is valid until the next call. ErrLineTooLong is
// not fatal; any other error is.
func (c *Conn) ReadLine() ([]byte, time.Time, error) {
	line, err := c.r.ReadSlice('\n')
	now := time.Now()
	if err == bufio.ErrBufferFull {
		// Discard to the newline, but not forever.
		n := len(line)
		for err == bufio.ErrBufferFull {
			line, err = c.r.ReadSlice('\n')
			if n += len(line); n > MaxNoNewline {
				return nil, now, ErrFlood
			}
		}
		if err != nil {
			return nil, now, err
		}
		if c.flooded(time.Now()) {
			return nil, now, ErrFlood
		}
		return nil, time.Now(), ErrLineTooLong
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			// A last line without newline is still a line; the next call sees EOF.
			return trimCR(line), now, nil
		}
		return nil, now, err
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

// flooded records a line at now and reports whether it is one too many: the
// line FloodLines lines ago was read less than FloodWindow ago.
func (c *Conn) flooded(now time.Time) bool {
	oldest, had := c.stamp[c.next], c.full
	c.stamp[c.next] = now
	c.next = (c.next + 1) % FloodLines
	if c.next == 0 {
		c.full = true
	}
	return had && now.Sub(oldest) < FloodWindow
}

// Send writes b whole, with a deadline, or fails.
func (c *Conn) Send(ctx context.Context, b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
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

// Base is the machinery every adapter shares: the event channel, the reader
// goroutine's life, and the hand-over of Attempt verdicts.
type Base struct {
	*Conn
	events  chan Event
	closed  chan struct{}
	verdict chan struct{}
	pending atomic.Bool
	gone    atomic.Bool // the client left or was cut off: write nothing more
	once    sync.Once
	wg      sync.WaitGroup
}

// NewBase wraps a connection for an adapter.
func NewBase(c net.Conn) *Base {
	return &Base{
		Conn:    NewConn(c),
		events:  make(chan Event, 64),
		closed:  make(chan struct{}),
		verdict: make(chan struct{}, 1),
	}
}

// Events delivers the client's events.
func (b *Base) Events() <-chan Event { return b.events }

// Go runs the adapter's reader loop in a goroutine that Close waits for.
func (b *Base) Go(loop func()) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		loop()
	}()
}

// ReadLoop is an adapter's reader: it reads the client's lines under the
// common limits until the client is gone or a handler says stop. Blank lines
// are skipped (every protocol ignores them); a line over MaxLine goes to
// tooLong; a fatal read error becomes the Left event it means. Handlers
// return false to stop reading. Run it with Go.
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

// Emit delivers an event; false once the seat is closed.
func (b *Base) Emit(ev Event) bool {
	select {
	case b.events <- ev:
		return true
	case <-b.closed:
		return false
	}
}

// EmitAttempt delivers a move attempt and waits until the referee has answered it
// (Release), so that the next line is read in the state the answer left.
// False once the seat is closed.
func (b *Base) EmitAttempt(ev Event) bool {
	b.pending.Store(true)
	if !b.Emit(ev) {
		return false
	}
	t := time.NewTimer(verdictTimeout)
	defer t.Stop()
	select {
	case <-b.verdict:
		return true
	case <-b.closed:
		return false
	case <-t.C:
		// The referee always answers or closes; this is a safety net, not a path.
		return false
	}
}

// Release answers the pending Attempt, if any.
func (b *Base) Release() {
	if b.pending.CompareAndSwap(true, false) {
		b.verdict <- struct{}{}
	}
}

// Leave reports that the client is gone and stops writing to it.
func (b *Base) Leave(reason, cause string) {
	b.gone.Store(true)
	b.Emit(Event{Kind: Left, Reason: reason, Cause: cause, At: time.Now()})
}

// Gone reports whether the client left.
func (b *Base) Gone() bool { return b.gone.Load() }

// SendUnlessGone writes to a client that is still there.
func (b *Base) SendUnlessGone(ctx context.Context, p []byte) error {
	if b.gone.Load() {
		return nil
	}
	return b.Send(ctx, p)
}

// ReadError turns a fatal read error into the Left event it means.
func (b *Base) ReadError(err error) {
	select {
	case <-b.closed:
		return // we closed it: not the client's doing
	default:
	}
	if errors.Is(err, ErrFlood) {
		b.Leave(ReasonDisconnect, CauseFlood)
		b.Conn.Close()
		return
	}
	b.Leave(ReasonDisconnect, "")
}

// Close closes the connection and waits for the reader goroutine.
func (b *Base) Close() error {
	var err error
	b.once.Do(func() {
		close(b.closed)
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

// Reply writes an update's lines, if there are any, and then answers the
// pending Attempt when the update carried the client's own move: the client's
// next line is read only after the answer went out.
func (b *Base) Reply(ctx context.Context, p []byte, own bool) error {
	var err error
	if len(p) > 0 {
		err = b.SendUnlessGone(ctx, p)
	}
	if own {
		b.Release()
	}
	return err
}
