// Package pbrain is the manager side of the Gomocup "pbrain" protocol
// (PROTOCOLS.md §5): a Gomoku engine (a "brain") is a child process that
// reads commands on its standard input and answers on its standard output.
package pbrain

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/games"
)

// Protocol is this protocol's id.
const Protocol = "pbrain"

// Info is the protocol as taikai registers it.
var Info = engines.Protocol{
	Name: Protocol, Game: "gomoku", Transport: engines.Stdio, Folder: true,
	// INFO rule has no bit for the seed rule's double-three ban.
	Rules:    []string{"freestyle", "standard", "renju"},
	RulesWhy: "INFO rule cannot tell a brain the seed rule's double-three ban",
	New: func(c engines.Stream, cfg engines.SeatConfig) engines.Seat {
		return New(c, cfg)
	},
	// Gomocup's freestyle turn limit, and a tolerance on top of it as
	// GomocupJudge gives (option tolerance_ms).
	Clock: engines.Clock{MoveTime: 5 * time.Second, Tolerance: time.Second},
	Options: []engines.Option{{
		Name:  "tolerance_ms",
		About: "pbrain: milliseconds a brain may go over its move time before it loses (default 1000; not told to the brain)",
		Check: func(v string) error {
			if n, err := strconv.Atoi(v); v != "" && (err != nil || n < 0 || n > 60000) {
				return fmt.Errorf("%q: want 0-60000", v)
			}
			return nil
		},
	}},
}

func init() { engines.RegisterProtocol(Info) }

// RuleMask is the INFO rule value for a taikai rule set: 0 five or more wins
// (freestyle), 1 exactly five (standard), 4 renju. The seed rule's
// double-three ban has no bit: tournaments refuse it for brains (Info.Rules).
func RuleMask(rule string) int {
	switch rule {
	case "standard":
		return 1
	case "renju":
		return 4
	}
	return 0
}

// MaxNotes is how many of a move's MESSAGEs are kept as its notes (the
// last ones), MaxNote the bytes kept of each: a move's notes take at most
// 32 × 200 bytes, however much a brain says.
const (
	MaxNotes = 32
	MaxNote  = 200
)

// MemoryHeadroom is what INFO max_memory keeps back from the sandbox's
// limit: a quarter of it, at least MinHeadroom. A brain that sizes its hash
// table from max_memory (Rapfi) needs room beside the table for its code,
// stacks, weights and allocator; told the whole limit, it is stopped by
// memory in every game.
func MemoryHeadroom(limit int64) int64 { return max(limit/4, MinHeadroom) }

// MinHeadroom is the least headroom.
const MinHeadroom = 32 << 20

// Seat is one brain's pipes.
type Seat struct {
	*protocol.Base
	color games.Color
	cfg   engines.SeatConfig

	log engines.LineLogger // nil unless the stream keeps lines in the engine's log

	greeted bool // START went out with Greet

	mu       sync.Mutex
	nick     string
	messages []string // the brain's MESSAGEs since its last move, the last MaxNotes
	myTurn   bool
	history  []games.Ply // every move of the game so far
	unseen   []games.Ply // moves the brain has not been told
	synced   bool        // the brain's board is the game's, but for unseen
	buf      []byte
}

// New wraps a brain's stream and starts reading it.
func New(c engines.Stream, cfg engines.SeatConfig) *Seat {
	s := &Seat{Base: protocol.NewBase(newCRAsLF(c)), color: cfg.Color, cfg: cfg}
	s.log, _ = c.(engines.LineLogger)
	s.Reader(func() {
		s.ReadLoop(func(at time.Time) bool {
			return s.Emit(engines.Action{Kind: engines.Violation, What: "line_too_long", At: at})
		}, s.handle)
	})
	return s
}

// crAsLF lets a brain end its lines with CR LF, LF or CR alone, as the
// protocol allows: a CR reads as LF, and the LF of a CR LF is dropped (so
// that a line counts once towards the flood limit).
type crAsLF struct {
	engines.Stream
	cr *bool // the last byte read was a CR
}

func newCRAsLF(s engines.Stream) crAsLF { return crAsLF{Stream: s, cr: new(bool)} }

func (c crAsLF) Read(b []byte) (int, error) {
	for {
		n, err := c.Stream.Read(b)
		out := 0
		for _, ch := range b[:n] {
			switch {
			case ch == '\n' && *c.cr:
				*c.cr = false // the LF of a CR LF
				continue
			case ch == '\r':
				*c.cr = true
				ch = '\n'
			default:
				*c.cr = false
			}
			b[out] = ch
			out++
		}
		// A read of a lone LF after a CR leaves nothing: read on rather
		// than return 0 bytes and no error.
		if out > 0 || n == 0 || err != nil {
			return out, err
		}
	}
}

