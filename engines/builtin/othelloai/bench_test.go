package othelloai_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines/builtin/othelloai"
	"github.com/taikai-dev/taikai/games/othello"
)

// Positions from a fixed-depth self-play game, black to move.
var (
	midgame  = othello.FromBitboards(0x00181c1c14181000, 0x002103030a060c1c, othello.Black) // 36 empties
	endgames = map[int]othello.Board{
		14: othello.FromBitboards(0x21010d076b272042, 0x1e3e327814181f1d, othello.Black),
		16: othello.FromBitboards(0x21010d077b2c2042, 0x1e3e325804121f1d, othello.Black),
		18: othello.FromBitboards(0x21010d0f1f2e2642, 0x1e3e32502010181d, othello.Black),
		20: othello.FromBitboards(0x21010d0f372e0602, 0x1e3e32100810381d, othello.Black),
	}
)

func BenchmarkSearch(b *testing.B) {
	for _, depth := range []int{6, 8} {
		b.Run(fmt.Sprintf("depth%d", depth), func(b *testing.B) {
			var nodes uint64
			start := time.Now()
			for b.Loop() {
				nodes += othelloai.SearchDepth(&midgame, depth).Nodes
			}
			b.ReportMetric(float64(nodes)/time.Since(start).Seconds(), "nodes/s")
			b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
		})
	}
}

func BenchmarkSolve(b *testing.B) {
	for _, empties := range []int{14, 16, 18, 20} {
		pos := endgames[empties]
		if testing.Short() && empties > 14 {
			continue
		}
		b.Run(fmt.Sprintf("empties%d", empties), func(b *testing.B) {
			var nodes uint64
			start := time.Now()
			for b.Loop() {
				nodes += othelloai.Solve(&pos).Nodes
			}
			b.ReportMetric(float64(nodes)/time.Since(start).Seconds(), "nodes/s")
			b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
		})
	}
}
