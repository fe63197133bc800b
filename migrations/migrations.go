// Package migrations holds the database schema as numbered SQL files, embedded
// in the binary and applied in order at start.
package migrations

import "embed"

// FS holds the migration files, named NNNN_description.sql.
//
//go:embed *.sql
var FS embed.FS
