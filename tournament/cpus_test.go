package tournament

import (
	"fmt"
	"slices"
	"testing"

	"github.com/taikai-dev/taikai/engines"
)

// Each seat of a game gets k CPUs that its opponent's are not, and
// successive games spread the seats evenly over the CPUs.
func TestSeatCPUs(t *testing.T) {
	for n := 2; n <= 8; n++ {
		cpus := make([]int, n)
		for i := range cpus {
			cpus[i] = 10 + 3*i // any numbering
		}
		for k := 1; 2*k <= n; k++ {
			uses := map[int]int{}
			for g := range uint64(n) {
				seats := seatCPUs(cpus, g, k)
				for _, s := range seats {
					if len(s) != k || len(slices.Compact(slices.Sorted(slices.Values(s)))) != k {
						t.Errorf("n %d k %d game %d: seat %v, want %d distinct CPUs", n, k, g, s, k)
					}
					for _, c := range s {
						if !slices.Contains(cpus, c) {
							t.Errorf("n %d k %d game %d: CPU %d is not allowed", n, k, g, c)
						}
						uses[c]++
					}
				}
				for _, c := range seats[0] {
					if slices.Contains(seats[1], c) {
						t.Errorf("n %d k %d game %d: seats %v share CPU %d", n, k, g, seats, c)
					}
				}
			}
			for _, c := range cpus {
				if uses[c] != 2*k {
					t.Errorf("n %d k %d: CPU %d taken by %d seats in %d games, want %d", n, k, c, uses[c], n, 2*k)
				}
			}
		}
	}
}

// What the runner gives a game's engines on this machine: disjoint CPUs to
// sandboxed engines with a quota, one CPU to both with Affinity, nothing on
// one CPU, without the sandbox, without a quota, or with a quota the CPUs
// cannot give both seats.
func TestGameCPUs(t *testing.T) {
	cpus, err := engines.AllowedCPUs()
	if err != nil {
		t.Skip(err)
	}
	e := engines.Engine{Name: "x", Protocol: "othello-board"}
	human := engines.Engine{Name: "p", Protocol: engines.Human}
	none := [2][]int{}
	for _, tc := range []struct {
		name     string
		r        Runner
		players  [2]engines.Engine
		disjoint bool // else none, or with Affinity one CPU for both
	}{
		{"sandboxed", Runner{Launcher: &engines.Launcher{Sandbox: true}}, [2]engines.Engine{e, e}, len(cpus) >= 2},
		{"quota 1", Runner{Launcher: &engines.Launcher{Sandbox: true, CPUQuota: 1}}, [2]engines.Engine{e, e}, len(cpus) >= 2},
		{"quota 0.5", Runner{Launcher: &engines.Launcher{Sandbox: true, CPUQuota: 0.5}}, [2]engines.Engine{e, e}, len(cpus) >= 2},
		{"quota over half the CPUs", Runner{Launcher: &engines.Launcher{Sandbox: true, CPUQuota: float64(len(cpus)/2) + 0.5}}, [2]engines.Engine{e, e}, false},
		{"no quota", Runner{Launcher: &engines.Launcher{Sandbox: true, CPUQuota: -1}}, [2]engines.Engine{e, e}, false},
		{"unsandboxed", Runner{Launcher: &engines.Launcher{}}, [2]engines.Engine{e, e}, false},
		{"affinity", Runner{Launcher: &engines.Launcher{Sandbox: true}, Affinity: true}, [2]engines.Engine{e, e}, false},
		{"a person", Runner{Launcher: &engines.Launcher{Sandbox: true}}, [2]engines.Engine{human, e}, len(cpus) >= 2},
	} {
		for range 3 {
			seats := tc.r.gameCPUs(tc.players)
			switch {
			case tc.disjoint:
				want := tc.r.Launcher.SeatCPUs()
				for i, s := range seats {
					if tc.players[i].Protocol == engines.Human {
						if s != nil {
							t.Errorf("%s: a person's seat got CPUs %v", tc.name, s)
						}
						continue
					}
					if len(s) != want {
						t.Errorf("%s: seat %d got CPUs %v, want %d", tc.name, i, s, want)
					}
				}
				if seats[0] != nil && slices.ContainsFunc(seats[0], func(c int) bool { return slices.Contains(seats[1], c) }) {
					t.Errorf("%s: seats share CPUs: %v", tc.name, seats)
				}
			case tc.r.Affinity && len(cpus) >= 2:
				if len(seats[0]) != 1 || fmt.Sprint(seats[0]) != fmt.Sprint(seats[1]) {
					t.Errorf("%s: %v, want one CPU for both seats", tc.name, seats)
				}
			default:
				if fmt.Sprint(seats) != fmt.Sprint(none) {
					t.Errorf("%s on %d CPUs: %v, want none", tc.name, len(cpus), seats)
				}
			}
		}
	}
}
