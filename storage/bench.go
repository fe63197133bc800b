package storage

import (
	"context"
	"database/sql"
	"os"
	"time"
)

// BareInserts is the baseline of the storage benchmark: n rows of size bytes
// inserted into a one-column table, each in its own transaction, in a fresh
// database at path opened exactly as Open opens one. It returns rows per second.
func BareInserts(ctx context.Context, path string, n, size int) (float64, error) {
	os.Remove(path)
	db, err := sql.Open("sqlite3", writerDSN(path))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE bare (id INTEGER PRIMARY KEY, b BLOB NOT NULL)`); err != nil {
		return 0, err
	}
	blob := make([]byte, size)
	start := time.Now()
	for range n {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO bare (b) VALUES (?)`, blob); err != nil {
			tx.Rollback()
			return 0, err
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
