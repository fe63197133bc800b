package tournament

import (
	"errors"
	"slices"
	"sync"

	"github.com/taikai-dev/taikai/engines"
)

// Affinity gives each game one CPU, the one with the fewest games, and
// runs the game's two engines and the referee's readers of them there only
// (Runner.Affinity). Like fastchess's -use-affinity, it is off by default.
//
// A game is a ping-pong: one side thinks while the other waits, so one CPU
// carries it, and with everything of a game on one CPU no wake-up crosses
// CPUs. That makes moves of fast engines quicker (taikai bench, 2 vCPUs:
// 12.6-14.2 µs a move instead of 25.7-43.5 µs) and keeps games played at
// once off each other's CPUs. The costs: a game's two engines start up on one
// CPU, so a lone game starts slower (72-86 against 99-108 games/s at
// concurrency 1); and engines that think with several threads, or while the
// opponent thinks, get one CPU.
type Affinity struct {
	mu   sync.Mutex
	cpus []int // CPUs the process may use
	load []int // games now on each
}

// NewAffinity returns an Affinity over the CPUs this process may run on.
func NewAffinity() (*Affinity, error) {
	cpus, err := engines.AllowedCPUs()
	if err != nil {
		return nil, err
	}
	return newAffinity(cpus)
}

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
