// Package tournament is the domain: game settings, the referee that runs one
// game between two seats under clocks, the runner that launches engines for it,
// round-robin schedules, standings and ratings. It defines the interfaces it
// needs from storage and from the live view, and imports neither.
package tournament

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament/stats"
)

// Settings are the rules and clocks a game is played under. Zero values mean
// the game's or the protocol's default (see Validate and clockFor); they are
// stored with every game.
type Settings struct {
	Game        string `json:"game"`
	Rule        string `json:"rule,omitempty"`               // the game's rule set (gomoku: seed, freestyle, standard, renju)
	Size        int    `json:"size,omitempty"`               // board size, where the game has a choice
	MoveTimeMS  int64  `json:"move_time_ms,omitempty"`       // per-move clock
	TotalTimeMS int64  `json:"total_time_ms,omitempty"`      // total clock per side
	ByoyomiMS   int64  `json:"byoyomi_ms,omitempty"`         // with a total clock: time per move once it is spent
	OnTimeout   string `json:"on_timeout,omitempty"`         // forfeit, or random (gomoku: place)
	MaxErrors   int    `json:"max_errors,omitempty"`         // refused commands before a loss by illegal; -1: no limit
	MaxTimeouts int    `json:"max_timeouts,omitempty"`       // timeouts in a row before a loss, with on_timeout random
	ConnectMS   int64  `json:"connect_timeout_ms,omitempty"` // engine start to connection
	// PaceMS is the least time between two moves as they are played out, for
	// games people watch (a demo, a final on a projector). The pause comes
	// after a move is accepted and before the next is asked for, outside every
	// clock.
	PaceMS int64 `json:"pace_ms,omitempty"`
	// Options are the protocols' own settings (board_order, end_message):
	// each protocol reads its own and checks them (engines.Protocol.Options).
	Options map[string]string `json:"options,omitempty"`
	// Openings: every game pair starts from an opening of a suite (the
	// opening's moves are played by the server before the engines are told
	// the game began).
	Openings *Openings `json:"openings,omitempty"`
	// Pairs: games are played in pairs, the second with colours swapped
	// (always so with Openings: both games of a pair start from its opening).
	Pairs bool `json:"pairs,omitempty"`
	// SPRT stops a two-engine tournament as soon as a sequential
	// probability ratio test decides, evaluated after every game pair (after
	// every game without pairs).
	SPRT *stats.SPRT `json:"sprt,omitempty"`
	// IdleMS is a person's clock (issue 39): a person's seat with no move
	// for this long resigns; 0: DefaultIdle. Engines' clocks are the others.
	IdleMS int64 `json:"idle_ms,omitempty"`
}

// Openings says which suite a tournament's games start from and in what
// order its openings are taken.
type Openings struct {
	// Suite is "builtin" (the suite shipped for the game and rule) or
	// empty with SuiteID, an uploaded suite.
	Suite   string `json:"suite,omitempty"`
	SuiteID int64  `json:"suite_id,omitempty"`
	File    string `json:"file,omitempty"`  // `taikai match --openings file=F` only
	Order   string `json:"order,omitempty"` // random (default) or sequential
	Start   int    `json:"start,omitempty"` // first opening (0-based) for order sequential
	// Plies cuts the games of a record File (.ggf, .psq) to their first
	// plies moves; 0 takes them whole.
	Plies int `json:"plies,omitempty"`
}

// Opening orders.
const (
	OrderRandom     = "random"
	OrderSequential = "sequential"
)

// Paired reports whether games come in pairs with colours swapped.
func (s *Settings) Paired() bool { return s.Pairs || s.Openings != nil }

