package engines

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// OneLine is text from one engine made fit to pass to another (chat, nicknames,
// move notes): a single line of printable text. Every rune that is not
// printable (CR, LF, tab and the other control characters, the Unicode line and
// paragraph separators, format characters) and every byte that is not valid
// UTF-8 becomes one space: a client that ends lines at CR, or at U+2028, then
// reads one line where the sender meant several, and words stay apart.
func OneLine(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// OneLineNotes is OneLine of each of a move's notes, which come one a line
// (an engine may send several before its move): each note stays one line.
func OneLineNotes(notes string) string {
	lines := strings.Split(notes, "\n")
	for i, l := range lines {
		lines[i] = OneLine(l)
	}
	return strings.Join(lines, "\n")
}
