package tournament

import (
	"fmt"
	"testing"
)

// take gives each game the least used CPU, the lowest on a tie, and a release
// counts once however often it is called.
func TestAffinityTakesTheLeastUsedCPU(t *testing.T) {
	a, err := newAffinity([]int{2, 5, 7})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	var releases []func()
	for range 4 {
		cpu, release := a.take()
		got = append(got, cpu)
		releases = append(releases, release)
	}
	if fmt.Sprint(got) != "[2 5 7 2]" {
		t.Errorf("four games on %v, want [2 5 7 2]", got)
	}
	releases[1]() // CPU 5 is free again
	releases[1]()
	// Loads 2 0 1: the next games go to 5, then 5 or 7 (a tie: 5), then 7.
	// Had the second release counted, 5 would have taken all three.
	got = got[:0]
	for range 3 {
		cpu, _ := a.take()
		got = append(got, cpu)
	}
	if fmt.Sprint(got) != "[5 5 7]" {
		t.Errorf("after releasing 5 (twice) three games got %v, want [5 5 7]", got)
	}
	if _, err := newAffinity(nil); err == nil {
		t.Error("an Affinity over no CPUs was accepted")
	}
}