// Traits: a refused move or a timeout loses (the protocol has no way to say
// a move was refused, or that the manager moved for the brain).
func (s *Seat) Traits() engines.Traits {
	return engines.Traits{IllegalLoses: true, ForfeitOnTimeout: true}
}

// Nick is the name the brain gave in its ABOUT answer, "" if none.
func (s *Seat) Nick() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nick
}

var (
	moveLine  = regexp.MustCompile(`^\s*(-?\d+)\s*,\s*(-?\d+)\s*$`)
	aboutName = regexp.MustCompile(`(?i)\bname\s*=\s*"([^"]*)"`)
	aboutKey  = regexp.MustCompile(`(?i)\b(name|version|author)\s*=\s*"([^"]*)"`)
)

// aboutNick is what ABOUT's answer says, as the nick shown with the game:
// "name version by author", as much of it as fits in a nick (32 characters).
func aboutNick(text string) string {
	kv := map[string]string{}
	for _, m := range aboutKey.FindAllStringSubmatch(text, -1) {
		kv[strings.ToLower(m[1])] = strings.TrimSpace(m[2])
	}
	nick := kv["name"]
	for _, more := range []string{" " + kv["version"], " by " + kv["author"]} {
		if strings.TrimSpace(strings.TrimPrefix(more, " by")) != "" && utf8.RuneCountInString(nick+more) <= 32 {
			nick += more
		}
	}
	return nick
}

// handle acts on one line of the brain's.
func (s *Seat) handle(line []byte, at time.Time) bool {
	text := string(bytes.TrimSpace(line))
	word, rest, _ := strings.Cut(text, " ")
	s.keep(text) // every line, in the log
	switch {
	case moveLine.MatchString(text):
		m := moveLine.FindStringSubmatch(text)
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		s.mu.Lock()
		mine, notes := s.myTurn, s.messages
		if mine {
			s.messages = nil
		}
		s.mu.Unlock()
		if !mine {
			return s.Emit(engines.Action{Kind: engines.Violation, What: games.NotYourTurn.String(), At: at, Ignored: true})
		}
		s.Invited() // the answer the turn asked for
		return s.Emit(engines.Action{Kind: engines.Attempt, Move: games.Move{X: x, Y: y}, At: at, Note: strings.Join(notes, "\n")})
	case strings.EqualFold(word, "MESSAGE"):
		// Every MESSAGE before a move is one of the move's notes (games.Ply.Note).
		msg := strings.TrimSpace(rest)
		if len(msg) > MaxNote {
			msg = strings.ToValidUTF8(msg[:MaxNote], "")
		}
		s.mu.Lock()
		if len(s.messages) == MaxNotes {
			s.messages = append(s.messages[:0], s.messages[1:]...)
		}
		if msg != "" {
			s.messages = append(s.messages, msg)
		}
		s.mu.Unlock()
		s.Chatter()
		return true
	case strings.EqualFold(word, "OK"):
		s.Greeted()
		s.Chatter()
		return true
	case strings.EqualFold(word, "DEBUG"), strings.EqualFold(word, "SUGGEST"),
		strings.EqualFold(word, "UNKNOWN"), strings.EqualFold(word, "ERROR"):
		// Answers to commands, and lines the protocol lets a brain print
		// before its move, as many as it likes.
		s.Chatter()
		return true
	case aboutName.MatchString(text):
		s.Chatter()
		if nick := aboutNick(text); protocol.ValidNick(nick) {
			s.mu.Lock()
			s.nick = nick
			s.mu.Unlock()
		}
		return true
	}
	// Anything else is ignored, as GomocupJudge does, and counted.
	return s.Emit(engines.Action{Kind: engines.Violation, What: "unknown_command", At: at, Ignored: true})
}

// keep puts a line of the brain's in its log.
func (s *Seat) keep(line string) {
	if s.log != nil {
		s.log.LogLine("[stdout] " + line)
	}
}

// logSent puts what taikai sends the brain in its log, line by line, and
// returns it.
func (s *Seat) logSent(b []byte) []byte {
	protocol.LogSent(s.log, b)
	return b
}

// Greet sends START and waits for the brain's OK (engines.Greeter): the
// protocol leaves START out of the turn time, and a brain may load its
// weights there.
func (s *Seat) Greet(ctx context.Context, size int) error {
	s.greeted = true
	b := appendStart(s.buf[:0], size)
	s.buf = b
	return s.Base.Greet(ctx, s.logSent(b))
}

func appendStart(b []byte, size int) []byte {
	b = append(b, "START "...)
	b = strconv.AppendInt(b, int64(size), 10)
	return append(b, eol...)
}

