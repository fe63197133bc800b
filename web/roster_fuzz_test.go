package web

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/games"
	"golang.org/x/text/encoding/japanese"
)

// The class-roster reader on any bytes: it never panics; it either refuses
// the file with an invalid-csv error that names a line (or the whole file),
// or returns at least one and at most maxCSVNames names, each a valid name
// (with a valid number), no two the same without case, on increasing lines.
func FuzzParseNames(f *testing.F) {
	sjis, _ := japanese.ShiftJIS.NewEncoder().String("学籍番号,氏名\r\n6321130,高橋 一郎\r\n")
	for _, s := range []string{
		"Alice\nBob\n",
		"\ufeffname\r\nAlice\r\nBob\r\n",
		"\ufeff学籍番号,氏名\r\n6321120,山田 太郎\r\n6321121,鈴木 花子\r\n",
		sjis,
		"名前,id,メール\n佐藤 次郎,A-17,x@example.com\n",
		"a,b\n1,2\n",
		"name\nalice\nALICE\n",
		"name,id\n\"quoted, name\",\"x\"\"y\"\n\n,\n",
		"\"unterminated\nx",
		"name\n\x01ctl\n",
		"id,name\n1\n",
		"\xff\xfe\x00b",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		list, lines, err := parseNames(bytes.NewReader(data))
		if err != nil {
			var ge *games.Error
			if !errors.As(err, &ge) || ge.Code != games.EInvalid || ge.Field != "csv" {
				t.Fatalf("error %v (%T): want an invalid csv error", err, err)
			}
			if list != nil || lines != nil {
				t.Fatalf("an error with %d names", len(list))
			}
			return
		}
		if len(list) == 0 || len(list) > maxCSVNames || len(lines) != len(list) {
			t.Fatalf("%d names on %d lines", len(list), len(lines))
		}
		seen := map[string]bool{}
		for i, e := range list {
			if err := checkParticipantName(e.Name); err != nil {
				t.Fatalf("name %q accepted: %v", e.Name, err)
			}
			if err := checkParticipantNumber(e.Number); err != nil {
				t.Fatalf("number %q accepted: %v", e.Number, err)
			}
			if e.Name != strings.TrimSpace(e.Name) {
				t.Fatalf("name %q not trimmed", e.Name)
			}
			k := strings.ToLower(e.Name)
			if seen[k] {
				t.Fatalf("name %q twice", e.Name)
			}
			seen[k] = true
			if lines[i] < 1 || (i > 0 && lines[i] <= lines[i-1]) {
				t.Fatalf("lines %v", lines)
			}
		}
	})
}