// UnmarshalJSON reads settings, and also the protocol options of the first
// release, which stood beside the others (board_order, end_message).
func (s *Settings) UnmarshalJSON(b []byte) error {
	type plain Settings
	var v struct {
		plain
		BoardOrder string `json:"board_order"`
		EndMessage bool   `json:"end_message"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Settings(v.plain)
	if v.BoardOrder != "" {
		s.SetOption("board_order", v.BoardOrder)
	}
	if v.EndMessage {
		s.SetOption("end_message", "true")
	}
	return nil
}

// SetOption sets a protocol option.
func (s *Settings) SetOption(name, value string) {
	if s.Options == nil {
		s.Options = map[string]string{}
	}
	s.Options[name] = value
}

// Defaults of the referee (PROTOCOLS.md).
const (
	DefaultMoveTime    = 10 * time.Second // when neither settings nor protocol say
	DefaultMaxTimeouts = 3                // timeouts in a row that lose, with on_timeout random
	DefaultIdle        = 10 * time.Minute // a person's seat with no move this long resigns
	OnTimeoutForfeit   = "forfeit"
	OnTimeoutRandom    = "random"
	onTimeoutPlace     = "place" // gomoku-turn's word for random
)

// writeTimeout bounds writing the end of a game to a seat.
const writeTimeout = 5 * time.Second

// Validate checks the settings and fills in the game's defaults (rule, size,
// on_timeout), returning a games.Error naming the bad field.
func (s *Settings) Validate() error {
	g, ok := games.Lookup(s.Game)
	if !ok {
		return games.Invalid("game", "%s", games.Unknown(s.Game))
	}
	var errs games.Errors
	if rule, err := g.Rule(s.Rule); err != nil {
		errs = errs.Add(games.Invalid("rule", "%s", err.Error()))
	} else {
		s.Rule = rule
	}
	if s.Size == 0 {
		s.Size = g.Size
	}
	if s.Size < g.MinSize || s.Size > g.MaxSize {
		msg := fmt.Sprintf("board size %d out of range %d-%d", s.Size, g.MinSize, g.MaxSize)
		if g.MinSize == g.MaxSize {
			msg = fmt.Sprintf("%s is played on %dx%d", s.Game, g.Size, g.Size)
		}
		errs = errs.Add(games.Invalid("size", "%s", msg))
	}
	if s.OnTimeout == "" {
		s.OnTimeout = g.OnTimeout
	}
	if s.OnTimeout == onTimeoutPlace {
		s.OnTimeout = OnTimeoutRandom
	}
	errs = errs.Add(engines.CheckOptions(s.Game, s.Options))
	if s.OnTimeout != OnTimeoutForfeit && s.OnTimeout != OnTimeoutRandom {
		errs = errs.Add(games.Invalid("on_timeout", "%q: want forfeit, random or place", s.OnTimeout))
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
		{"idle_ms", s.IdleMS, 24 * 3600 * 1000},
	} {
		if f.v < 0 || f.v > f.max {
			errs = errs.Add(games.OutOfRange(f.name, int64(f.v), 0, int64(f.max), ""))
		}
	}
	if o := s.Openings; o != nil {
		switch {
		case o.File != "" && (o.Suite != "" || o.SuiteID != 0):
			errs = errs.Add(games.Invalid("openings.file", `give one of suite "builtin", suite_id or file`))
		case o.File != "":
		case o.Suite == "" && o.SuiteID == 0:
			errs = errs.Add(games.Invalid("openings.suite", `want "builtin" or a suite_id`))
		case o.Suite != "" && o.Suite != "builtin":
			errs = errs.Add(games.Invalid("openings.suite", `%q: want "builtin" (or give suite_id for an uploaded suite)`, o.Suite))
		case o.Suite != "" && o.SuiteID != 0:
			errs = errs.Add(games.Invalid("openings.suite_id", `give either suite "builtin" or a suite_id, not both`))
		case o.SuiteID < 0:
			errs = errs.Add(games.Invalid("openings.suite_id", "must be positive"))
		}
		if o.Order == "" {
			o.Order = OrderRandom
		}
		if o.Order != OrderRandom && o.Order != OrderSequential {
			errs = errs.Add(games.Invalid("openings.order", "%q: want random or sequential", o.Order))
		}
		if o.Start < 0 {
			errs = errs.Add(games.Invalid("openings.start", "must not be negative"))
		}
	}
	if s.MaxErrors < -1 {
		errs = errs.Add(games.Invalid("max_errors", "must be -1 (no limit), 0 (default) or positive"))
	}
	if s.MaxTimeouts < 0 {
		errs = errs.Add(games.Invalid("max_timeouts", "must not be negative"))
	}
	return errs.Err()
}

// clockSpec is one seat's clock.
type clockSpec struct {
	perMove time.Duration // 0: none
	total   time.Duration // 0: none
	byoyomi time.Duration
	grace   time.Duration // added to every move's allowance (the protocol's tolerance)
}

// clockFor resolves the clock of a seat speaking protocol.
func (s *Settings) clockFor(protocol string) clockSpec {
	if protocol == engines.Human {
		idle := time.Duration(s.IdleMS) * time.Millisecond
		if idle <= 0 {
			idle = DefaultIdle
		}
		return clockSpec{perMove: idle}
	}
	c := clockSpec{
		perMove: time.Duration(s.MoveTimeMS) * time.Millisecond,
		total:   time.Duration(s.TotalTimeMS) * time.Millisecond,
		byoyomi: time.Duration(s.ByoyomiMS) * time.Millisecond,
	}
	p, _ := engines.LookupProtocol(protocol)
	c.grace = p.Clock.Tolerance
	if v, ok := s.Options["tolerance_ms"]; ok && p.Clock.Tolerance > 0 {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms >= 0 {
			c.grace = time.Duration(ms) * time.Millisecond
		}
	}
	if p.Clock.Total > 0 {
		// A protocol that reports the remaining time (othello-move's START
		// and ACK) always has a total clock, and is judged by the clock it
		// reports: a per-move time, for the other protocols of a game, does
		// not apply to it.
		c.perMove = 0
		if c.total == 0 {
			c.total = p.Clock.Total
		}
		if s.ByoyomiMS == 0 {
			c.byoyomi = p.Clock.Byoyomi
		}
		return c
	}
	if c.perMove == 0 {
		c.perMove = p.Clock.MoveTime
	}
	if c.perMove == 0 {
		c.perMove = DefaultMoveTime
	}
	return c
}

// newRules starts a game under the settings.
func (s *Settings) newRules() (games.Rules, error) {
	g, ok := games.Lookup(s.Game)
	if !ok {
		return nil, errors.New(games.Unknown(s.Game))
	}
	return g.New(s.Rule, s.Size)
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
	case s.MaxErrors < 0:
		return -1
	}
	g, _ := games.Lookup(s.Game)
	return g.MaxErrors
}

func (s *Settings) maxTimeouts() int {
	if s.MaxTimeouts > 0 {
		return s.MaxTimeouts
	}
	return DefaultMaxTimeouts
}

// connectTimeout is the time an engine has to connect: its own setting,
// else the tournament's, else its protocol's default, else the launcher's.
func (s *Settings) connectTimeout(e engines.Engine) time.Duration {
	switch {
	case e.ConnectTimeoutMS > 0:
		return time.Duration(e.ConnectTimeoutMS) * time.Millisecond
	case s.ConnectMS > 0:
		return time.Duration(s.ConnectMS) * time.Millisecond
	}
	if p, ok := engines.LookupProtocol(e.Protocol); ok && p.ConnectTimeout > 0 {
		return p.ConnectTimeout
	}
	return engines.DefaultConnectTimeout
}
