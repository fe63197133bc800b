package storage

import (
	"context"
	"database/sql"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/tournament"
)

// CreatePlay stores a game with people (issue 39) in one transaction: each
// player with no id yet is a person, stored as an unlisted engine of
// protocol engines.Human under their name, and t, a tournament of kind
// play, gets black and white as its entrants.
func (db *DB) CreatePlay(ctx context.Context, t *tournament.Tournament, players [2]*engines.Engine) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, e := range players {
			if e.ID == 0 {
				if err := createEngine(ctx, tx, e, false); err != nil {
					return err
				}
			}
		}
		t.Engines = []int64{players[0].ID, players[1].ID}
		return createTournament(ctx, tx, t, false)
	})
}
