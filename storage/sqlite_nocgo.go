//go:build !cgo

package storage

// Built without cgo (CGO_ENABLED=0, as CI type-checks macOS), go-sqlite3 is
// its stub: sql.Open succeeds and every query fails with its own message
// ("Binary was compiled with 'CGO_ENABLED=0', go-sqlite3 requires cgo to
// work"), so Open fails with that and there are no SQLite errors to read.

func sqliteFull(error) bool { return false }

func sqliteUnavailable(error) (string, bool) { return "", false }

func isUnique(error) bool { return false }
