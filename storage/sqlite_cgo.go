//go:build cgo

package storage

import (
	"errors"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// sqliteFull reports whether SQLite found the disk full.
func sqliteFull(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrFull
}

// sqliteUnavailable reports whether err says the database cannot be used (a
// read-only or failing file, a lock held too long), and SQLite's words for it.
func sqliteUnavailable(err error) (string, bool) {
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrIoErr, sqlite3.ErrReadonly, sqlite3.ErrCantOpen, sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrCorrupt, sqlite3.ErrNotADB, sqlite3.ErrPerm:
			return se.Code.Error(), true
		}
	}
	return "", false
}

func isUnique(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintUnique
}
