// Package storage keeps engines, tournaments and games in SQLite
// (github.com/mattn/go-sqlite3): WAL mode, one writer connection that takes its
// lock when a transaction begins, a pool of read-only connections for queries,
// and the schema applied from package migrations at start.
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver; sqlite_cgo.go reads its errors

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/migrations"
)

// DB is the database.
type DB struct {
	path string
	w    *sql.DB // the single writer
	r    *sql.DB // readers
}

// Open opens (creating if needed) the database at path and applies the
// migrations it lacks.
func Open(ctx context.Context, path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite3", writerDSN(abs))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	db := &DB{path: abs, w: w}
	if err := db.migrate(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	rq := url.Values{}
	rq.Set("mode", "ro")
	rq.Set("_busy_timeout", "10000")
	rq.Set("_query_only", "1")
	r, err := sql.Open("sqlite3", "file:"+abs+"?"+rq.Encode())
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(8)
	db.r = r
	return db, nil
}

// writerDSN is the writer's connection string. Per-connection settings live
// in the DSN so that every pooled connection has them. synchronous=FULL: a
// committed game survives a power cut, not only a crash of the process.
func writerDSN(abs string) string {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_busy_timeout", "10000")
	q.Set("_foreign_keys", "on")
	q.Set("_txlock", "immediate")
	return "file:" + abs + "?" + q.Encode()
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// Close closes the database.
func (db *DB) Close() error {
	return errors.Join(db.r.Close(), db.w.Close())
}

// migrate applies the embedded migrations not yet applied, all in one
// transaction: a server stopped midway leaves the schema as it was, and a new
// database costs one commit (one fsync under synchronous=FULL) rather than one
// a migration.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return err
	}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, name := range names {
			v, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
			if err != nil {
				return fmt.Errorf("migration %s: name must start with a number", name)
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, v).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				continue
			}
			body, err := fs.ReadFile(migrations.FS, name)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, v, name, now()); err != nil {
				return err
			}
		}
		return nil
	})
}

// write runs fn in a write transaction and commits it.
func (db *DB) write(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return classify(err)
	}
	return classify(tx.Commit())
}

// read runs fn in a read transaction, so that its queries see one snapshot.
func (db *DB) read(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return classify(err)
	}
	defer tx.Rollback()
	return classify(fn(tx))
}

// classify turns the errors of a database the server cannot use (a full
// disk, a read-only or failing file, a lock held too long) into errors with a
// code and a message that names no server path; the cause stays wrapped for
// the log. Other errors are returned as they are.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOSPC), sqliteFull(err):
		return &games.Error{Code: games.ENoSpace, Message: "the server's disk is full: the database cannot store anything until space is freed", Err: err}
	}
	if why, ok := sqliteUnavailable(err); ok {
		return &games.Error{Code: games.EUnavailable, Message: "the database is unavailable: " + why, Err: err}
	}
	return err
}

// CheckWrite commits a write, which /healthz uses to tell a database it can
// read from one it can store games in.
func (db *DB) CheckWrite(ctx context.Context) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('health_checked_at', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.FormatInt(now(), 10))
		return err
	})
}

// Checkpoint copies the WAL into the database file (for backups and tests).
func (db *DB) Checkpoint(ctx context.Context) error {
	_, err := db.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// Setting returns a stored server setting, "" if unset.
func (db *DB) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := db.r.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetSetting stores a server setting.
func (db *DB) SetSetting(ctx context.Context, key, value string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
}

// DeleteSetting removes a stored server setting.
func (db *DB) DeleteSetting(ctx context.Context, key string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, key)
		return err
	})
}

func now() int64 { return time.Now().UnixMilli() }

func msTime(ms sql.NullInt64) *time.Time {
	if !ms.Valid {
		return nil
	}
	t := time.UnixMilli(ms.Int64).UTC()
	return &t
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return classify(db.r.QueryRowContext(ctx, `SELECT 1`).Scan(&one))
}