// eol ends every line taikai sends a brain, as the protocol text writes it.
const eol = "\r\n"

// AnnouncedMemory is the INFO max_memory value for a sandbox limit: the
// limit less MemoryHeadroom, 0 (no limit) when there is none.
func AnnouncedMemory(limit int64) int64 {
	if limit <= 0 {
		return 0
	}
	return max(limit-MemoryHeadroom(limit), 0)
}

// Begin starts the brain (START unless Greet sent it, INFO, ABOUT) and gives
// it the move if it is its turn.
func (s *Seat) Begin(ctx context.Context, st engines.Start) error {
	b := s.buf[:0]
	if !s.greeted {
		b = appendStart(b, st.Board.Size())
	}
	info := func(key string, v int64) {
		b = append(b, "INFO "...)
		b = append(b, key...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, v, 10)
		b = append(b, eol...)
	}
	info("timeout_turn", s.cfg.MoveTime.Milliseconds())
	info("timeout_match", s.cfg.Total.Milliseconds())
	info("max_memory", AnnouncedMemory(s.cfg.MemoryBytes))
	info("game_type", 1)
	info("rule", int64(RuleMask(s.cfg.Rule)))
	if s.cfg.Folder != "" {
		b = append(b, "INFO folder "...)
		b = append(b, s.cfg.Folder...)
		b = append(b, eol...)
	}
	b = append(b, "ABOUT"+eol...)
	s.mu.Lock()
	s.history = append(s.history[:0], st.Opening...)
	s.unseen = append(s.unseen[:0], st.Opening...)
	s.synced = true
	s.myTurn = st.Turn == s.color
	if s.myTurn {
		b = s.appendGive(b, st.Remaining)
	}
	s.mu.Unlock()
	s.buf = b
	return s.SendUnlessGone(ctx, s.logSent(b))
}

// appendGive appends what gives the brain the move: BEGIN on an empty
// board, TURN with the opponent's move when that is all the brain has not
// seen, else BOARD with every stone. Called with s.mu held.
func (s *Seat) appendGive(b []byte, remaining time.Duration) []byte {
	if s.cfg.Total > 0 {
		b = append(b, "INFO time_left "...)
		b = strconv.AppendInt(b, remaining.Milliseconds(), 10)
		b = append(b, eol...)
	}
	switch {
	case len(s.history) == 0:
		b = append(b, "BEGIN"+eol...)
	case s.synced && len(s.unseen) == 1 && !s.unseen[0].Pass:
		m := s.unseen[0]
		b = append(b, "TURN "...)
		b = appendPoint(b, m.X, m.Y)
		b = append(b, eol...)
	default:
		// In the order the moves were made, as renju requires.
		b = append(b, "BOARD"+eol...)
		for _, m := range s.history {
			if m.Pass {
				continue
			}
			b = appendPoint(b, m.X, m.Y)
			if m.Color == s.color {
				b = append(b, ",1"+eol...)
			} else {
				b = append(b, ",2"+eol...)
			}
		}
		b = append(b, "DONE"+eol...)
	}
	s.unseen, s.synced = s.unseen[:0], true
	return b
}

func appendPoint(b []byte, x, y int) []byte {
	b = strconv.AppendInt(b, int64(x), 10)
	b = append(b, ',')
	return strconv.AppendInt(b, int64(y), 10)
}

// Update records the moves and gives the brain the move when it is its turn.
func (s *Seat) Update(ctx context.Context, u engines.Update) error {
	s.mu.Lock()
	for _, m := range u.Moves {
		s.history = append(s.history, m)
		if m.Color == s.color && !m.Auto && !m.Pass {
			continue // its own move, which it has played on its board
		}
		s.unseen = append(s.unseen, m)
	}
	s.myTurn = u.Turn == s.color
	if !s.myTurn {
		s.mu.Unlock()
		return nil
	}
	b := s.appendGive(s.buf[:0], u.Remaining)
	s.mu.Unlock()
	s.buf = b
	return s.SendUnlessGone(ctx, s.logSent(b))
}

// Refuse: never called (a refused move loses), nothing to say.
func (s *Seat) Refuse(context.Context, games.Move, games.Refusal) error { return nil }

// Relay: a brain has no chat.
func (s *Seat) Relay(context.Context, games.Color, string, string) error { return nil }

// OpponentLeft: nothing to tell; END follows.
func (s *Seat) OpponentLeft(context.Context) error { return nil }

// End sends END: the brain is to exit.
func (s *Seat) End(ctx context.Context, _ engines.Ending) error {
	return s.SendLast(ctx, s.logSent([]byte("END"+eol)))
}
