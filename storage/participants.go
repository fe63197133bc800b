package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
)

// Participant is a person who submits engines (a student): they sign in with
// their own token, set up by accepting an invitation.
type Participant struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	Accepted  *time.Time `json:"accepted_at"` // nil until an invitation is accepted
	// InviteExpires is when the pending invitation expires; nil when none.
	InviteExpires *time.Time `json:"invitation_expires_at"`
	// Number is the student number the roster gave ("" when none).
	Number string `json:"number"`
	// Deactivated is when the admin removed the participant: they can no
	// longer sign in; their engines and games stay. nil while active.
	Deactivated *time.Time `json:"deactivated_at"`
}

// NewParticipant is a participant to create, with the hash of its first
// invitation code.
type NewParticipant struct {
	Name       string
	Number     string // the student number, "" when none
	InviteHash string
}

const participantColumns = `id, name, created_at, accepted_at, invite_expires_at, number, deactivated_at`

func scanParticipant(s scanner) (Participant, error) {
	var (
		p                 Participant
		created           int64
		accepted, expires sql.NullInt64
		deactivated       sql.NullInt64
	)
	if err := s.Scan(&p.ID, &p.Name, &created, &accepted, &expires, &p.Number, &deactivated); err != nil {
		return p, err
	}
	p.CreatedAt = time.UnixMilli(created).UTC()
	p.Accepted, p.InviteExpires, p.Deactivated = msTime(accepted), msTime(expires), msTime(deactivated)
	return p, nil
}

// CreateParticipants stores participants, all or none, each with an invitation
// that expires at expires. A name already taken (names are compared without
// case) is a conflict whose message names it; index says which one of the
// list it was (-1 for other errors).
func (db *DB) CreateParticipants(ctx context.Context, list []NewParticipant, expires time.Time) ([]Participant, int, error) {
	out := make([]Participant, 0, len(list))
	bad := -1
	err := db.write(ctx, func(tx *sql.Tx) error {
		t := now()
		for i, n := range list {
			res, err := tx.ExecContext(ctx, `INSERT INTO participants (name, number, invite_hash, invite_expires_at, created_at) VALUES (?, ?, ?, ?, ?)`,
				n.Name, n.Number, n.InviteHash, expires.UnixMilli(), t)
			if isUnique(err) {
				bad = i
				return &games.Error{Code: games.EConflict, Field: "name", Message: fmt.Sprintf("name: a participant named %q already exists", n.Name)}
			}
			if err != nil {
				return err
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			e := expires.UTC()
			out = append(out, Participant{ID: id, Name: n.Name, Number: n.Number, CreatedAt: time.UnixMilli(t).UTC(), InviteExpires: &e})
		}
		return nil
	})
	if err != nil {
		return nil, bad, err
	}
	return out, -1, nil
}

// Participants lists every participant in id order.
func (db *DB) Participants(ctx context.Context) ([]Participant, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+participantColumns+` FROM participants ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []Participant{}
	for rows.Next() {
		p, err := scanParticipant(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, p)
	}
	return list, rows.Err()
}

// Participant returns a participant by id.
func (db *DB) Participant(ctx context.Context, id int64) (Participant, error) {
	p, err := scanParticipant(db.r.QueryRowContext(ctx, `SELECT `+participantColumns+` FROM participants WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return p, games.Errorf(games.ENotFound, "participant %d: not found", id)
	}
	return p, err
}

// ParticipantTokenHash returns a participant's name and the hash of their
// token ("" before they accepted an invitation).
func (db *DB) ParticipantTokenHash(ctx context.Context, id int64) (string, string, error) {
	var name string
	var hash sql.NullString
	err := db.r.QueryRowContext(ctx, `SELECT name, token_hash FROM participants WHERE id = ?`, id).Scan(&name, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", games.Errorf(games.ENotFound, "participant %d: not found", id)
	}
	return name, hash.String, err
}

// ParticipantChange is what PATCH /api/participants/{id} changes: nil
// fields stay.
type ParticipantChange struct {
	Name   *string
	Number *string
}

