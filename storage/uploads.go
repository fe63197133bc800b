package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/taikai-dev/taikai/games"
)

// Upload is what a version's upload stored: its files' hash and list, and
// its size, which the upload quotas add up.
type Upload struct {
	Hash    string   // hex SHA-256 of the files, "" when none
	Files   []string // the files' paths (the first of them, as listed)
	Count   int      // files
	Entries int      // files and directories
	Bytes   int64
}

// UploadTotals is what uploads hold: entries (files and directories) and bytes.
type UploadTotals struct {
	Entries, Bytes int64
}

func saveUpload(ctx context.Context, tx *sql.Tx, engine int64, version int, up Upload) error {
	list, err := json.Marshal(up.Files)
	if err != nil {
		return err
	}
	if up.Files == nil {
		list = []byte("[]")
	}
	_, err = tx.ExecContext(ctx, `UPDATE engine_versions SET files_list = ?, files_count = ?, files_entries = ?, files_bytes = ? WHERE engine_id = ? AND version = ?`,
		string(list), up.Count, up.Entries, up.Bytes, engine, version)
	return err
}

// UploadedFiles is the file list the newest version of an engine stored at
// its upload.
func (db *DB) UploadedFiles(ctx context.Context, engine int64) ([]string, error) {
	var list string
	err := db.r.QueryRowContext(ctx, `SELECT files_list FROM engine_versions WHERE engine_id = ? ORDER BY version DESC LIMIT 1`, engine).Scan(&list)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, games.Errorf(games.ENotFound, "engine %d: not found", engine)
	}
	if err != nil {
		return nil, err
	}
	var files []string
	return files, json.Unmarshal([]byte(list), &files)
}

// EngineUploads is what all versions of an engine hold.
func (db *DB) EngineUploads(ctx context.Context, engine int64) (UploadTotals, error) {
	var u UploadTotals
	err := db.r.QueryRowContext(ctx, `SELECT coalesce(sum(files_entries), 0), coalesce(sum(files_bytes), 0) FROM engine_versions WHERE engine_id = ?`, engine).Scan(&u.Entries, &u.Bytes)
	return u, err
}

// ParticipantUploads is what all versions of all a participant's engines
// hold, withdrawn engines included (their files stay).
func (db *DB) ParticipantUploads(ctx context.Context, participant int64) (UploadTotals, error) {
	var u UploadTotals
	err := db.r.QueryRowContext(ctx, `SELECT coalesce(sum(v.files_entries), 0), coalesce(sum(v.files_bytes), 0)
		FROM engine_versions v JOIN engines e ON e.id = v.engine_id WHERE e.owner_id = ?`, participant).Scan(&u.Entries, &u.Bytes)
	return u, err
}
