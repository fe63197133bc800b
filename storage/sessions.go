package storage

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/taikai-dev/taikai/games"
)

// Session is a browser's sign-in, found by the hash of its cookie's id.
type Session struct {
	// ParticipantID is who it signs in; 0: the admin.
	ParticipantID int64
	// CredentialHash is the hash of the token it was opened with: the session
	// holds only while that token is still the account's.
	CredentialHash string
	ExpiresAt      time.Time
}

// CreateSession stores a session under the hash of its id, and drops the
// sessions that have expired.
func (db *DB) CreateSession(ctx context.Context, idHash string, s Session) error {
	now := time.Now()
	var owner sql.NullInt64
	if s.ParticipantID > 0 {
		owner = sql.NullInt64{Int64: s.ParticipantID, Valid: true}
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, now.UnixMilli()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id_hash, participant_id, credential_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			idHash, owner, s.CredentialHash, now.UnixMilli(), s.ExpiresAt.UnixMilli())
		return err
	})
}

// SessionByHash is the unexpired session whose id has the hash idHash;
// ENotFound if there is none (never opened, signed out or expired).
func (db *DB) SessionByHash(ctx context.Context, idHash string) (Session, error) {
	var (
		s       Session
		owner   sql.NullInt64
		expires int64
	)
	err := db.r.QueryRowContext(ctx, `SELECT participant_id, credential_hash, expires_at FROM sessions WHERE id_hash = ? AND expires_at > ?`,
		idHash, time.Now().UnixMilli()).Scan(&owner, &s.CredentialHash, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return s, games.Errorf(games.ENotFound, "no such session")
	}
	s.ParticipantID, s.ExpiresAt = owner.Int64, time.UnixMilli(expires)
	return s, err
}

// DeleteSession ends a session (sign-out); ending one that is gone is no
// error.
func (db *DB) DeleteSession(ctx context.Context, idHash string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = ?`, idHash)
		return err
	})
}