// UpdateParticipant renames or renumbers a participant; a name another
// participant has (without case) is a conflict naming it. Their engines and
// games are not touched: games keep engine ids, engines keep their owner.
func (db *DB) UpdateParticipant(ctx context.Context, id int64, c ParticipantChange) (Participant, error) {
	var p Participant
	err := db.write(ctx, func(tx *sql.Tx) error {
		if c.Name != nil {
			_, err := tx.ExecContext(ctx, `UPDATE participants SET name = ? WHERE id = ?`, *c.Name, id)
			if isUnique(err) {
				return &games.Error{Code: games.EConflict, Field: "name", Message: fmt.Sprintf("name: a participant named %q already exists", *c.Name)}
			}
			if err != nil {
				return err
			}
		}
		if c.Number != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE participants SET number = ? WHERE id = ?`, *c.Number, id); err != nil {
				return err
			}
		}
		var err error
		p, err = scanParticipant(tx.QueryRowContext(ctx, `SELECT `+participantColumns+` FROM participants WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return games.Errorf(games.ENotFound, "participant %d: not found", id)
		}
		return err
	})
	return p, err
}

// DeactivateParticipant removes a participant from the class: their token
// and pending invitation stop working at once; the row stays, so their
// engines keep their owner and every game they played stays as it was.
func (db *DB) DeactivateParticipant(ctx context.Context, id int64) (Participant, error) {
	var p Participant
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE participants SET token_hash = NULL, invite_hash = NULL, invite_expires_at = NULL,
			deactivated_at = coalesce(deactivated_at, ?) WHERE id = ?`, now(), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return games.Errorf(games.ENotFound, "participant %d: not found", id)
		}
		p, err = scanParticipant(tx.QueryRowContext(ctx, `SELECT `+participantColumns+` FROM participants WHERE id = ?`, id))
		return err
	})
	return p, err
}

// SetInvitation gives a participant a new invitation code (its hash), which
// replaces any pending one.
func (db *DB) SetInvitation(ctx context.Context, id int64, hash string, expires time.Time) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE participants SET invite_hash = ?, invite_expires_at = ? WHERE id = ?`, hash, expires.UnixMilli(), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return games.Errorf(games.ENotFound, "participant %d: not found", id)
		}
		return nil
	})
}

// ErrBadInvitation is the answer to a code that is not a pending invitation.
var ErrBadInvitation = &games.Error{Code: games.ENotFound, Field: "code", Message: "code: this invitation code is not valid (already used, replaced by a newer one, or mistyped); ask the admin for a new link"}

// AcceptInvitationWith uses up the invitation whose code hashes to codeHash:
// the participant's token becomes the hash tokenFor returns for their id
// (tokens name their account); any older token stops working. An expired
// invitation is a conflict naming when it expired.
func (db *DB) AcceptInvitationWith(ctx context.Context, codeHash string, tokenFor func(id int64) string) (Participant, error) {
	var p Participant
	err := db.write(ctx, func(tx *sql.Tx) error {
		var err error
		p, err = scanParticipant(tx.QueryRowContext(ctx, `SELECT `+participantColumns+` FROM participants WHERE invite_hash = ?`, codeHash))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrBadInvitation
		}
		if err != nil {
			return err
		}
		if p.InviteExpires != nil && time.Now().After(*p.InviteExpires) {
			return &games.Error{Code: games.EConflict, Field: "code", Message: fmt.Sprintf("code: this invitation expired at %s; ask the admin for a new link", p.InviteExpires.Format(time.RFC3339))}
		}
		t := now()
		if _, err := tx.ExecContext(ctx, `UPDATE participants SET token_hash = ?, invite_hash = NULL, invite_expires_at = NULL, accepted_at = ? WHERE id = ?`, tokenFor(p.ID), t, p.ID); err != nil {
			return err
		}
		a := time.UnixMilli(t).UTC()
		p.Accepted, p.InviteExpires = &a, nil
		return nil
	})
	return p, err
}

// Submission says who submitted an engine's version and what was uploaded
// with it.
type Submission struct {
	Owner int64 // the participant who owns the engine; 0: the admin
	By    int64 // who uploaded this version; 0: the admin
	// MaxOwned is the most engines (not withdrawn) Owner may have; 0: no
	// limit. RegisterEngine counts them in its transaction, so that two
	// uploads at once cannot both pass.
	MaxOwned int
	Upload
}

