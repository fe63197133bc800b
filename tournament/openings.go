package tournament

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/openings"
)

// SuiteInfo is an uploaded opening suite as listed.
type SuiteInfo struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Game      string    `json:"game"`
	Rule      string    `json:"rule,omitempty"`
	Size      int       `json:"size"`
	Openings  int       `json:"openings"`
	CreatedAt time.Time `json:"created_at"`
}

// SuiteStore is where uploaded suites are kept.
type SuiteStore interface {
	Suite(ctx context.Context, id int64) (SuiteInfo, string, error)
}

// LoadSuite returns the suite that validated settings start their games
// from, nil if they name none: the built-in suite of the game and rule, an
// uploaded one (st may be nil if none is named), or a file (`taikai match`).
// An error names the field in the settings.
func LoadSuite(ctx context.Context, st SuiteStore, set *Settings) (*openings.Suite, error) {
	o := set.Openings
	switch {
	case o == nil:
		return nil, nil
	case o.Suite == "builtin":
		s, err := openings.Builtin(set.Game, set.Rule, set.Size)
		if err != nil {
			return nil, games.Invalid("openings.suite", "%s", err.Error())
		}
		return s, nil
	case o.File != "":
		f, err := os.Open(o.File)
		if err != nil {
			return nil, games.Invalid("openings.file", "%s", err.Error())
		}
		defer f.Close()
		return openings.ParseFile(filepath.Base(o.File), set.Game, set.Rule, set.Size, f, o.Plies)
	case st == nil:
		return nil, games.Invalid("openings.suite_id", "no store of uploaded suites here")
	}
	info, text, err := st.Suite(ctx, o.SuiteID)
	if err != nil {
		if games.ErrorCode(err) == games.ENotFound {
			return nil, games.Invalid("openings.suite_id", "%s", err.Error())
		}
		return nil, err
	}
	if info.Game != set.Game || info.Rule != set.Rule || info.Size != set.Size {
		return nil, games.Invalid("openings.suite_id", "suite %d (%s) is for %s, not %s", info.ID, info.Name,
			describe(info.Game, info.Rule, info.Size), describe(set.Game, set.Rule, set.Size))
	}
	return openings.Parse(info.Name, set.Game, set.Rule, set.Size, strings.NewReader(text))
}

// describe names a game, rule and board size: "gomoku (renju, 15x15)".
func describe(game, rule string, size int) string {
	if rule == "" {
		return fmt.Sprintf("%s (%dx%d)", game, size, size)
	}
	return fmt.Sprintf("%s (%s, %dx%d)", game, rule, size, size)
}

// OpeningFor returns the opening of game pair pair (from 1).
func OpeningFor(s *openings.Suite, o *Openings, seed uint64, pair int64) *SuiteLine {
	op := s.Pick(o.Order, o.Start, seed, pair-1)
	return &SuiteLine{Suite: s.Name, Index: op.Index, Moves: op.Moves, Text: op.Text}
}
