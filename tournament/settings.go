// Package tournament is the domain: game settings, the referee that runs one
// game between two seats under clocks, the runner that launches engines for it,
// round-robin schedules, standings and ratings. It defines the interfaces it
// needs from storage and from the live view, and imports neither.
package tournament

import (
	"fmt"
	"slices"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol/othellomove"
	"github.com/taikai-dev/taikai/games/gomoku"
)

// Settings are the rules and clocks a game is played under. Zero values mean
// the protocol's default (see Resolve); they are stored with every game.
type Settings struct {
	Game        string `json:"game"`
	Rule        string `json:"rule,omitempty"`               // gomoku: seed, freestyle, standard, renju
	Size        int    `json:"size,omitempty"`               // gomoku board size, 5..25
	MoveTimeMS  int64  `json:"move_time_ms,omitempty"`       // per-move clock
	TotalTimeMS int64  `json:"total_time_ms,omitempty"`      // total clock per side
	ByoyomiMS   int64  `json:"byoyomi_ms,omitempty"`         // with a total clock: time per move once it is spent
	OnTimeout   string `json:"on_timeout,omitempty"`         // forfeit, or random (gomoku: place)
	MaxErrors   int    `json:"max_errors,omitempty"`         // refused commands before a loss by illegal; -1: no limit
	MaxTimeouts int    `json:"max_timeouts,omitempty"`       // timeouts in a row before a loss, with on_timeout random
	BoardOrder  string `json:"board_order,omitempty"`        // othello-board: column (default) or row
	EndMessage  bool   `json:"end_message,omitempty"`        // gomoku-turn: send "end <win|lose|draw> <reason>"
	ConnectMS   int64  `json:"connect_timeout_ms,omitempty"` // engine start to connection
	// PaceMS is the least time between two moves as they are played out, for
	// games people watch (a demo, a final on a projector). The pause comes
	// after a move is accepted and before the next is asked for, outside every
	// clock.
	PaceMS int64 `json:"pace_ms,omitempty"`
}

// Protocol defaults (PROTOCOLS.md).
const (
	DefaultMoveTime     = 10 * time.Second  // othello-board, gomoku-turn
	DefaultTotalTime    = 600 * time.Second // othello-move
	DefaultByoyomi      = 500 * time.Millisecond
	DefaultMaxErrors    = 10 // othello-board
	DefaultMaxTimeouts  = 3  // gomoku-turn: three timeouts in a row lose
	OnTimeoutForfeit    = "forfeit"
	OnTimeoutRandom     = "random"
	onTimeoutPlaceAlias = "place"
)