// RegisterEngine stores a new engine with its owner and its version 1; a
// conflict when the owner already has sub.MaxOwned engines.
func (db *DB) RegisterEngine(ctx context.Context, e *engines.Engine, sub Submission) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if sub.Owner > 0 && sub.MaxOwned > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM engines WHERE owner_id = ? AND deleted_at IS NULL`, sub.Owner).Scan(&n); err != nil {
				return err
			}
			if n >= sub.MaxOwned {
				return &games.Error{Code: games.EConflict, Field: "engines", Message: fmt.Sprintf(
					"you have %d engines, the most a participant may register (the admin sets it: serve --max-engines-per-participant %d): replace one with a new version, or withdraw one", n, sub.MaxOwned),
					Key: "engines_per_participant", Params: map[string]any{"count": n, "max": sub.MaxOwned, "flag": "--max-engines-per-participant"}}
			}
		}
		if err := createEngine(ctx, tx, e, true); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE engines SET owner_id = ? WHERE id = ?`, nullID(sub.Owner), e.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE engine_versions SET files_hash = ?, uploaded_by = ? WHERE engine_id = ? AND version = 1`, sub.Hash, nullID(sub.By), e.ID); err != nil {
			return err
		}
		return saveUpload(ctx, tx, e.ID, 1, sub.Upload)
	})
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func addVersion(ctx context.Context, tx *sql.Tx, e engines.Engine, sub Submission, version int) error {
	def, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err = tx.ExecContext(ctx, `INSERT INTO engine_versions (engine_id, version, definition, files_hash, uploaded_by, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		e.ID, version, string(def), sub.Hash, nullID(sub.By), now()); err != nil {
		return err
	}
	return saveUpload(ctx, tx, e.ID, version, sub.Upload)
}

// ReplaceEngine makes e (with e.ID set) the newest version of a registered
// engine: its name and game stay, the rest is e's; the version before is
// kept in its history. It returns the new version number. Replacing an
// engine entered in a running tournament is a conflict, except in a league,
// where the new version replaces the old one in the next game.
func (db *DB) ReplaceEngine(ctx context.Context, e engines.Engine, sub Submission) (int, error) {
	var version int
	err := db.write(ctx, func(tx *sql.Tx) error {
		old, err := scanEngine(tx.QueryRowContext(ctx, `SELECT `+engineColumns+` FROM engines WHERE id = ? AND deleted_at IS NULL AND listed = 1`, e.ID))
		if errors.Is(err, sql.ErrNoRows) {
			return games.Errorf(games.ENotFound, "engine %d: not found", e.ID)
		}
		if err != nil {
			return err
		}
		if e.Game != old.Game {
			return games.Invalid("game", "the engine plays %s: a new version cannot play %s (register another engine)", old.Game, e.Game)
		}
		var busy sql.NullInt64
		err = tx.QueryRowContext(ctx, `SELECT t.id FROM entrants x JOIN tournaments t ON t.id = x.tournament_id WHERE x.engine_id = ? AND t.status = 'running' AND t.kind <> 'league' LIMIT 1`, e.ID).Scan(&busy)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if busy.Valid {
			return games.Errorf(games.EConflict, "engine %d plays in tournament %d, which is running: replace it when the tournament is over", e.ID, busy.Int64)
		}
		e.Name = old.Name
		command, err := json.Marshal(nonNil(e.Command))
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE engines SET protocol = ?, command = ?, dir = ?, port = ?, builtin = ?, memory_mb = ?, max_procs = ?, connect_timeout_ms = ? WHERE id = ?`,
			e.Protocol, string(command), e.Dir, e.Port, e.Builtin, e.MemoryMB, e.MaxProcs, e.ConnectTimeoutMS, e.ID); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) + 1 FROM engine_versions WHERE engine_id = ?`, e.ID).Scan(&version); err != nil {
			return err
		}
		return addVersion(ctx, tx, e, sub, version)
	})
	return version, err
}

// EnginesOwned lists the participants' engines, withdrawn ones too, in id order.
func (db *DB) EnginesOwned(ctx context.Context) ([]EngineRow, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+engineColumns+` FROM engines WHERE owner_id IS NOT NULL AND listed = 1 ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []EngineRow{}
	for rows.Next() {
		r, err := scanEngine(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, r)
	}
	return list, rows.Err()
}

// EngineVersion is one version of an engine as its history keeps it.
type EngineVersion struct {
	EngineID  int64          `json:"engine_id"`
	Version   int            `json:"version"`
	Engine    engines.Engine `json:"-"`
	FilesHash string         `json:"files_hash,omitempty"`
	ByID      int64          `json:"uploaded_by_id,omitempty"` // 0: the admin
	By        string         `json:"uploaded_by"`              // the participant's name, or "admin"
	CreatedAt time.Time      `json:"created_at"`
}

// EngineVersions lists versions, newest first: of one engine (engineID > 0),
// or of every engine (engineID 0).
func (db *DB) EngineVersions(ctx context.Context, engineID int64) ([]EngineVersion, error) {
	q := `SELECT v.engine_id, v.version, v.definition, v.files_hash, v.uploaded_by, coalesce(p.name, 'admin'), v.created_at
		FROM engine_versions v LEFT JOIN participants p ON p.id = v.uploaded_by`
	args := []any{}
	if engineID > 0 {
		q += ` WHERE v.engine_id = ?`
		args = append(args, engineID)
	}
	rows, err := db.r.QueryContext(ctx, q+` ORDER BY v.created_at DESC, v.engine_id, v.version DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []EngineVersion{}
	for rows.Next() {
		var (
			v       EngineVersion
			def     string
			by      sql.NullInt64
			created int64
		)
		if err := rows.Scan(&v.EngineID, &v.Version, &def, &v.FilesHash, &by, &v.By, &created); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(def), &v.Engine); err != nil {
			return nil, fmt.Errorf("engine %d version %d: %w", v.EngineID, v.Version, err)
		}
		v.ByID, v.CreatedAt = by.Int64, time.UnixMilli(created).UTC()
		list = append(list, v)
	}
	return list, rows.Err()
}

