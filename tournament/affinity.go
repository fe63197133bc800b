package tournament

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/protocol"
)

// Affinity gives each game one CPU, the one with the fewest games, and
// runs the game's two engines and the referee's readers of them there
// (Runner.Affinity): for the whole game (NewAffinity, serve/match
// --affinity, like fastchess's -use-affinity), or only while the game
// starts (NewPlacement, the default).
//
// A game is a ping-pong: one side thinks while the other waits, so one CPU
// carries it, and with everything of a game on one CPU no wake-up crosses
// CPUs. That makes moves of fast engines quicker (taikai bench, 2 vCPUs:
// 8.9-9.3 µs a move, against 12.9-19.0 µs with no affinity at all) and keeps
// games played at once off each other's CPUs. The costs, for the whole game:
// a game's two engines start up on one CPU, so a lone game starts slower;
// and engines that think with several threads, or while the opponent thinks,
// get one CPU.
type Affinity struct {
	mu   sync.Mutex
	cpus []int // CPUs the process may use
	load []int // games now on each
	// A placement lets a game go after its first startPlies moves or after
	// startTime, whichever comes first; zero for the whole game.
	startPlies int
	startTime  time.Duration
}

// The start of a placed game (NewPlacement).
const (
	placementPlies = 4
	placementTime  = 20 * time.Millisecond
)

// NewAffinity returns an Affinity over the CPUs this process may run on that
// keeps each game on its CPU to the end.
func NewAffinity() (*Affinity, error) {
	cpus, err := engines.AllowedCPUs()
	if err != nil {
		return nil, err
	}
	return newAffinity(cpus)
}

// NewPlacement returns an Affinity that puts each game on one CPU only while
// it starts: its engines, once connected, and the referee's readers of them
// run on that CPU for the game's first 4 moves or 20 ms, whichever comes
// first, and may then run on any CPU again.
//
// Why: the kernel places a woken thread on an idle CPU, and keeps waking it
// there while that CPU stays idle, so a game whose threads start out apart
// stays apart, and each move pays for waking a sleeping CPU (tens of µs on a
// virtual machine). Started together, a game stays together once let go:
// each thread is woken by another of its game, on the CPU that one runs on.
// taikai bench, 2 vCPUs, instant engines: median turnaround 8.9-9.2 µs let go
// after 2, 4 or 8 moves, as when pinned all game, against 12.9-19.0 µs with
// no affinity; let go after the first move, the slowest third of the moves
// got slower (70th percentile 13-34 µs against 10-11).
// An engine that thinks with several threads, or while the opponent thinks,
// has every CPU again after at most those 20 ms, and its start-up (a JVM's,
// say) is never confined: the engines are moved only once connected.
//
// On one CPU there is nothing to place, and NewPlacement returns an error.
func NewPlacement() (*Affinity, error) {
	a, err := NewAffinity()
	if err != nil {
		return nil, err
	}
	if len(a.cpus) < 2 {
		return nil, errors.New("placement: one CPU, nothing to place")
	}
	a.startPlies, a.startTime = placementPlies, placementTime
	return a, nil
}

// wholeGame reports whether a keeps games on their CPU to the end.
func (a *Affinity) wholeGame() bool { return a.startPlies == 0 }

func newAffinity(cpus []int) (*Affinity, error) {
	if len(cpus) == 0 {
		return nil, errors.New("affinity: no CPUs")
	}
	return &Affinity{cpus: slices.Clone(cpus), load: make([]int, len(cpus))}, nil
}

// take reserves the least used CPU (the lowest on a tie) for a game; release
// gives it back.
func (a *Affinity) take() (cpu int, release func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := 0
	for j, n := range a.load {
		if n < a.load[i] {
			i = j
		}
	}
	a.load[i]++
	var once sync.Once
	return a.cpus[i], func() {
		once.Do(func() {
			a.mu.Lock()
			a.load[i]--
			a.mu.Unlock()
		})
	}
}

// start is the start of a placed game: it lets the game go once, after the
// game's first plies (seen) or its time (the timer), whichever comes first.
type start struct {
	mu    sync.Mutex
	over  bool
	timer *time.Timer
	wg    sync.WaitGroup // seen's letGo
	plies int
	cpus  []int // every CPU the server may use
	seats [2]protocol.Seat
	procs [2]*engines.Process
	log   *slog.Logger
	game  int64
}

// place begins the start of a game whose seats and engines were put on one
// CPU; call stop when the game is over, before the engines are stopped.
func (a *Affinity) place(seats [2]protocol.Seat, procs [2]*engines.Process, log *slog.Logger, game int64) *start {
	s := &start{plies: a.startPlies, cpus: a.cpus, seats: seats, procs: procs, log: log, game: game}
	s.timer = time.AfterFunc(a.startTime, s.letGo)
	return s
}

// seen is told of every move of the game, by the referee.
//
// The game is let go beside the referee, on another goroutine, not by it.
// Done on the referee's thread before it gives the next move, the walk over
// the engines' threads holds the game for a moment, and the game did not stay
// together afterwards, for a reason not found (taikai bench: median
// turnaround 39-41 µs, against 9.0-9.2 µs let go beside it, 3 runs each).
func (s *start) seen(t Tick) {
	if t.Ply == s.plies {
		s.wg.Go(s.letGo)
	}
}

// letGo lets the game's readers and engines run on every CPU again, once.
func (s *start) letGo() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over {
		return
	}
	s.over = true
	for _, seat := range s.seats {
		seat.Unpin()
	}
	for _, p := range s.procs {
		if err := p.SetCPUs(s.cpus); err != nil {
			// The engine goes on, only confined to its game's CPU.
			s.log.Warn("engine not let go of its game's CPU", "game", s.game, "err", err)
		}
	}
}

// stop ends the start at the end of the game: what has not been let go by
// then is about to end. It waits for a letGo in progress, so that nothing is
// done to an engine process after it, and for seen's goroutine.
func (s *start) stop() {
	s.timer.Stop()
	s.mu.Lock()
	s.over = true
	s.mu.Unlock()
	s.wg.Wait()
}
