// Package protocol is the toolkit of the wire-protocol adapters (one package
// each below this one): a line reader under the common limits of
// PROTOCOLS.md, the reader goroutine every adapter shares, and the helpers
// they write with. An adapter turns an engine's stream into an engines.Seat;
// the referee drives seats and knows nothing of wire formats, and an adapter
// knows nothing of tournaments.
package protocol

import (
	"strconv"

	"github.com/taikai-dev/taikai/engines"
)

// AppendEnd appends the end line both Othello protocols send:
// "END <word> <own> <opp> <reason>".
func AppendEnd(b []byte, word string, e engines.Ending, reason string) []byte {
	b = append(b, "END "...)
	b = append(b, word...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(e.Own), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(e.Opp), 10)
	b = append(b, ' ')
	b = append(b, reason...)
	return append(b, '\n')
}