// Validate checks the settings and fills in game-level defaults (rule, size,
// on_timeout), returning a FieldError naming the bad field.
func (s *Settings) Validate() error {
	if !slices.Contains(engines.Games(), s.Game) {
		return &engines.FieldError{Field: "game", Message: fmt.Sprintf("unknown game %q, want othello or gomoku", s.Game)}
	}
	switch s.Game {
	case "othello":
		if s.Rule != "" && s.Rule != "standard" {
			return &engines.FieldError{Field: "rule", Message: fmt.Sprintf("othello has one rule, %q is not it (leave it empty)", s.Rule)}
		}
		if s.Size != 0 && s.Size != 8 {
			return &engines.FieldError{Field: "size", Message: "othello is played on 8x8"}
		}
		s.Rule, s.Size = "", 8
		if s.OnTimeout == "" {
			s.OnTimeout = OnTimeoutForfeit
		}
		if _, err := parseOrder(s.BoardOrder); err != nil {
			return &engines.FieldError{Field: "board_order", Message: err.Error()}
		}
	case "gomoku":
		r, err := gomoku.ParseRule(s.Rule)
		if err != nil {
			return &engines.FieldError{Field: "rule", Message: err.Error()}
		}
		s.Rule = r.String()
		if s.Size == 0 {
			s.Size = gomoku.DefaultSize
		}
		if s.Size < gomoku.MinSize || s.Size > gomoku.MaxSize {
			return &engines.FieldError{Field: "size", Message: fmt.Sprintf("board size %d out of range %d-%d", s.Size, gomoku.MinSize, gomoku.MaxSize)}
		}
		if s.OnTimeout == "" || s.OnTimeout == onTimeoutPlaceAlias {
			s.OnTimeout = OnTimeoutRandom
		}
		if s.BoardOrder != "" {
			return &engines.FieldError{Field: "board_order", Message: "only othello-board has a board order"}
		}
	}
	if s.OnTimeout != OnTimeoutForfeit && s.OnTimeout != OnTimeoutRandom {
		return &engines.FieldError{Field: "on_timeout", Message: fmt.Sprintf("%q: want forfeit, random or place", s.OnTimeout)}
	}
	for _, f := range []struct {
		name string
		v    int64
		max  int64
	}{
		{"move_time_ms", s.MoveTimeMS, 24 * 3600 * 1000},
		{"total_time_ms", s.TotalTimeMS, 7 * 24 * 3600 * 1000},
		{"byoyomi_ms", s.ByoyomiMS, 3600 * 1000},
		{"connect_timeout_ms", s.ConnectMS, 600 * 1000},
		{"pace_ms", s.PaceMS, 60 * 1000},
	} {
		if f.v < 0 || f.v > f.max {
			return &engines.FieldError{Field: f.name, Message: fmt.Sprintf("%d out of range 0-%d", f.v, f.max)}
		}
	}
	if s.MaxErrors < -1 {
		return &engines.FieldError{Field: "max_errors", Message: "must be -1 (no limit), 0 (default) or positive"}
	}
	if s.MaxTimeouts < 0 {
		return &engines.FieldError{Field: "max_timeouts", Message: "must not be negative"}
	}
	return nil
}

// clockSpec is one seat's clock.
type clockSpec struct {
	perMove time.Duration // 0: none
	total   time.Duration // 0: none
	byoyomi time.Duration
}

// clockFor resolves the clock of a seat speaking protocol.
func (s *Settings) clockFor(protocol string) clockSpec {
	c := clockSpec{
		perMove: time.Duration(s.MoveTimeMS) * time.Millisecond,
		total:   time.Duration(s.TotalTimeMS) * time.Millisecond,
		byoyomi: time.Duration(s.ByoyomiMS) * time.Millisecond,
	}
	if protocol == othellomove.Protocol {
		// The move-exchange protocol reports remaining time: it always has a total clock.
		if c.total == 0 {
			c.total = DefaultTotalTime
		}
		if s.ByoyomiMS == 0 {
			c.byoyomi = DefaultByoyomi
		}
		return c
	}
	if c.perMove == 0 {
		c.perMove = DefaultMoveTime
	}
	return c
}

// MoveTime is the per-move time engines are told ({time_ms}): the per-move clock,
// or the protocol default.
func (s *Settings) MoveTime(protocol string) time.Duration {
	c := s.clockFor(protocol)
	if c.perMove > 0 {
		return c.perMove
	}
	return c.byoyomi + c.total/30
}

func (s *Settings) maxErrors() int {
	switch {
	case s.MaxErrors > 0:
		return s.MaxErrors
	case s.MaxErrors < 0 || s.Game == "gomoku":
		// The gomoku server let a client retry until its clock ran out.
		return -1
	}
	return DefaultMaxErrors
}

func (s *Settings) maxTimeouts() int {
	if s.MaxTimeouts > 0 {
		return s.MaxTimeouts
	}
	return DefaultMaxTimeouts
}

func (s *Settings) connectTimeout() time.Duration {
	if s.ConnectMS > 0 {
		return time.Duration(s.ConnectMS) * time.Millisecond
	}
	return engines.DefaultConnectTimeout
}
