package engines

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/games"
)

// Transport is how an engine reaches its seat.
type Transport int8

// Transports.
const (
	// TCP: the engine dials the seat's port ({host} {port}).
	TCP Transport = iota
	// Stdio: the engine is a child process speaking on its standard input and
	// output; its standard error is its log.
	Stdio
)

// String returns "tcp" or "stdio".
func (t Transport) String() string {
	if t == Stdio {
		return "stdio"
	}
	return "tcp"
}

// Protocol is a wire protocol as taikai knows it: registered once by its
// adapter package (see engines/protocol/all), looked up by name everywhere
// else.
type Protocol struct {
	Name      string // as in the API and the database: "othello-board"
	Game      string // the game it plays
	Default   bool   // the game's default protocol
	Transport Transport
	// New wraps an engine's stream in the protocol's adapter for one seat.
	New func(s Stream, cfg SeatConfig) Seat
	// ConnectTimeout is how long an engine of this protocol has from its
	// start to connect, unless the engine or the tournament says otherwise;
	// 0: the launcher's default.
	ConnectTimeout time.Duration
	// Clock is the protocol's default clock. A protocol that tells an engine
	// its remaining time (othello-move) has a Total, and every game on it
	// then has a total clock; the others have a MoveTime.
	Clock Clock
	// Rules are the game's rule sets the protocol can play (its engines can
	// be told them), nil for all; RulesWhy says why not the others.
	Rules    []string
	RulesWhy string
	// Folder: the protocol tells an engine a persistent folder (pbrain's
	// INFO folder): the launcher gives it one (Launcher.FoldersDir).
	Folder bool
	// Tallies: the protocol tells an engine its tournament record at the end,
	// so the runner must give the seat SeatConfig.Tallies.
	Tallies bool
	// Options are the protocol's own settings (PROTOCOLS.md); an engine is
	// also given each one in its environment as TAIKAI_<NAME> (upper case).
	Options []Option
	// WireName is the form a registered name takes on this protocol's wire
	// (the opponent's name in othello-move's START), where the protocol
	// cannot carry every name as it is; nil: names go as they are.
	WireName func(name string) string
}

// CheckRule says whether the protocol's engines can play a rule set of its
// game: nil, or why not.
func (p Protocol) CheckRule(rule string) error {
	if len(p.Rules) == 0 || slices.Contains(p.Rules, rule) {
		return nil
	}
	return fmt.Errorf("%s engines play only the rules %s, not %s (%s)", p.Name, strings.Join(p.Rules, ", "), rule, p.RulesWhy)
}

// Clock is a default clock.
type Clock struct {
	MoveTime time.Duration // per move
	Total    time.Duration // per side and game
	Byoyomi  time.Duration // with a total clock: the time per move once it is spent
	// Tolerance is added to a move's time before its flag falls (it is not
	// told to the engine), as the Gomocup's manager allows a brain; a
	// protocol option tolerance_ms overrides it.
	Tolerance time.Duration
}

// Option is a protocol setting, given as text.
type Option struct {
	Name  string
	About string
	// Check returns an error saying what is wrong with a value.
	Check func(value string) error
}

// SeatConfig is what an adapter is told about its seat.
type SeatConfig struct {
	Color games.Color
	Rule  string // the game's rule set, as stored ("" for the default of a one-rule game)
	// The seat's clock (MoveTime per move, Total per side; 0: none) and its
	// engine's memory limit in bytes (0: none known), for protocols that
	// tell an engine its limits (pbrain's INFO).
	MoveTime, Total time.Duration
	MemoryBytes     int64
	Folder          string            // the engine's persistent folder as it sees it, "" if none
	Options         map[string]string // the protocol's options, checked; absent ones take their defaults
	// Tallies are this seat's engine's record in the current tournament and
	// its opponent's, before this game (othello-move's BYE reports them).
	Tallies [2]Tally
}

// Tally is an engine's record in a tournament.
type Tally struct {
	Name   string
	Wins   int
	Losses int
	Draws  int
}

var (
	protoMu   sync.RWMutex
	protocols = map[string]Protocol{}
)

// RegisterProtocol adds a protocol; a name registered twice panics, as it is
// a programming error.
func RegisterProtocol(p Protocol) {
	protoMu.Lock()
	defer protoMu.Unlock()
	if _, dup := protocols[p.Name]; dup {
		panic("engines: protocol " + p.Name + " registered twice")
	}
	protocols[p.Name] = p
}

// LookupProtocol returns a registered protocol.
func LookupProtocol(name string) (Protocol, bool) {
	protoMu.RLock()
	defer protoMu.RUnlock()
	p, ok := protocols[name]
	return p, ok
}

// Protocols lists the names of a game's protocols, default first, the others
// by name; nil for a game with none.
func Protocols(game string) []string {
	protoMu.RLock()
	defer protoMu.RUnlock()
	var names []string
	for _, p := range protocols {
		if p.Game == game {
			names = append(names, p.Name)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		da, db := protocols[a].Default, protocols[b].Default
		switch {
		case da && !db:
			return -1
		case db && !da:
			return 1
		}
		return strings.Compare(a, b)
	})
	return names
}

// ProtocolGame returns the game a protocol belongs to, or "" if it is unknown.
func ProtocolGame(name string) string {
	p, _ := LookupProtocol(name)
	return p.Game
}

// CheckOptions checks protocol options given for a game: each must belong to
// one of the game's protocols and have a value that protocol accepts. Options
// that belong to a protocol an engine does not speak are ignored by its seat.
func CheckOptions(game string, opts map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(opts)) {
		found := false
		for _, pn := range Protocols(game) {
			p, _ := LookupProtocol(pn)
			i := slices.IndexFunc(p.Options, func(o Option) bool { return o.Name == name })
			if i < 0 {
				continue
			}
			found = true
			if err := p.Options[i].Check(opts[name]); err != nil {
				return games.Invalid(name, "%s", err.Error())
			}
		}
		if !found {
			return games.Invalid(name, "no protocol of %s has this option", game)
		}
	}
	return nil
}

// OptionEnv returns the environment that tells an engine of protocol p its
// options: TAIKAI_<NAME>=value for each option of p that is set.
func OptionEnv(p Protocol, opts map[string]string) []string {
	var env []string
	for _, o := range p.Options {
		if v, ok := opts[o.Name]; ok && v != "" {
			env = append(env, "TAIKAI_"+strings.ToUpper(o.Name)+"="+v)
		}
	}
	return env
}
