package gomokuai

import (
	"sync"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/gomoku"
)

// shape is what a stone makes on one line through its point, the best first.
type shape uint8

const (
	none      shape = iota
	openOne         // one more stone makes an open two
	two             // one more stone makes a three
	openTwo         // one more stone makes an open three
	three           // one more stone makes a four
	openThree       // one more stone makes a straight four
	four            // one more stone makes a five
	openFour        // two points make a five: a straight four, or two fours on the line
	five
)

// A line is read 5 points each way from the point, which is enough to tell a
// five from an overline at the far end of a four. Each of the 10 neighbours is
// a base-3 digit, so a line is one of 3^10 patterns and its shape is a table
// look-up.
const (
	reach    = 5
	patterns = 59049 // 3^(2*reach)
)

// Digits of a line pattern.
const (
	vacant  int8 = 0
	mine    int8 = 1
	blocked int8 = 2 // an opponent stone or the edge
)

// pow3[k] is the weight of neighbour k: k = 0..4 are offsets -5..-1, k = 5..9
// are offsets +1..+5.
var pow3 = [2 * reach]int{1, 3, 9, 27, 81, 243, 729, 2187, 6561, 19683}

// offset returns the distance along the line of neighbour k.
func offset(k int) int {
	if k < reach {
		return k - reach
	}
	return k - reach + 1
}

// shapeTables holds one table for "five or more" and one for "exactly five":
// the rule and colour decide which one a side's lines are read with.
var shapeTables = sync.OnceValue(func() *[2][patterns]shape {
	var t [2][patterns]shape
	buildShapes(&t[0], false)
	buildShapes(&t[1], true)
	return &t
})

func tableFor(r gomoku.Rule, s games.Color) *[patterns]shape {
	if r == gomoku.Standard || r == gomoku.Renju && s == gomoku.Black {
		return &shapeTables()[1]
	}
	return &shapeTables()[0]
}

// buildShapes fills t. A pattern that is not a four or five is classified by the
// best shape one more stone can make, and that pattern has one digit raised from
// vacant to mine, so a larger index: filling from the top down finds it done.
func buildShapes(t *[patterns]shape, exact bool) {
	var w [2*reach + 1]int8 // the line with the point in the middle
	for i := range w {
		w[i] = blocked
	}
	w[reach] = mine
	for idx := patterns - 1; idx >= 0; idx-- {
		t[idx] = classify(t, idx, &w, exact)
		// Step the digits of w down to idx-1, like an odometer.
		for k := range 2 * reach {
			i := reach + offset(k)
			if w[i] > 0 {
				w[i]--
				break
			}
			w[i] = blocked
		}
	}
}

// classify returns the shape of pattern idx, whose cells are w.
func classify(t *[patterns]shape, idx int, w *[2*reach + 1]int8, exact bool) shape {
	isFive := func(n int) bool { return n == 5 || !exact && n > 5 }
	lo, hi := reach, reach
	for lo > 0 && w[lo-1] == mine {
		lo--
	}
	for hi < 2*reach && w[hi+1] == mine {
		hi++
	}
	n := hi - lo + 1
	if n >= 5 {
		if isFive(n) {
			return five
		}
		return none // an overline that is not a five is worth nothing
	}
	left, right := false, false
	if lo > 0 && w[lo-1] == vacant {
		m := n + 1
		for i := lo - 2; i >= 0 && w[i] == mine; i-- {
			m++
		}
		left = isFive(m)
	}
	if hi < 2*reach && w[hi+1] == vacant {
		m := n + 1
		for i := hi + 2; i <= 2*reach && w[i] == mine; i++ {
			m++
		}
		right = isFive(m)
	}
	switch {
	case left && right:
		return openFour
	case left || right:
		return four
	}
	best := none
	for k := 1; k < 2*reach-1; k++ { // offsets -4..+4
		if w[reach+offset(k)] == vacant {
			best = max(best, t[idx+pow3[k]])
		}
	}
	switch best {
	case openFour:
		return openThree
	case four:
		return three
	case openThree:
		return openTwo
	case three:
		return two
	case openTwo:
		return openOne
	}
	return none
}