// LatestVersion is the newest version number of an engine (0 if it has none,
// an engine recorded before versions).
func (db *DB) LatestVersion(ctx context.Context, engineID int64) (int, error) {
	var v int
	err := db.r.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM engine_versions WHERE engine_id = ?`, engineID).Scan(&v)
	return v, err
}

// EngineCheck is the stored state of a pre-flight check of an engine's
// version; each version keeps its own (migration 0013).
type EngineCheck struct {
	EngineID   int64           `json:"engine_id"`
	Version    int             `json:"version"`
	Status     string          `json:"status"` // queued, running or done
	Result     json.RawMessage `json:"result"` // the check's answer when done, else null
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at"`
}

// SaveCheck stores the state of a check of an engine's version, replacing
// that version's last one; other versions keep theirs.
func (db *DB) SaveCheck(ctx context.Context, c EngineCheck) error {
	var result any
	if c.Result != nil {
		result = string(c.Result)
	}
	var finished any
	if c.FinishedAt != nil {
		finished = c.FinishedAt.UnixMilli()
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO version_checks (engine_id, version, status, result, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (engine_id, version) DO UPDATE SET status = excluded.status, result = excluded.result, started_at = excluded.started_at, finished_at = excluded.finished_at`,
			c.EngineID, c.Version, c.Status, result, c.StartedAt.UnixMilli(), finished)
		return err
	})
}

// Check returns an engine's last check (of whichever version: the one
// started last); a not_found error if it has none.
func (db *DB) Check(ctx context.Context, engineID int64) (EngineCheck, error) {
	c, err := scanCheck(db.r.QueryRowContext(ctx, `SELECT engine_id, version, status, result, started_at, finished_at FROM version_checks
		WHERE engine_id = ? ORDER BY started_at DESC, version DESC LIMIT 1`, engineID))
	if errors.Is(err, sql.ErrNoRows) {
		return c, games.Errorf(games.ENotFound, "engine %d has not been checked", engineID)
	}
	return c, err
}

// VersionChecks returns the last check of each of an engine's versions, by
// version number; a version never checked has none.
func (db *DB) VersionChecks(ctx context.Context, engineID int64) (map[int]EngineCheck, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT engine_id, version, status, result, started_at, finished_at FROM version_checks WHERE engine_id = ?`, engineID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]EngineCheck{}
	for rows.Next() {
		c, err := scanCheck(rows)
		if err != nil {
			return nil, err
		}
		out[c.Version] = c
	}
	return out, rows.Err()
}

// AbandonChecks marks checks left queued or running by a server that stopped
// as done without a result; serve calls it at start.
func (db *DB) AbandonChecks(ctx context.Context) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE version_checks SET status = 'done', finished_at = ? WHERE status <> 'done'`, now())
		return err
	})
}

// Checks returns every engine's last check (as Check), by engine id.
func (db *DB) Checks(ctx context.Context) (map[int64]EngineCheck, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT engine_id, version, status, result, started_at, finished_at FROM engine_checks`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]EngineCheck{}
	for rows.Next() {
		c, err := scanCheck(rows)
		if err != nil {
			return nil, err
		}
		out[c.EngineID] = c
	}
	return out, rows.Err()
}

func scanCheck(s scanner) (EngineCheck, error) {
	var (
		c        EngineCheck
		result   sql.NullString
		started  int64
		finished sql.NullInt64
	)
	if err := s.Scan(&c.EngineID, &c.Version, &c.Status, &result, &started, &finished); err != nil {
		return c, err
	}
	if result.Valid {
		c.Result = json.RawMessage(result.String)
	}
	c.StartedAt, c.FinishedAt = time.UnixMilli(started).UTC(), msTime(finished)
	return c, nil
}
