package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/taikai-dev/taikai/games"
)

// Moves are stored compactly, because a tournament stores many games: per move
// the cell (y*size+x, or size*size for a pass) and the milliseconds it took, both
// as unsigned varints; a 60-move Othello game at a few seconds a move takes
// about 180 bytes. Colours alternate from black (a pass is a move), so they are
// not stored. The few moves the server made are listed apart, as ply numbers.
// A move along a path (checkers) is written as size*size + 1 + the number of
// landings, then the start cell and each landing's cell, then the
// milliseconds: a value no placing move uses, so older lists read the same.

// encodeMoves returns the move and auto-move blobs; auto is nil if there is none.
func encodeMoves(moves []games.Ply, size int) (blob, auto []byte) {
	blob = make([]byte, 0, len(moves)*3)
	for i, m := range moves {
		cell := size * size
		if !m.Pass {
			cell = m.Y*size + m.X
		}
		if len(m.Path) > 0 && !m.Pass {
			blob = binary.AppendUvarint(blob, uint64(size*size+1+len(m.Path)))
			blob = binary.AppendUvarint(blob, uint64(cell))
			for _, p := range m.Path {
				blob = binary.AppendUvarint(blob, uint64(p.Y*size+p.X))
			}
		} else {
			blob = binary.AppendUvarint(blob, uint64(cell))
		}
		blob = binary.AppendUvarint(blob, uint64(max(m.MS, 0)))
		if m.Auto {
			auto = binary.AppendUvarint(auto, uint64(i))
		}
	}
	return blob, auto
}

// decodeMoves reads what encodeMoves wrote.
func decodeMoves(blob, auto []byte, size int) ([]games.Ply, error) {
	var moves []games.Ply
	color := games.Black
	for len(blob) > 0 {
		cell, n := binary.Uvarint(blob)
		if n <= 0 {
			return nil, errors.New("corrupt move list")
		}
		blob = blob[n:]
		var path []games.Point
		if cell > uint64(size*size) {
			k := cell - uint64(size*size) - 1
			if k > uint64(len(blob)) {
				return nil, errors.New("corrupt move list: path too long")
			}
			pts := make([]uint64, k+1)
			for i := range pts {
				if pts[i], n = binary.Uvarint(blob); n <= 0 || pts[i] >= uint64(size*size) {
					return nil, errors.New("corrupt move list: bad path")
				}
				blob = blob[n:]
			}
			cell = pts[0]
			for _, c := range pts[1:] {
				path = append(path, games.Point{X: int(c) % size, Y: int(c) / size})
			}
		}
		ms, n := binary.Uvarint(blob)
		if n <= 0 {
			return nil, errors.New("corrupt move list")
		}
		blob = blob[n:]
		m := games.Ply{Color: color, MS: int64(ms), Move: games.Move{Path: path}}
		switch {
		case cell == uint64(size*size):
			m.Pass, m.X, m.Y = true, -1, -1
		case cell < uint64(size*size):
			m.X, m.Y = int(cell)%size, int(cell)/size
		default:
			return nil, fmt.Errorf("corrupt move list: cell %d on a %dx%d board", cell, size, size)
		}
		moves = append(moves, m)
		color = color.Opponent()
	}
	for len(auto) > 0 {
		ply, n := binary.Uvarint(auto)
		if n <= 0 || ply >= uint64(len(moves)) {
			return nil, errors.New("corrupt auto-move list")
		}
		auto = auto[n:]
		moves[ply].Auto = true
	}
	return moves, nil
}

// EncodedSize is the number of bytes a move list takes in the store.
func EncodedSize(moves []games.Ply, size int) int {
	blob, auto := encodeMoves(moves, size)
	return len(blob) + len(auto)
}

// notesJSON is the move_notes column: ply number (from 1) to note, nil when
// no move has one.
func notesJSON(moves []games.Ply) (any, error) {
	notes := map[string]string{}
	for i, m := range moves {
		if m.Note != "" {
			notes[strconv.Itoa(i+1)] = m.Note
		}
	}
	if len(notes) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(notes)
	return string(b), err
}

// applyNotes puts the move_notes column back on the moves.
func applyNotes(moves []games.Ply, text string) error {
	if text == "" {
		return nil
	}
	var notes map[string]string
	if err := json.Unmarshal([]byte(text), &notes); err != nil {
		return fmt.Errorf("move notes: %w", err)
	}
	for k, v := range notes {
		if ply, err := strconv.Atoi(k); err == nil && ply >= 1 && ply <= len(moves) {
			moves[ply-1].Note = v
		}
	}
	return nil
}
